//! One client connection: read a request line, dispatch it, write the
//! response line, until the client hangs up; a request that asks for
//! pipelining hands the connection to [`super::pipelined`].
//!
//! A malformed or unknown request gets a structured error and the
//! connection stays usable; an oversized line is skipped to its end and
//! answered with `too_large`; a client of another user, a stream that ends
//! mid-line, or one idle too long is dropped, and one that hangs up while
//! its request waits releases the wait at once. Nothing here can stop the
//! daemon or stall other clients.

use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::protocol::{
    ControlError, ErrorCode, LineBudget, LineError, Request, RequestFrame, ResponseFrame,
    read_line_within,
};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::dispatch::dispatch_held;
use crate::context::HostContext;

/// A connection that sends no complete request for this long is closed.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest request line this daemon reads: room for the largest
/// message, even if every byte of it is escaped in JSON.
pub(crate) fn line_limit(ctx: &HostContext) -> usize {
    flotilla_actors::protocol::DEFAULT_MAX_LINE.max(ctx.config.max_message_bytes * 6 + 64 * 1024)
}

/// What every connection together may hold in partial request lines: four
/// of the largest requests (32 MiB at the defaults), so twenty clients each
/// sending an endless line cannot grow the daemon past it.
pub(super) fn line_budget(ctx: &HostContext) -> LineBudget {
    LineBudget::new(4 * line_limit(ctx))
}

pub(super) async fn serve(stream: UnixStream, ctx: Arc<HostContext>, budget: Arc<LineBudget>) {
    if !same_user(&stream) {
        tracing::warn!("refused a control connection from another user");
        return;
    }
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let limit = line_limit(&ctx);
    loop {
        let reading = read_line_within(&mut read, limit, Some(&budget));
        let line = match tokio::time::timeout(IDLE_TIMEOUT, reading).await {
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) | Err(_) => return,
            Ok(Err(e)) => match line_error_frame(&e) {
                Some(frame) => {
                    if respond(&mut write, frame).await.is_err() {
                        return;
                    }
                    continue;
                }
                None => {
                    tracing::debug!(error = %e, "control client dropped mid-request");
                    return;
                }
            },
        };
        let mut handed = None;
        let response = match RequestFrame::parse_with_mode(&line) {
            Ok((id, request, true)) => {
                let first = (id, request);
                return super::pipelined::serve(ctx, read, write, budget, first).await;
            }
            Ok((id, mut request, false)) => {
                let op = request.name();
                if let Request::LaneStart(a) = &mut request {
                    // Only the hub link sets a remote owner.
                    a.owner = None;
                }
                // A client that hangs up while its request waits (a
                // long-poll `inbox.fetch`, `lane wait`) releases it at once.
                let (outcome, handout) = tokio::select! {
                    outcome = dispatch_held(&ctx, request) => outcome,
                    () = hung_up(&mut read) => {
                        tracing::debug!(op, "the client hung up while its request waited");
                        return;
                    }
                };
                handed = handout;
                match outcome {
                    Ok(result) => ResponseFrame::ok(id, result),
                    Err(err) => {
                        tracing::debug!(op, code = err.code.as_str(), message = %err.message, "request refused");
                        ResponseFrame::err(id, err)
                    }
                }
            }
            Err(refused) => ResponseFrame::err(refused.id, refused.error),
        };
        if respond(&mut write, response).await.is_err() {
            // A lane result not written stays collectable.
            return;
        }
        if let Some(handout) = handed {
            handout.confirm();
        }
    }
}

/// The answer to a line that could not be read as a request (too long, or
/// over the shared budget; the connection stays usable), or `None` when
/// the connection must end.
pub(super) fn line_error_frame(e: &LineError) -> Option<ResponseFrame> {
    let err = match e {
        LineError::TooLong { limit } => ControlError::new(
            ErrorCode::TooLarge,
            format!("request line is longer than the limit of {limit} bytes"),
        )
        .with_hint("send smaller messages; max_message_bytes in config.toml sets the limit"),
        LineError::Busy { budget } => ControlError::new(
            ErrorCode::Unavailable,
            format!("the daemon is reading {budget} bytes of other clients' requests, the most it holds at once; this request was skipped"),
        )
        .with_hint("retry in a moment"),
        _ => return None,
    };
    Some(ResponseFrame::err(Value::Null, err))
}

/// Resolves when the client has closed its end; never while it only sends
/// more (that waits for the next request).
async fn hung_up<R: tokio::io::AsyncBufRead + Unpin>(read: &mut R) {
    use tokio::io::AsyncBufReadExt;
    match read.fill_buf().await {
        Ok([]) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

pub(super) async fn respond(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    frame: ResponseFrame,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(&frame).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write.write_all(&bytes).await?;
    write.flush().await
}

fn same_user(stream: &UnixStream) -> bool {
    match stream.peer_cred() {
        Ok(cred) => {
            let me = rustix::process::geteuid().as_raw();
            cred.uid() == me || cred.uid() == 0
        }
        Err(_) => false,
    }
}
