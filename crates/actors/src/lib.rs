//! What Flotilla's host daemon and hub share: names and groups, the
//! directory rules of who may see whom, the control protocol and the binary
//! codec, the redb store, and supervision helpers.
//!
//! Nothing here spawns processes or binds sockets; the host and hub crates
//! drive these types.

pub mod codec;
pub mod directory;
pub mod federation;
pub mod fleet;
#[cfg(test)]
mod fuzz_tests;
#[cfg(any(test, feature = "test-support"))]
pub mod fuzzing;
pub mod governance;
mod json_schema;
pub mod lane;
pub mod model;
pub mod names;
pub mod pki;
pub mod private_file;
pub mod protocol;
pub mod store;
pub mod supervision;
pub mod test_hook;
pub mod tls;
pub mod wal;
pub mod wal_log;
pub mod wal_sync;
