//! Test hooks that name a file: a variable the daemon or hub reads only
//! when `FLOTILLA_TEST_HOOKS=1` is set too, so a hook left in a real
//! environment does nothing. Owns that rule; what each hook does is its
//! user's (the host's commit gate, the hub's writer gate, the log
//! syncer's failure).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The file `var` names, when the test hooks are on.
pub fn path(var: &str) -> Option<PathBuf> {
    path_of(
        std::env::var_os("FLOTILLA_TEST_HOOKS"),
        std::env::var_os(var),
    )
}

/// Holds the calling thread until `gate` exists, a minute at most: a
/// gate hook (the host's commit gate, the hub's writer gate) lets a test
/// hold a writer at one step and let it go. While it waits, `<gate>.held`
/// exists, so the test knows something is held.
pub fn wait_for_gate(gate: &Path) {
    if !gate.exists() {
        let _ = std::fs::write(gate.with_extension("held"), b"");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !gate.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The hook's file given the two variables' values: only when the hooks
/// are on.
fn path_of(hooks: Option<OsString>, value: Option<OsString>) -> Option<PathBuf> {
    value
        .filter(|_| hooks.is_some_and(|h| h == "1"))
        .map(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_is_read_only_with_the_hooks_on() {
        let file = || Some(OsString::from("/tmp/gate"));
        assert_eq!(path_of(None, file()), None, "hooks off: no hook");
        assert_eq!(path_of(Some("0".into()), file()), None);
        assert_eq!(path_of(Some("1".into()), None), None);
        assert_eq!(
            path_of(Some("1".into()), file()),
            Some(PathBuf::from("/tmp/gate"))
        );
    }
}
