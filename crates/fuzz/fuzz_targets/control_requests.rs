//! What a local client writes to the daemon's control socket: lines cut
//! by `read_line_within` (bounded, with a shared budget), each parsed by
//! `RequestFrame::parse`; a refusal must serialize to one line.
#![no_main]

use flotilla_actors::protocol::{LineBudget, RequestFrame, ResponseFrame, read_line_within};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let budget = LineBudget::new(2 * LIMIT);
    runtime.block_on(async {
        let mut reader = data;
        for _ in 0..=data.len() {
            match read_line_within(&mut reader, LIMIT, Some(&budget)).await {
                Ok(Some(line)) => {
                    assert!(line.len() <= LIMIT && !line.contains(&b'\n'));
                    if let Err(refused) = RequestFrame::parse(&line) {
                        let answer = ResponseFrame::err(refused.id, refused.error);
                        let bytes = serde_json::to_vec(&answer).expect("serializes");
                        assert!(!bytes.contains(&b'\n'), "one line");
                    }
                }
                Ok(None) => break,
                Err(_) => {}
            }
        }
    });
});
