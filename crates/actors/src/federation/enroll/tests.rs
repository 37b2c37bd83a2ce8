//! The enrollment token's format, the hub's decision and the renewal rule.

use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::codec;

fn host(name: &str) -> HostName {
    HostName::new(name).expect("host")
}

fn token() -> EnrollToken {
    EnrollToken {
        hub_name: "hub.test".into(),
        hub_addrs: vec!["127.0.0.1:7700".into()],
        enroll_addrs: vec!["127.0.0.1:7701".into()],
        ca_fingerprint: format!("sha256:{}", "ab".repeat(32)),
        host: host("laptop"),
        token_id: "0123abcd".into(),
        secret: base64url_encode(&[7u8; SECRET_LEN]),
    }
}

fn request(secret: &[u8], name: &str) -> EnrollRequest {
    EnrollRequest {
        token_id: "0123abcd".into(),
        secret: secret.to_vec(),
        host: host(name),
        csr_pem: String::new(),
    }
}

fn pending(expires_unix: u64) -> InviteState {
    InviteState::Pending(Invite {
        host: host("laptop"),
        secret_sha256: secret_digest(&[7u8; SECRET_LEN]),
        created_unix: 0,
        expires_unix,
    })
}

#[test]
fn base64url_round_trips_every_length_without_padding() {
    for len in 0..40 {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 250) as u8).collect();
        let text = base64url_encode(&bytes);
        assert!(!text.contains('=') && !text.contains('+') && !text.contains('/'));
        assert_eq!(base64url_decode(&text).expect("decode"), bytes, "{len}");
    }
    assert_eq!(base64url_encode(b"\xfb\xff"), "-_8");
    assert!(base64url_decode("a").is_none());
    assert!(base64url_decode("ab=c").is_none());
}

#[test]
fn a_token_round_trips_and_starts_with_its_prefix() {
    let line = token().encode();
    assert!(line.starts_with(TOKEN_PREFIX), "{line}");
    assert_eq!(
        EnrollToken::parse(&format!("  {line}\n")).expect("parse"),
        token()
    );
    assert_eq!(
        token().secret_bytes().expect("secret"),
        vec![7u8; SECRET_LEN]
    );
}

#[test]
fn damaged_tokens_are_refused_with_a_reason() {
    assert_eq!(EnrollToken::parse("hello"), Err(TokenError::Prefix));
    let line = token().encode();
    let cut = &line[..line.len() - 5];
    assert!(matches!(
        EnrollToken::parse(cut),
        Err(TokenError::Malformed(_))
    ));
    // Cut at a base64url quantum, so the rest decodes into cut JSON: the
    // message says so in words, not in the JSON parser's.
    let body = line.strip_prefix(TOKEN_PREFIX).expect("prefix");
    let short = format!("{TOKEN_PREFIX}{}", &body[..body.len() / 4 * 2]);
    let said = EnrollToken::parse(&short).expect_err("cut").to_string();
    assert!(said.contains("cut short"), "{said}");
    assert!(!said.contains("line 1 column"), "{said}");
    let altered = format!("{TOKEN_PREFIX}{}", base64url_encode(b"{\"v\":1,}"));
    let said = EnrollToken::parse(&altered)
        .expect_err("altered")
        .to_string();
    assert!(
        said.contains("altered") && !said.contains("column"),
        "{said}"
    );
    let mut bad = token();
    bad.ca_fingerprint = "sha256:zz".into();
    assert!(EnrollToken::parse(&bad.encode()).is_err());
    let mut bad = token();
    bad.secret = base64url_encode(&[1, 2, 3]);
    assert!(EnrollToken::parse(&bad.encode()).is_err());
    let mut bad = token();
    bad.enroll_addrs.clear();
    assert!(EnrollToken::parse(&bad.encode()).is_err());
}

#[test]
fn a_token_debug_never_shows_its_secret() {
    let shown = format!("{:?}", token());
    assert!(!shown.contains(&token().secret), "{shown}");
    let shown = format!("{:?}", request(&[7u8; SECRET_LEN], "laptop"));
    assert!(!shown.contains("secret"), "{shown}");
}

#[test]
fn a_pending_invite_with_the_right_secret_and_host_is_accepted_until_it_expires() {
    let secret = [7u8; SECRET_LEN];
    let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
    assert_eq!(
        decide_enrollment(&pending(100), &request(&secret, "laptop"), at(100)),
        Ok(())
    );
    let late = decide_enrollment(&pending(100), &request(&secret, "laptop"), at(101));
    assert_eq!(
        late.expect_err("expired").code(),
        EnrollRefusalCode::TokenExpired
    );
}

#[test]
fn each_refusal_has_its_own_code_and_says_what_to_do() {
    let secret = [7u8; SECRET_LEN];
    let now = UNIX_EPOCH + Duration::from_secs(10);
    let code = |state: &InviteState, req: &EnrollRequest| {
        let refusal = decide_enrollment(state, req, now).expect_err("refused");
        assert!(
            refusal.to_string().contains("flotilla hub invite"),
            "{refusal}"
        );
        refusal.code()
    };
    let right = request(&secret, "laptop");
    assert_eq!(
        code(&InviteState::Unknown, &right),
        EnrollRefusalCode::UnknownToken
    );
    assert_eq!(
        code(&InviteState::Used, &right),
        EnrollRefusalCode::TokenUsed
    );
    assert_eq!(
        code(&pending(100), &request(&[8u8; SECRET_LEN], "laptop")),
        EnrollRefusalCode::UnknownToken,
        "a wrong secret looks like an unknown token"
    );
    assert_eq!(
        code(&pending(100), &request(&secret, "desktop")),
        EnrollRefusalCode::WrongHost
    );
}

#[test]
fn enrollment_frames_round_trip_through_the_codec() {
    let frames = [
        EnrollFrame::EnrollRequest(request(&[1, 2], "laptop")),
        EnrollFrame::RenewRequest(RenewRequest {
            csr_pem: "csr".into(),
        }),
        EnrollFrame::EnrollReply(refused(EnrollRefusalCode::TokenUsed, "used")),
    ];
    for frame in frames {
        let bytes = codec::encode(&frame).expect("encode");
        let back: EnrollFrame = codec::decode(&bytes, MAX_ENROLL_FRAME).expect("decode");
        assert_eq!(back, frame);
    }
}

#[test]
fn renewal_is_due_when_less_than_a_third_remains() {
    let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
    assert!(!renewal_due(at(0), at(90), at(0)));
    assert!(!renewal_due(at(0), at(90), at(60)));
    assert!(renewal_due(at(0), at(90), at(61)));
    assert!(renewal_due(at(0), at(90), at(200)), "expired");
    assert!(renewal_due(at(90), at(0), at(0)), "an empty validity");
}
