//! Fuzz targets for the decoders of outside bytes that live in this crate:
//! the federation frame codec (hub link and enrollment channel), the
//! enrollment token, and the control protocol's request reader and parser.
//! Each runs through [`crate::fuzzing`]: a short run in every `cargo
//! test`, a long one with `FLOTILLA_FUZZ_SECS` (docs/security.md).

mod control;
mod frames;
mod token;
