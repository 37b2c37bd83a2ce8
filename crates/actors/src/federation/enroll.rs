//! Enrollment and renewal, without IO: the token, the frames of the
//! enrollment channel, and the hub's decisions as plain functions that take
//! `now`.
//!
//! Owns what makes a join acceptable (a pending invite, the right secret,
//! not expired, the invited host) and when a host should renew. The hub's
//! files (invites, issued certificates), QUIC and TLS belong to the hub
//! crate; this module must not touch them or read the clock.
//!
//! The enrollment channel is its own QUIC port (ALPN `flotilla-enroll/1`,
//! no client certificate required), one request and one reply per
//! connection:
//!
//! ```text
//! host (token)                                hub
//!  |-- EnrollRequest {token_id, secret, host, csr} -->|  decide_enrollment(invite, req, now)
//!  |<------------ EnrollReply::Issued | Refused ------|  consume the invite, sign the CSR
//!
//! host (current client certificate)           hub
//!  |-- RenewRequest {csr} --------------------------->|  name from the verified certificate
//!  |<------------ EnrollReply::Issued | Refused ------|
//! ```

mod token;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use token::{
    EnrollToken, SECRET_LEN, TOKEN_PREFIX, TokenError, base64url_decode, base64url_encode,
};

use crate::names::HostName;

/// The ALPN identifier of the enrollment channel.
pub const ENROLL_ALPN: &[u8] = b"flotilla-enroll/1";
/// The largest enrollment frame: a CSR and a few certificates fit easily.
pub const MAX_ENROLL_FRAME: usize = 64 * 1024;

/// One frame on the enrollment channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EnrollFrame {
    /// Host to hub: enroll with a token.
    EnrollRequest(EnrollRequest),
    /// Host to hub, over a connection with the host's current certificate:
    /// sign a new certificate for the name in that certificate.
    RenewRequest(RenewRequest),
    /// Hub to host: the answer to either request.
    EnrollReply(EnrollReply),
}

/// A host's enrollment request.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrollRequest {
    /// The token's id.
    pub token_id: String,
    /// The token's secret, raw bytes.
    pub secret: Vec<u8>,
    /// The host the token is for (and the CSR asks for).
    pub host: HostName,
    /// The host's CSR, PEM; its key stays on the host.
    pub csr_pem: String,
}

impl std::fmt::Debug for EnrollRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnrollRequest")
            .field("token_id", &self.token_id)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// A host's renewal request. It names no one: the hub signs for the name in
/// the verified client certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenewRequest {
    /// The new CSR, PEM (a fresh key).
    pub csr_pem: String,
}

/// The hub's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EnrollReply {
    /// The certificate and what the host needs to link.
    Issued(IssuedCertificate),
    /// Refused, and why.
    Refused(EnrollRefused),
}

/// A certificate issued to an enrolling or renewing host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedCertificate {
    /// The host's certificate, PEM.
    pub cert_pem: String,
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The hub's main addresses, `HOST:PORT`.
    pub hub_addrs: Vec<String>,
    /// The hub's name.
    pub hub_name: String,
    /// The certificate's last valid second, Unix time.
    pub not_after_unix: u64,
}

/// A refusal on the enrollment channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrollRefused {
    /// What kind, for the host to act on.
    pub code: EnrollRefusalCode,
    /// The hub's explanation, for a person.
    pub reason: String,
}

/// Why a hub refused an enrollment or renewal. New codes go at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EnrollRefusalCode {
    /// No such token (or the wrong secret for it).
    UnknownToken,
    /// The token was already used.
    TokenUsed,
    /// The token expired.
    TokenExpired,
    /// The request or its CSR names another host than the token.
    WrongHost,
    /// The request is malformed (a bad CSR, an unexpected frame).
    BadRequest,
    /// A renewal without a valid client certificate.
    NotAuthenticated,
    /// The hub failed (its files, its CA).
    Internal,
}

impl EnrollRefusalCode {
    /// A stable snake_case name, for JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownToken => "token_unknown",
            Self::TokenUsed => "token_used",
            Self::TokenExpired => "token_expired",
            Self::WrongHost => "wrong_host",
            Self::BadRequest => "bad_request",
            Self::NotAuthenticated => "not_authenticated",
            Self::Internal => "hub_failed",
        }
    }
}

