//! Commands in hints that can be pasted as they are: when `--home DIR` was
//! given on the command line (not through `FLOTILLA_HOME`, which the next
//! command in the same shell has too), every `flotilla ...` command a hint
//! or a note names gets `--home DIR`, so it reaches the same daemon. Only
//! the text of hints and suggested commands passes through here, never
//! results.

use std::path::Path;
use std::sync::OnceLock;

/// `--home DIR`, as it is pasted, when the command line gave one.
static HOME_ARG: OnceLock<String> = OnceLock::new();

/// Records the `--home` of this command line, unless it came from
/// `FLOTILLA_HOME`.
pub(crate) fn set_home(home: Option<&Path>) {
    let Some(dir) = home else {
        return;
    };
    let from_env = std::env::var_os("FLOTILLA_HOME").is_some_and(|v| Path::new(&v) == dir);
    if !from_env {
        let _ = HOME_ARG.set(format!("--home {}", quoted(&dir.display().to_string())));
    }
}

/// `text` with this command line's `--home` in each command it names.
pub(crate) fn paste(text: &str) -> String {
    match HOME_ARG.get() {
        Some(home) => with_home(text, home),
        None => text.to_owned(),
    }
}

/// A shell word: as is when it is plain, else in single quotes.
pub(crate) fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Inserts `home` after each `flotilla` that starts a command (at the
/// start, after a backtick or `(`, or after `: `, and followed by a
/// subcommand), unless it already has a `--home`. Prose ("the flotilla
/// daemon") is left alone.
fn with_home(text: &str, home: &str) -> String {
    const WORD: &str = "flotilla ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(WORD) {
        let head = &rest[..at];
        let after = &rest[at + WORD.len()..];
        let at_start = out.is_empty() && head.is_empty();
        out.push_str(&rest[..at + WORD.len()]);
        let starts_command =
            at_start || head.ends_with('`') || head.ends_with('(') || head.ends_with(": ");
        if starts_command
            && after.starts_with(|c: char| c.is_ascii_lowercase())
            && !after.starts_with("--home")
        {
            out.push_str(home);
            out.push(' ');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_gets_the_home_once() {
        let home = "--home /tmp/h";
        assert_eq!(
            with_home(
                "collect it with `flotilla lane wait x`, or `flotilla lane rm x`",
                home
            ),
            "collect it with `flotilla --home /tmp/h lane wait x`, or `flotilla --home /tmp/h lane rm x`"
        );
        assert_eq!(with_home("flotilla up", home), "flotilla --home /tmp/h up");
        assert_eq!(
            with_home("`flotilla --home /x up`", home),
            "`flotilla --home /x up`"
        );
        assert_eq!(
            with_home("the flotilla daemon: flotilla-enroll-v1", home),
            "the flotilla daemon: flotilla-enroll-v1"
        );
    }

    #[test]
    fn a_home_with_spaces_is_quoted() {
        assert_eq!(quoted("/tmp/my home"), "'/tmp/my home'");
        assert_eq!(quoted("/tmp/it's"), r"'/tmp/it'\''s'");
        assert_eq!(quoted("/tmp/plain-dir_1"), "/tmp/plain-dir_1");
    }
}
