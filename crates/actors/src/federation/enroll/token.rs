//! The enrollment token a hub operator hands to a host: where the hub is,
//! which CA to trust, which host it is for, and a one-time secret.
//!
//! Owns the text format: [`TOKEN_PREFIX`] then base64url (RFC 4648 §5, no
//! padding) of a JSON [`EnrollToken`]. JSON keeps the token readable when
//! decoded by hand; the secret inside is itself base64url. Must not touch
//! files or the network: the hub's store and the host's join do.

use serde::{Deserialize, Serialize};

use crate::names::HostName;
use crate::pki::Fingerprint;

/// What every token starts with; the version is in the prefix.
pub const TOKEN_PREFIX: &str = "flotilla-enroll-v1:";
/// Length of the secret, in bytes.
pub const SECRET_LEN: usize = 32;

/// Why text is not a usable enrollment token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// It does not start with the prefix.
    #[error(
        "this is not a flotilla enrollment token (it must start with {TOKEN_PREFIX:?}); \
         copy the whole line printed by `flotilla hub invite HOST`"
    )]
    Prefix,
    /// The rest is not base64url, JSON, or lacks a field.
    #[error(
        "the enrollment token is damaged ({0}); copy the whole line printed by `flotilla hub invite HOST` again"
    )]
    Malformed(String),
}

/// The decoded token. Its `secret` is the only secret part: whoever holds
/// the token may enroll one host named `host`, once, before it expires.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrollToken {
    /// The hub's name: the DNS name in its certificate.
    pub hub_name: String,
    /// Where the hub's main (mutual TLS) port is, `HOST:PORT`, in order of
    /// preference.
    pub hub_addrs: Vec<String>,
    /// Where its enrollment port is, `HOST:PORT`, one per `hub_addrs` entry.
    pub enroll_addrs: Vec<String>,
    /// The fingerprint of the hub's CA certificate, `sha256:...`; the host
    /// trusts only a CA with exactly this fingerprint.
    pub ca_fingerprint: String,
    /// The host this token enrolls.
    pub host: HostName,
    /// The token's id: names the hub's record of it.
    pub token_id: String,
    /// The one-time secret, base64url.
    pub secret: String,
}

impl std::fmt::Debug for EnrollToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnrollToken")
            .field("hub_name", &self.hub_name)
            .field("hub_addrs", &self.hub_addrs)
            .field("enroll_addrs", &self.enroll_addrs)
            .field("ca_fingerprint", &self.ca_fingerprint)
            .field("host", &self.host)
            .field("token_id", &self.token_id)
            .finish_non_exhaustive()
    }
}

/// What is wrong with a token's JSON, in words (not the parser's).
fn json_damage(e: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => "it is cut short: part of the line is missing",
        Category::Syntax | Category::Io => "its content was altered",
        Category::Data => "it lacks a field or holds a wrong one (from another flotilla release?)",
    }
}

impl EnrollToken {
    /// The token as one line of text.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("{TOKEN_PREFIX}{}", base64url_encode(&json))
    }

    /// Reads a token line (surrounding whitespace ignored) and checks its
    /// fields: a fingerprint, a secret of [`SECRET_LEN`] bytes, an id, at
    /// least one enrollment address.
    pub fn parse(text: &str) -> Result<Self, TokenError> {
        let body = text
            .trim()
            .strip_prefix(TOKEN_PREFIX)
            .ok_or(TokenError::Prefix)?;
        let bad = |why: &str| TokenError::Malformed(why.to_owned());
        let json = base64url_decode(body).ok_or_else(|| bad("not base64url"))?;
        let token: Self = serde_json::from_slice(&json).map_err(|e| bad(json_damage(&e)))?;
        token.fingerprint().map_err(|e| bad(&e.to_string()))?;
        if token.secret_bytes().is_none() {
            return Err(bad("the secret is not 32 bytes of base64url"));
        }
        if token.token_id.is_empty() || !token.token_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("the token id is not hexadecimal"));
        }
        if token.enroll_addrs.is_empty() || token.enroll_addrs.len() != token.hub_addrs.len() {
            return Err(bad("it lists no hub address"));
        }
        Ok(token)
    }

    /// The CA fingerprint the host must see.
    pub fn fingerprint(&self) -> Result<Fingerprint, crate::pki::FingerprintError> {
        self.ca_fingerprint.parse()
    }

    /// The secret's bytes.
    pub fn secret_bytes(&self) -> Option<Vec<u8>> {
        base64url_decode(&self.secret).filter(|s| s.len() == SECRET_LEN)
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url without padding.
pub fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Decodes base64url without padding; `None` for anything else.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| ALPHABET.iter().position(|a| *a == c).map(|v| v as u32);
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}