/// The hub's record of one pending invite: never the secret, only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invite {
    /// The host it enrolls.
    pub host: HostName,
    /// SHA-256 of the secret, lowercase hex.
    pub secret_sha256: String,
    /// When it was made, Unix seconds.
    pub created_unix: u64,
    /// Its last valid second, Unix seconds.
    pub expires_unix: u64,
}

/// What the hub knows of a token id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InviteState {
    /// Not used yet.
    Pending(Invite),
    /// Already used by an enrollment.
    Used,
    /// No record.
    Unknown,
}

/// Why an enrollment is refused: the decision, with a message for a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnrollRefusal {
    /// Unknown token or wrong secret (not told apart, so ids cannot be probed).
    #[error(
        "the hub knows no such enrollment token; ask the hub operator for a new one: flotilla hub invite {host}"
    )]
    UnknownToken {
        /// The host that asked.
        host: String,
    },
    /// Already used.
    #[error(
        "this enrollment token was already used (tokens work once); ask the hub operator for a new one: flotilla hub invite {host}"
    )]
    TokenUsed {
        /// The host that asked.
        host: String,
    },
    /// Expired.
    #[error(
        "this enrollment token expired; ask the hub operator for a new one: flotilla hub invite {host}"
    )]
    TokenExpired {
        /// The host that asked.
        host: String,
    },
    /// For another host.
    #[error(
        "this enrollment token is for host {invited:?}, not {asked:?}; join with the token made for this host \
         (flotilla hub invite {asked})"
    )]
    WrongHost {
        /// The host the token is for.
        invited: String,
        /// The host that asked.
        asked: String,
    },
}

impl EnrollRefusal {
    /// The code sent to the host.
    pub fn code(&self) -> EnrollRefusalCode {
        match self {
            Self::UnknownToken { .. } => EnrollRefusalCode::UnknownToken,
            Self::TokenUsed { .. } => EnrollRefusalCode::TokenUsed,
            Self::TokenExpired { .. } => EnrollRefusalCode::TokenExpired,
            Self::WrongHost { .. } => EnrollRefusalCode::WrongHost,
        }
    }

    /// The reply that tells the host.
    pub fn to_reply(&self) -> EnrollReply {
        refused(self.code(), self.to_string())
    }
}

/// A refusal reply.
pub fn refused(code: EnrollRefusalCode, reason: impl Into<String>) -> EnrollReply {
    EnrollReply::Refused(EnrollRefused {
        code,
        reason: reason.into(),
    })
}

/// SHA-256 of a secret, lowercase hex: what the hub stores.
pub fn secret_digest(secret: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, secret);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal without an early exit, so timing does not tell how much matched.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Seconds since the Unix epoch (0 before it).
pub fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Whether the hub may issue for `request`, given what it knows of the
/// token. The token is consumed by the caller only after this says yes.
pub fn decide_enrollment(
    state: &InviteState,
    request: &EnrollRequest,
    now: SystemTime,
) -> Result<(), EnrollRefusal> {
    let host = request.host.as_str().to_owned();
    let invite = match state {
        InviteState::Unknown => return Err(EnrollRefusal::UnknownToken { host }),
        InviteState::Used => return Err(EnrollRefusal::TokenUsed { host }),
        InviteState::Pending(invite) => invite,
    };
    let digest = secret_digest(&request.secret);
    if !same_bytes(digest.as_bytes(), invite.secret_sha256.as_bytes()) {
        return Err(EnrollRefusal::UnknownToken { host });
    }
    if unix_seconds(now) > invite.expires_unix {
        return Err(EnrollRefusal::TokenExpired { host });
    }
    if invite.host != request.host {
        return Err(EnrollRefusal::WrongHost {
            invited: invite.host.as_str().to_owned(),
            asked: host,
        });
    }
    Ok(())
}

/// Whether a certificate valid from `not_before` to `not_after` should be
/// renewed at `now`: when less than a third of its validity remains (or it
/// has expired).
pub fn renewal_due(not_before: SystemTime, not_after: SystemTime, now: SystemTime) -> bool {
    let total = not_after
        .duration_since(not_before)
        .unwrap_or(Duration::ZERO);
    let left = not_after.duration_since(now).unwrap_or(Duration::ZERO);
    left.is_zero() || left < total / 3
}

#[cfg(test)]
mod tests;
