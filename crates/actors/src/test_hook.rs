//! Test hooks that name a file: a variable the daemon or hub reads only
//! when `FLOTILLA_TEST_HOOKS=1` is set too, so a hook left in a real
//! environment does nothing. Owns that rule; what each hook does is its
//! user's (the hub's writer gate, the log syncer's failure).

use std::ffi::OsString;
use std::path::PathBuf;

/// The file `var` names, when the test hooks are on.
pub fn path(var: &str) -> Option<PathBuf> {
    path_of(
        std::env::var_os("FLOTILLA_TEST_HOOKS"),
        std::env::var_os(var),
    )
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
