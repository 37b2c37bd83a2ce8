//! The hub's local control socket: how `flotilla hub roster` on the hub's
//! machine asks the running hub. One JSON request per line
//! (`{"op":"hub.roster"}`), one JSON answer per line.
//!
//! Owns the socket (created owner-only, 0600) and the request shapes. Only
//! reads from the core; must not change the roster or queues.

use std::path::Path;
use std::time::Duration;

use ractor::rpc::CallResult;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::core::{CoreMsg, CoreRef};
use crate::view::HubRosterReply;

/// How long a request may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// A request on the hub's control socket.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op")]
pub enum HubRequest {
    /// The operator's roster.
    #[serde(rename = "hub.roster")]
    Roster,
}

/// An answer: the result, or an error for a person. A client may read the
/// roster as any shape that its JSON fits ([`roster_as`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HubAnswer<R = HubRosterReply> {
    /// The roster.
    Roster(R),
    /// What went wrong.
    Error(String),
}

/// Why the control socket could not be served or asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubControlError {
    /// No hub answers at the socket.
    #[error(
        "no hub is running from this home (nothing answers at {path}: {source}); start it with `flotilla hub run`"
    )]
    NotRunning {
        /// The socket.
        path: String,
        /// The OS reason.
        source: std::io::Error,
    },
    /// The exchange failed.
    #[error("the hub's control socket failed: {0}")]
    Io(#[from] std::io::Error),
    /// The hub answered something unreadable.
    #[error("the hub answered something this flotilla cannot read ({0}); run the same release")]
    Decode(#[from] serde_json::Error),
    /// The hub reported an error.
    #[error("the hub refused: {0}")]
    Refused(String),
}

/// Binds the socket at `path` (replacing a stale one), owner-only.
pub fn bind(path: &Path) -> Result<UnixListener, std::io::Error> {
    UnixListener::from_std(flotilla_actors::private_file::bind_socket(path)?)
}

/// Serves requests until the task is dropped.
pub async fn serve(listener: UnixListener, core: CoreRef) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let core = core.clone();
        tokio::spawn(async move {
            if let Err(e) = answer(stream, core).await {
                tracing::debug!("hub control client: {e}");
            }
        });
    }
}

async fn answer(stream: UnixStream, core: CoreRef) -> Result<(), HubControlError> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    while let Some(line) = lines.next_line().await? {
        let answer: HubAnswer = match serde_json::from_str::<HubRequest>(&line) {
            Ok(HubRequest::Roster) => {
                match core.call(CoreMsg::Roster, Some(ANSWER_TIMEOUT)).await {
                    Ok(CallResult::Success(Ok(roster))) => {
                        // `HubAnswer::Roster`, with the roster as the core
                        // wrote it.
                        for part in [ROSTER_HEAD, &roster, ANSWER_TAIL] {
                            write.write_all(part).await?;
                        }
                        continue;
                    }
                    Ok(CallResult::Success(Err(e))) => HubAnswer::Error(e),
                    _ => HubAnswer::Error("the hub did not answer in time".into()),
                }
            }
            Err(e) => HubAnswer::Error(format!("bad request: {e}")),
        };
        let mut out = serde_json::to_vec(&answer)?;
        out.push(b'\n');
        write.write_all(&out).await?;
    }
    Ok(())
}

/// What comes before and after a roster's JSON in its answer's line.
const ROSTER_HEAD: &[u8] = b"{\"roster\":";
const ANSWER_TAIL: &[u8] = b"}\n";

/// Asks the hub at `path` for its roster.
pub async fn roster(path: &Path) -> Result<HubRosterReply, HubControlError> {
    roster_as(path).await
}

/// Asks the hub at `path` for its roster and reads it as `R`: any shape its
/// JSON fits, such as a few of its fields (what is not asked for is
/// skipped, not kept).
pub async fn roster_as<R: serde::de::DeserializeOwned>(path: &Path) -> Result<R, HubControlError> {
    match serde_json::from_str(&ask_roster(path).await?)? {
        HubAnswer::Roster(r) => Ok(r),
        HubAnswer::Error(e) => Err(HubControlError::Refused(e)),
    }
}

/// Asks the hub at `path` for its roster and writes it through `into` as
/// the hub wrote it (a `flotilla.hub-roster.v1` object), read once and not
/// into types: for a caller that only passes it on (a roster of 1,000
/// hosts is megabytes).
pub async fn roster_to<S: serde::Serializer>(path: &Path, into: S) -> Result<(), HubControlError> {
    let line = ask_roster(path).await?;
    transcode_answer(&line, into)
}

/// Reads an answer's line and passes its roster to `into`.
fn transcode_answer<S: serde::Serializer>(line: &str, into: S) -> Result<(), HubControlError> {
    use serde::Deserializer as _;
    let mut from = serde_json::Deserializer::from_str(line);
    let refused = from.deserialize_map(transcode::AnswerVisitor(into))?;
    from.end()?;
    refused.map_or(Ok(()), |e| Err(HubControlError::Refused(e)))
}

#[path = "control_transcode.rs"]
mod transcode;

/// Sends the roster request; returns the answer's line, not read yet.
async fn ask_roster(path: &Path) -> Result<String, HubControlError> {
    let stream = UnixStream::connect(path)
        .await
        .map_err(|source| HubControlError::NotRunning {
            path: path.display().to_string(),
            source,
        })?;
    let (read, mut write) = stream.into_split();
    let mut request = serde_json::to_vec(&HubRequest::Roster)?;
    request.push(b'\n');
    write.write_all(&request).await?;
    let mut line = String::new();
    tokio::time::timeout(ANSWER_TIMEOUT, BufReader::new(read).read_line(&mut line))
        .await
        .map_err(|_| HubControlError::Refused("no answer in time".into()))??;
    Ok(line)
}
