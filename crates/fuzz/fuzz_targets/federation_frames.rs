//! The hub link's and the enrollment channel's frames as a peer sends
//! them: a byte stream cut by `framing::read_message`, each message decoded
//! as a `Frame` (or an `EnrollFrame`). A decoded frame must encode to bytes
//! that decode to the same frame.
#![no_main]

use flotilla_actors::codec;
use flotilla_actors::federation::enroll::{EnrollFrame, MAX_ENROLL_FRAME};
use flotilla_actors::federation::frames::Frame;
use flotilla_actors::federation::framing::{DEFAULT_MAX_FRAME, read_message};
use libfuzzer_sys::fuzz_target;

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
) {
    let bytes = codec::encode(value).expect("a decoded frame encodes");
    let back: T = codec::decode(&bytes, usize::MAX).expect("and decodes again");
    assert_eq!(&back, value);
}

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut stream = data;
        for _ in 0..=data.len() {
            match read_message::<Frame, _>(&mut stream, DEFAULT_MAX_FRAME).await {
                Ok(Some(frame)) => round_trip(&frame),
                Ok(None) | Err(_) => break,
            }
        }
        let mut stream = data;
        if let Ok(Some(frame)) = read_message::<EnrollFrame, _>(&mut stream, MAX_ENROLL_FRAME).await
        {
            round_trip(&frame);
        }
    });
    if let Ok(frame) = codec::decode::<Frame>(data, DEFAULT_MAX_FRAME) {
        round_trip(&frame);
    }
});
