//! A connection in pipelined mode (entered by a request with
//! `"pipeline": true`, for the rest of the connection): requests are read
//! without waiting for answers, up to [`MAX_IN_FLIGHT`] at a time, and each
//! is answered when it completes, in any order (the client tells answers
//! apart by id).
//!
//! Order: each request is started here, in the order read, and runs until
//! it first waits, so a `send` reaches the router (which fixes its place in
//! its sender's order) before the next request is started. A pipelined
//! call whose actor died is answered `unavailable`, never posted again
//! behind later requests; and while the router is missing or has been
//! replaced since the last message op, the next message op waits until
//! every message op in flight is answered. So messages of one sender are stored
//! in the order they were sent, and a client that sends again from its
//! first unanswered or `unavailable` message keeps that order.
//!
//! A reader task reads and parses lines (so a line is never lost to a
//! select); answers are written from this one task. When the client stops
//! sending (end of stream), what is in flight is still answered for
//! [`END_GRACE`], then dropped.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use flotilla_actors::protocol::{ControlError, LineBudget, Request, RequestFrame, ResponseFrame};
use serde_json::Value;
use tokio::io::BufReader;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::connection::{IDLE_TIMEOUT, line_error_frame, line_limit, respond};
use super::dispatch::{PIPELINED, dispatch_held};
use super::lanes::Handout;
use crate::context::HostContext;

/// Requests of one connection in flight at once, at most.
pub(crate) const MAX_IN_FLIGHT: usize = 1024;
/// How long requests in flight are still answered after the client stopped
/// sending; the rest are dropped (a dropped `lane.wait` result stays
/// collectable, an unacknowledged `inbox.fetch` is fetched again).
const END_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

type Outcome = (Result<Value, ControlError>, Option<Handout>);
type Running = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// What the reader hands over: a request, or an answer for a line that was
/// refused before it became one.
type Read = Result<(Value, Request), ResponseFrame>;

/// Serves the connection from `first` (the request that asked for
/// pipelining) until the client stops sending and everything is answered,
/// or an answer cannot be written.
pub(super) async fn serve(
    ctx: Arc<HostContext>,
    read: BufReader<OwnedReadHalf>,
    mut write: OwnedWriteHalf,
    budget: Arc<LineBudget>,
    first: (Value, Request),
) {
    let (tx, mut lines) = mpsc::channel(MAX_IN_FLIGHT);
    let reader = tokio::spawn(read_requests(read, line_limit(&ctx), budget, tx));
    let mut flight = Flight::default();
    let mut next = Some(first);
    let mut reading = true;
    // Set when the client stops sending: what is still in flight then has
    // this long to be answered (a long poll of a client that hung up must
    // not hold its task for its whole wait).
    let mut ending = None;
    loop {
        if let Some((id, request)) = next.take() {
            if let Some(done) = flight.start(&ctx, &mut write, id, request).await
                && answer(&mut write, done).await.is_err()
            {
                break;
            }
            continue;
        }
        if !reading && flight.len() == 0 {
            break;
        }
        tokio::select! {
            read = lines.recv(), if reading && flight.len() < MAX_IN_FLIGHT => match read {
                Some(Ok(request)) => next = Some(request),
                Some(Err(refused)) => {
                    if respond(&mut write, refused).await.is_err() {
                        break;
                    }
                }
                None => {
                    reading = false;
                    ending = Some(tokio::time::Instant::now() + END_GRACE);
                }
            },
            Some(done) = flight.messages.join_next(), if !flight.messages.is_empty() => {
                let Ok(done) = done else { continue };
                if answer(&mut write, done).await.is_err() {
                    break;
                }
            }
            Some(done) = flight.others.join_next(), if !flight.others.is_empty() => {
                let Ok(done) = done else { continue };
                if answer(&mut write, done).await.is_err() {
                    break;
                }
            }
            () = sleep_until(ending), if ending.is_some() => break,
            else => break,
        }
    }
    reader.abort();
}

/// The requests in flight (message ops apart from the rest), and the
/// router the last message op went to.
#[derive(Default)]
struct Flight {
    messages: JoinSet<(Value, Outcome)>,
    others: JoinSet<(Value, Outcome)>,
    router: Option<ractor::ActorId>,
}

impl Flight {
    fn len(&self) -> usize {
        self.messages.len() + self.others.len()
    }

    /// Starts `request`: its answer if it completed at once, else `None`
    /// (it is in flight).
    async fn start(
        &mut self,
        ctx: &Arc<HostContext>,
        write: &mut OwnedWriteHalf,
        id: Value,
        mut request: Request,
    ) -> Option<(Value, Outcome)> {
        let message_op = is_message_op(&request);
        if message_op {
            let now = ctx.children.router().map(|r| r.get_id());
            if (now.is_none() || now != self.router) && !self.drain(write).await {
                return None;
            }
            self.router = now;
        }
        if let Request::LaneStart(a) = &mut request {
            // Only the hub link sets a remote owner.
            a.owner = None;
        }
        let ctx = ctx.clone();
        let mut running: Running =
            Box::pin(PIPELINED.scope(true, async move { dispatch_held(&ctx, request).await }));
        match poll_once(&mut running).await {
            Poll::Ready(outcome) => Some((id, outcome)),
            Poll::Pending => {
                let set = if message_op {
                    &mut self.messages
                } else {
                    &mut self.others
                };
                set.spawn(async move { (id, running.await) });
                None
            }
        }
    }

    /// Answers every message op in flight; `false` if an answer could not
    /// be written.
    async fn drain(&mut self, write: &mut OwnedWriteHalf) -> bool {
        while let Some(done) = self.messages.join_next().await {
            if let Ok(done) = done
                && answer(write, done).await.is_err()
            {
                return false;
            }
        }
        true
    }
}

/// Ops that write messages, whose order per sender the router fixes.
fn is_message_op(request: &Request) -> bool {
    matches!(
        request,
        Request::Send(_) | Request::Broadcast(_) | Request::Reply(_) | Request::InboxAck(_)
    )
}

/// Polls `running` once, in this task.
async fn poll_once(running: &mut Running) -> Poll<Outcome> {
    std::future::poll_fn(|cx| Poll::Ready(running.as_mut().poll(cx))).await
}

async fn answer(
    write: &mut OwnedWriteHalf,
    (id, (outcome, handout)): (Value, Outcome),
) -> std::io::Result<()> {
    let frame = match outcome {
        Ok(result) => ResponseFrame::ok(id, result),
        Err(err) => ResponseFrame::err(id, err),
    };
    respond(write, frame).await?;
    if let Some(handout) = handout {
        handout.confirm();
    }
    Ok(())
}

/// Reads and parses request lines until the stream ends, fails, or idles
/// too long.
async fn read_requests(
    mut read: BufReader<OwnedReadHalf>,
    limit: usize,
    budget: Arc<LineBudget>,
    tx: mpsc::Sender<Read>,
) {
    use flotilla_actors::protocol::read_line_within;
    loop {
        let reading = read_line_within(&mut read, limit, Some(&budget));
        let read = match tokio::time::timeout(IDLE_TIMEOUT, reading).await {
            Ok(Ok(Some(line))) => match RequestFrame::parse(&line) {
                Ok(request) => Ok(request),
                Err(refused) => Err(ResponseFrame::err(refused.id, refused.error)),
            },
            Ok(Ok(None)) | Err(_) => return,
            Ok(Err(e)) => match line_error_frame(&e) {
                Some(frame) => Err(frame),
                None => return,
            },
        };
        if tx.send(read).await.is_err() {
            return;
        }
    }
}
