//! The web roster's bearer token: 32 random bytes in hex, made at start,
//! kept only in the serving process's memory, and the check of an
//! `Authorization` header against it in constant time.
//!
//! Owns the token's form and its comparison; must not write it anywhere
//! (the caller prints it once, in the URL's fragment).

use ring::rand::{SecureRandom, SystemRandom};

/// The token a request must bear.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A fresh random token.
    pub fn generate() -> Result<Self, ring::error::Unspecified> {
        let mut bytes = [0u8; 32];
        SystemRandom::new().fill(&mut bytes)?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// A known token (tests).
    #[cfg(test)]
    pub(crate) fn fixed(text: &str) -> Self {
        Self(text.to_owned())
    }

    /// The token as text, for the URL printed at start.
    pub fn reveal(&self) -> &str {
        &self.0
    }

    /// Whether an `Authorization` header value is `Bearer <this token>`;
    /// the token is compared in constant time.
    pub fn admits(&self, header: Option<&[u8]>) -> bool {
        let Some(header) = header else {
            return false;
        };
        let Some(given) = header.strip_prefix(b"Bearer ") else {
            return false;
        };
        constant_time_eq(given, self.0.as_bytes())
    }
}

/// Equal bytes, in a time that depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_64_hex_digits_and_differ() {
        let (a, b) = match (Token::generate(), Token::generate()) {
            (Ok(a), Ok(b)) => (a, b),
            _ => panic!("no randomness"),
        };
        assert_eq!(a.reveal().len(), 64);
        assert!(a.reveal().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.reveal(), b.reveal());
        assert_eq!(format!("{a:?}"), "Token(..)", "never in a debug print");
    }

    #[test]
    fn admits_only_the_exact_bearer_token() {
        let t = Token::fixed("abc123");
        assert!(t.admits(Some(b"Bearer abc123")));
        for bad in [
            &b"Bearer abc124"[..],
            b"Bearer abc12",
            b"Bearer abc1234",
            b"bearer abc123",
            b"abc123",
            b"Basic abc123",
            b"Bearer ",
        ] {
            assert!(!t.admits(Some(bad)), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!t.admits(None));
    }
}
