//! Fuzzing the enrollment token: [`EnrollToken::parse`] on text pasted by
//! an operator (or by whoever handed it over), and the base64url decoder
//! under it.

use proptest::prop_assert_eq;

use crate::federation::enroll::{
    EnrollToken, SECRET_LEN, TOKEN_PREFIX, base64url_decode, base64url_encode,
};
use crate::fuzzing::{Target, TestCaseError, fuzz, text};
use crate::names::HostName;

/// Tokens as `flotilla hub invite` prints them: one address and several,
/// DNS and IP hub names.
fn seeds() -> Vec<Vec<u8>> {
    let token = |hub: &str, addrs: &[&str], enroll: &[&str], host: &str| EnrollToken {
        hub_name: hub.into(),
        hub_addrs: addrs.iter().map(|a| (*a).to_owned()).collect(),
        enroll_addrs: enroll.iter().map(|a| (*a).to_owned()).collect(),
        ca_fingerprint: format!("sha256:{}", "3f9a".repeat(16)),
        host: HostName::new(host).expect("host"),
        token_id: "9c1e0b7a4d2f6e81".into(),
        secret: base64url_encode(&[0x5a; SECRET_LEN]),
    };
    let tokens = [
        token(
            "hub.home.arpa",
            &["hub.home.arpa:7700"],
            &["hub.home.arpa:7701"],
            "laptop",
        ),
        token(
            "hub.test",
            &["192.168.1.20:7700", "[fd00::20]:7700"],
            &["192.168.1.20:7701", "[fd00::20]:7701"],
            "workstation-2",
        ),
    ];
    let mut seeds: Vec<Vec<u8>> = tokens.iter().map(|t| t.encode().into_bytes()).collect();
    seeds.push(format!("  {}\n", tokens[0].encode()).into_bytes());
    seeds
}

fn check(input: &[u8]) -> Result<(), TestCaseError> {
    let line = text(input);
    if let Ok(token) = EnrollToken::parse(&line) {
        prop_assert_eq!(EnrollToken::parse(&token.encode()), Ok(token.clone()));
        prop_assert_eq!(token.secret_bytes().map(|s| s.len()), Some(SECRET_LEN));
    }
    if let Some(bytes) = base64url_decode(&line) {
        // Canonical text decodes back to itself.
        let again = base64url_encode(&bytes);
        prop_assert_eq!(base64url_decode(&again), Some(bytes));
    }
    Ok(())
}

#[test]
fn fuzz_enrollment_token() {
    let seeds = seeds();
    for seed in &seeds {
        let line = String::from_utf8_lossy(seed);
        EnrollToken::parse(&line).expect("every seed is a valid token");
    }
    let target = Target {
        name: "enrollment-token",
        seeds: &seeds,
        dictionary: &[TOKEN_PREFIX.as_bytes(), b"=", b"+", b"/", b"\n", b" ", b"A"],
    };
    fuzz(target, check);
}
