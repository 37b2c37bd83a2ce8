//! The enrollment token a user pastes into `host join`: an accepted token
//! encodes to text that parses to the same token.
#![no_main]

use flotilla_actors::federation::enroll::{EnrollToken, base64url_decode, base64url_encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(token) = EnrollToken::parse(&text) {
        assert_eq!(EnrollToken::parse(&token.encode()), Ok(token));
    }
    if let Some(bytes) = base64url_decode(&text) {
        assert_eq!(base64url_decode(&base64url_encode(&bytes)), Some(bytes));
    }
});
