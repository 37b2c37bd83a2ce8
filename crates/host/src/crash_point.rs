//! Crash points for tests: a daemon started with `FLOTILLA_TEST_HOOKS=1`
//! and `FLOTILLA_TEST_CRASH_AT=NAME` exits at once, without cleaning up,
//! when it reaches the point `NAME`, so tests can stop it between two
//! steps that must survive a crash together. Without test hooks this does
//! nothing.

use crate::context::HostContext;

/// Exits the process here when this point was asked for.
pub(crate) fn reached(ctx: &HostContext, point: &str) {
    if ctx.test_hooks && std::env::var("FLOTILLA_TEST_CRASH_AT").is_ok_and(|p| p == point) {
        tracing::error!(point, "crashing on request (test hook)");
        std::process::exit(86);
    }
}
