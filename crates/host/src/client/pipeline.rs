//! Many calls on one connection with many in flight (the control
//! protocol's pipelined mode), for `flotilla send --batch` and the
//! benchmarks.
//!
//! Every call is written with its index as its id, in order, at most
//! `window` unanswered at a time. Ops must carry their own idempotency
//! (a message id fixed before the first try): when the connection breaks,
//! or an answer is `unavailable` (the daemon or a part of it restarting),
//! the client stops starting new calls, collects what is still answered,
//! reconnects and sends every call without a final answer again, in
//! order. The daemon stores a message it already has once, so a message of
//! one sender is stored once and in the order of the calls.

use std::collections::HashSet;
use std::time::Duration;

use flotilla_actors::protocol::{
    ControlError, ErrorCode, Op, RequestFrame, ResponseFrame, read_line,
};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;

use super::{ClientError, MAX_RESPONSE};
use crate::home::Home;

/// The final answer to one call.
pub type Answer<R> = Result<R, ControlError>;

/// How far a pipelined run is, for a progress display.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Calls with a final answer.
    pub answered: usize,
    /// Times the connection was made again.
    pub reconnects: u32,
}

/// A pipelined run that gave up: the daemon stayed unreachable with calls
/// unanswered. Each of those may have been done (it may have been handed
/// over before the connection broke).
#[derive(Debug)]
pub struct Unfinished<R> {
    /// Why the last try failed.
    pub error: ClientError,
    /// The final answer of each call, in order; `None`: none came.
    pub answers: Vec<Option<Answer<R>>>,
}

/// Makes every call of `ops`, at most `window` in flight, and returns the
/// final answer of each, in order. Fails only when the daemon stays
/// unreachable for `patience` with calls unanswered, and then returns the
/// answers that came.
pub async fn call_pipelined<O: Op>(
    home: &Home,
    ops: &[O],
    window: usize,
    patience: Duration,
    mut progress: impl FnMut(Progress),
) -> Result<Vec<Answer<O::Reply>>, Unfinished<O::Reply>> {
    let mut answers: Vec<Option<Answer<O::Reply>>> = (0..ops.len()).map(|_| None).collect();
    let mut state = Progress::default();
    let mut pause = Duration::from_millis(20);
    let mut deadline = tokio::time::Instant::now() + patience;
    loop {
        let before = state.answered;
        let run = match UnixStream::connect(home.socket_path()).await {
            Ok(stream) => {
                one_connection(
                    stream,
                    ops,
                    window.max(1),
                    &mut answers,
                    &mut state,
                    &mut progress,
                )
                .await
            }
            Err(_) => Err(ClientError::NotRunning {
                home: home.label(),
                socket: home.socket_path(),
            }),
        };
        if answers.iter().all(Option::is_some) {
            return Ok(answers.into_iter().flatten().collect());
        }
        if state.answered > before {
            deadline = tokio::time::Instant::now() + patience;
            pause = Duration::from_millis(20);
        }
        if tokio::time::Instant::now() >= deadline {
            let error = run
                .err()
                .unwrap_or_else(|| ClientError::Refused(ControlError::unavailable("the daemon")));
            return Err(Unfinished { error, answers });
        }
        tracing::debug!(
            answered = state.answered,
            "pipelined calls: connecting again"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
        state.reconnects += 1;
    }
}

/// Sends every unanswered call once on `stream`, in order, and collects
/// answers until none is outstanding, the connection breaks (`Err`), or an
/// answer says to try again (then it stops starting calls and returns
/// once the rest is in).
async fn one_connection<O: Op>(
    stream: UnixStream,
    ops: &[O],
    window: usize,
    answers: &mut [Option<Answer<O::Reply>>],
    state: &mut Progress,
    progress: &mut impl FnMut(Progress),
) -> Result<(), ClientError> {
    let lost = |e: std::io::Error| ClientError::Connection(e.to_string());
    let (read, write) = stream.into_split();
    let (mut reader, mut writer) = (BufReader::new(read), BufWriter::new(write));
    let mut next = 0;
    let mut outstanding = HashSet::new();
    let mut retry = false;
    loop {
        while !retry && next < ops.len() && outstanding.len() < window {
            if answers[next].is_none() {
                writer
                    .write_all(&request_line(next, &ops[next])?)
                    .await
                    .map_err(lost)?;
                outstanding.insert(next);
            }
            next += 1;
        }
        writer.flush().await.map_err(lost)?;
        if outstanding.is_empty() {
            return Ok(());
        }
        let line = match read_line(&mut reader, MAX_RESPONSE).await {
            Ok(Some(line)) => line,
            Ok(None) => {
                return Err(ClientError::Connection(
                    "the daemon closed the connection".into(),
                ));
            }
            Err(e) => return Err(ClientError::Connection(e.to_string())),
        };
        let frame: ResponseFrame =
            serde_json::from_slice(&line).map_err(|e| ClientError::Connection(e.to_string()))?;
        let Some(index) = frame.id.as_u64().and_then(|i| usize::try_from(i).ok()) else {
            // A line the daemon could not read as a request (over its
            // budget): which call it was is unknown, so start again.
            let why = frame.error.map_or_else(String::new, |e| e.message);
            return Err(ClientError::Connection(format!(
                "the daemon skipped a request: {why}"
            )));
        };
        if !outstanding.remove(&index) {
            continue;
        }
        match frame.into_reply::<O>() {
            Err(e) if e.code == ErrorCode::Unavailable => retry = true,
            answer => {
                answers[index] = Some(answer);
                state.answered += 1;
                progress(*state);
            }
        }
    }
}

fn request_line<O: Op>(index: usize, op: &O) -> Result<Vec<u8>, ClientError> {
    let mut frame = RequestFrame::new(Value::from(index as u64), op)
        .map_err(|e| ClientError::Connection(e.to_string()))?;
    frame.pipeline = true;
    let mut line =
        serde_json::to_vec(&frame).map_err(|e| ClientError::Connection(e.to_string()))?;
    line.push(b'\n');
    Ok(line)
}
