//! Structured errors of the control protocol: a stable code, a message that
//! names what was wrong, and a hint that says what to do next.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Stable error codes; scripts match on these, the CLI maps them to exit
/// codes (see `docs/cli.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request is not valid JSON or not a known op with valid args.
    BadRequest,
    /// The client speaks another protocol version.
    UnsupportedVersion,
    /// The request or message is over a size limit.
    TooLarge,
    /// A name, group or id broke its rules.
    InvalidName,
    /// A peer or message does not exist.
    NotFound,
    /// One or more targets cannot receive from this sender.
    TargetsRefused,
    /// The sender is not a member of the group.
    NotMember,
    /// The thing already exists.
    AlreadyExists,
    /// The request conflicts with current state (e.g. unread messages).
    Conflict,
    /// Part of the daemon is restarting or shutting down; retry shortly.
    Unavailable,
    /// The operation is not enabled on this daemon.
    Forbidden,
    /// A wait ended before what it waited for.
    TimedOut,
    /// A bug or a failed disk write; the daemon's log says more.
    Internal,
}

impl ErrorCode {
    /// The code as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "bad_request",
            Self::UnsupportedVersion => "unsupported_version",
            Self::TooLarge => "too_large",
            Self::InvalidName => "invalid_name",
            Self::NotFound => "not_found",
            Self::TargetsRefused => "targets_refused",
            Self::NotMember => "not_member",
            Self::AlreadyExists => "already_exists",
            Self::Conflict => "conflict",
            Self::Unavailable => "unavailable",
            Self::Forbidden => "forbidden",
            Self::TimedOut => "timed_out",
            Self::Internal => "internal",
        }
    }
}

/// An error answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ControlError {
    /// Stable code.
    pub code: ErrorCode,
    /// What was wrong, naming the offending value.
    pub message: String,
    /// What to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Machine-readable detail (e.g. each refused target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
}

impl ControlError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            details: None,
        }
    }

    /// Adds what to do next.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds machine-readable detail.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// A part of the daemon is not available right now.
    pub fn unavailable(what: &str) -> Self {
        Self::new(
            ErrorCode::Unavailable,
            format!("{what} is restarting or shutting down"),
        )
        .with_hint("retry in a moment; `flotilla host status` shows each actor's state")
    }

    /// An internal failure.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
            .with_hint("see the daemon's log under the home's logs/ directory")
    }
}

impl From<crate::names::NameError> for ControlError {
    fn from(e: crate::names::NameError) -> Self {
        Self::new(ErrorCode::InvalidName, e.to_string())
    }
}
