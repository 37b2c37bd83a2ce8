//! The client side of the control protocol: connect to a home's daemon and
//! make typed calls. Used by the `flotilla` command and the benchmarks.

use std::path::PathBuf;
use std::time::Duration;

use flotilla_actors::protocol::{
    ControlError, LineError, Op, RequestFrame, ResponseFrame, read_line,
};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::home::Home;

/// Longest response line a client reads.
const MAX_RESPONSE: usize = 256 * 1024 * 1024;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Nothing listens on the home's socket.
    #[error("no flotilla daemon is running for {home} (socket {}); start one with `flotilla up`", socket.display())]
    NotRunning {
        /// The home, for the message.
        home: String,
        /// The socket tried.
        socket: PathBuf,
    },
    /// The daemon refused the request.
    #[error(transparent)]
    Refused(#[from] ControlError),
    /// The connection broke or the daemon answered something unreadable.
    #[error("lost the connection to the daemon: {0}")]
    Connection(String),
}

impl ClientError {
    /// Whether retrying the same request may succeed (the daemon went away
    /// or a part of it is restarting).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::NotRunning { .. } | Self::Connection(_) => true,
            Self::Refused(e) => e.code == flotilla_actors::protocol::ErrorCode::Unavailable,
        }
    }
}

/// A connection to a daemon.
#[derive(Debug)]
pub struct ControlClient {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
}

impl ControlClient {
    /// Connects to the daemon of `home`.
    pub async fn connect(home: &Home) -> Result<Self, ClientError> {
        let socket = home.socket_path();
        let stream = UnixStream::connect(&socket)
            .await
            .map_err(|_| ClientError::NotRunning {
                home: home.label(),
                socket: socket.clone(),
            })?;
        let (read, writer) = stream.into_split();
        Ok(Self {
            reader: BufReader::new(read),
            writer,
            next_id: 1,
        })
    }

    /// Connects, retrying until `patience` has passed (for a daemon that is
    /// starting).
    pub async fn connect_patiently(home: &Home, patience: Duration) -> Result<Self, ClientError> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            match Self::connect(home).await {
                Ok(c) => return Ok(c),
                Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        }
    }

    /// Makes one typed call.
    pub async fn call<O: Op>(&mut self, op: &O) -> Result<O::Reply, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let frame =
            RequestFrame::new(id, op).map_err(|e| ClientError::Connection(e.to_string()))?;
        let mut line =
            serde_json::to_vec(&frame).map_err(|e| ClientError::Connection(e.to_string()))?;
        line.push(b'\n');
        let lost = |e: std::io::Error| ClientError::Connection(e.to_string());
        self.writer.write_all(&line).await.map_err(lost)?;
        self.writer.flush().await.map_err(lost)?;
        let response = match read_line(&mut self.reader, MAX_RESPONSE).await {
            Ok(Some(line)) => line,
            Ok(None) => {
                return Err(ClientError::Connection(
                    "the daemon closed the connection".into(),
                ));
            }
            Err(LineError::Io(e)) => return Err(lost(e)),
            Err(e) => return Err(ClientError::Connection(e.to_string())),
        };
        let frame: ResponseFrame = serde_json::from_slice(&response)
            .map_err(|e| ClientError::Connection(e.to_string()))?;
        Ok(frame.into_reply::<O>()?)
    }
}

mod pipeline;
pub use pipeline::{Answer, Progress, Unfinished, call_pipelined};
