//! `-v` and `-q`: how much this command says on stderr, and how much a
//! daemon or hub it starts logs. `-q` silences progress and notes (errors
//! and warnings still print); `-v`/`-vv` make a daemon or hub started by
//! this command (`up`, `restart`, `host run`, `hub run`) log at `debug` or
//! `trace`, `-q` at `warn`, unless `FLOTILLA_LOG` or `RUST_LOG` says
//! otherwise. stdout is never touched here.

use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets `-q` for the rest of the process.
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `-q` was given.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// The log level `-v`/`-q` ask of a daemon, when neither `FLOTILLA_LOG`
/// nor `RUST_LOG` is set.
pub(crate) fn daemon_log_level(verbose: u8, quiet: bool) -> Option<&'static str> {
    let set = |k| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if set("FLOTILLA_LOG") || set("RUST_LOG") {
        return None;
    }
    level(verbose, quiet)
}

fn level(verbose: u8, quiet: bool) -> Option<&'static str> {
    match (quiet, verbose) {
        (true, _) => Some("warn"),
        (false, 0) => None,
        (false, 1) => Some("debug"),
        (false, _) => Some("trace"),
    }
}

/// A note or progress line on stderr, unless `-q`.
macro_rules! note {
    ($($arg:tt)*) => {
        if !$crate::verbosity::quiet() {
            eprintln!($($arg)*);
        }
    };
}
pub(crate) use note;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_flags() {
        assert_eq!(level(0, false), None);
        assert_eq!(level(1, false), Some("debug"));
        assert_eq!(level(3, false), Some("trace"));
        assert_eq!(level(2, true), Some("warn"), "-q wins");
    }
}
