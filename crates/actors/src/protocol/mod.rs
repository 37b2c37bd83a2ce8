//! The local control protocol: typed requests and responses carried over the
//! daemon's Unix socket as JSON lines.
//!
//! A request line is `{"v":1,"id":ID,"op":OP,"args":{...}}`; the answer is
//! `{"v":1,"id":ID,"ok":true,"result":{...}}` or
//! `{"v":1,"id":ID,"ok":false,"error":{"code":...,"message":...,"hint":...}}`.
//! `docs/protocol.md` documents every op. This module owns the framing rules
//! and the types; it does no IO (the host's control server and the CLI's
//! client do).

mod claims;
mod error;
mod fleet;
mod lane_files;
mod lane_hold;
mod lanes;
mod lines;
mod mail_ops;
mod ops;
mod outbox;
mod peer_ops;
mod ready;
mod remote;
mod status;

pub use claims::*;
pub use error::{ControlError, ErrorCode};
pub use fleet::*;
pub use lane_files::*;
pub use lane_hold::*;
pub use lanes::*;
pub use lines::{LineBudget, LineError, read_line, read_line_within};
pub use mail_ops::*;
pub use ops::*;
pub use outbox::*;
pub use peer_ops::*;
pub use ready::*;
pub use remote::*;
pub use status::*;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest request line the daemon reads, when no larger message limit is
/// configured: room for a 1 MiB message body escaped as JSON.
pub const DEFAULT_MAX_LINE: usize = 8 * 1024 * 1024;

/// One typed operation: its name on the wire and the type of its result.
pub trait Op: Serialize + DeserializeOwned {
    /// The `op` field.
    const NAME: &'static str;
    /// What a successful call returns in `result`.
    type Reply: Serialize + DeserializeOwned;
}

/// A request line before its `args` are interpreted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestFrame {
    /// Protocol version of the client.
    pub v: u32,
    /// Chosen by the client, echoed in the response.
    #[serde(default)]
    pub id: Value,
    /// The operation's name.
    pub op: String,
    /// The operation's arguments.
    #[serde(default)]
    pub args: Value,
    /// Puts the connection in pipelined mode from this request on: the
    /// daemon reads on without waiting for answers and answers each
    /// request when it completes, in any order (`docs/protocol.md`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pipeline: bool,
}

impl RequestFrame {
    /// Wraps a typed op.
    pub fn new<O: Op>(id: impl Into<Value>, op: &O) -> Result<Self, serde_json::Error> {
        Ok(Self {
            v: PROTOCOL_VERSION,
            id: id.into(),
            op: O::NAME.to_owned(),
            args: serde_json::to_value(op)?,
            pipeline: false,
        })
    }

    /// Parses one line: JSON, version check, then the op and its args.
    /// Errors carry the request id when it could be read.
    pub fn parse(line: &[u8]) -> Result<(Value, Request), Box<FrameError>> {
        Self::parse_with_mode(line).map(|(id, request, _)| (id, request))
    }

    /// [`RequestFrame::parse`], with the request's `pipeline` flag.
    pub fn parse_with_mode(line: &[u8]) -> Result<(Value, Request, bool), Box<FrameError>> {
        let refuse = |id: Value, error: ControlError| Box::new(FrameError { id, error });
        let frame: RequestFrame = serde_json::from_slice(line).map_err(|e| {
            refuse(
                Value::Null,
                ControlError::new(ErrorCode::BadRequest, format!("malformed request: {e}"))
                    .with_hint("send one JSON object per line: {\"v\":1,\"id\":1,\"op\":\"host.status\",\"args\":{}}"),
            )
        })?;
        if frame.v != PROTOCOL_VERSION {
            let err = ControlError::new(
                ErrorCode::UnsupportedVersion,
                format!(
                    "protocol version {} is not supported; this daemon speaks version {PROTOCOL_VERSION}",
                    frame.v
                ),
            )
            .with_hint("use a flotilla client of the same release as the daemon");
            return Err(refuse(frame.id, err));
        }
        match Request::from_parts(&frame.op, frame.args) {
            Ok(req) => Ok((frame.id, req, frame.pipeline)),
            Err(err) => Err(refuse(frame.id, err)),
        }
    }
}

/// A request line that could not be accepted, with its id when known.
#[derive(Debug, Clone)]
pub struct FrameError {
    /// The request's id, or null.
    pub id: Value,
    /// What was wrong.
    pub error: ControlError,
}

/// A response line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResponseFrame {
    /// Protocol version of the daemon.
    pub v: u32,
    /// The request's id.
    pub id: Value,
    /// Whether the op succeeded.
    pub ok: bool,
    /// The result, when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, when not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ControlError>,
}

impl ResponseFrame {
    /// A success.
    pub fn ok(id: Value, result: Value) -> Self {
        Self {
            v: PROTOCOL_VERSION,
            id,
            ok: true,
            result: Some(result),
            error: None,
        }
    }

    /// A failure.
    pub fn err(id: Value, error: ControlError) -> Self {
        Self {
            v: PROTOCOL_VERSION,
            id,
            ok: false,
            result: None,
            error: Some(error),
        }
    }

    /// Interprets the frame as the reply to `O`.
    pub fn into_reply<O: Op>(self) -> Result<O::Reply, ControlError> {
        if let Some(err) = self.error {
            return Err(err);
        }
        let value = self.result.unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|e| {
            ControlError::new(
                ErrorCode::Internal,
                format!("the daemon's answer to {} could not be read: {e}", O::NAME),
            )
            .with_hint("client and daemon are of different releases; restart the daemon with `flotilla down && flotilla up`")
        })
    }
}

/// Serializes a typed reply for a response frame.
pub fn reply_value<T: Serialize>(reply: &T) -> Value {
    serde_json::to_value(reply).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests;
