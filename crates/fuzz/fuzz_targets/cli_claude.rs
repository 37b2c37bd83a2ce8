//! `claude`'s output, read by its connector's parser (`cli_common`).
#![no_main]

#[path = "cli_common.rs"]
mod cli_common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli_common::check(cli_common::CliKind::Claude, data));
