//! Crash and pause points for tests: a daemon started with
//! `FLOTILLA_TEST_HOOKS=1` and `FLOTILLA_TEST_CRASH_AT=NAME` exits at once,
//! without cleaning up, when it reaches the point `NAME`, so tests can stop
//! it between two steps that must survive a crash together; with
//! `FLOTILLA_TEST_PAUSE_AT=NAME:MS` the task that reaches `NAME` waits `MS`
//! milliseconds there, so tests can widen a race's window. Without test
//! hooks this does nothing.

use crate::context::HostContext;

/// Exits the process here when this point was asked for.
pub(crate) fn reached(ctx: &HostContext, point: &str) {
    if ctx.test_hooks && std::env::var("FLOTILLA_TEST_CRASH_AT").is_ok_and(|p| p == point) {
        tracing::error!(point, "crashing on request (test hook)");
        std::process::exit(86);
    }
}

/// Waits here when this point was asked for (test hooks only, read from
/// the environment: the caller may have no context).
pub(crate) async fn pause(point: &str) {
    if std::env::var("FLOTILLA_TEST_HOOKS").is_ok_and(|v| v == "1")
        && let Ok(asked) = std::env::var("FLOTILLA_TEST_PAUSE_AT")
        && let Some((name, ms)) = asked.split_once(':')
        && name == point
        && let Ok(ms) = ms.parse::<u64>()
    {
        tracing::warn!(point, ms, "pausing on request (test hook)");
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}
