//! The pre-push hook of a claim's worktree: it refuses a push to a
//! protected branch, whoever runs it (the lane's model or a person), then
//! runs the repository's own pre-push hook.
//!
//! Owns the hook's text and writing the hooks directory. Must not decide
//! which branches are protected (the policy does).

use std::path::Path;

/// The `pre-push` script for `claim`, refusing `patterns` (`*` any run of
/// characters) and `base`, then handing over to `own` if it exists.
pub(crate) fn pre_push(claim: &str, base: &str, patterns: &[String], own: &Path) -> String {
    let arms: Vec<String> = std::iter::once(base.to_owned())
        .chain(patterns.iter().cloned())
        .map(|p| sh_pattern(&p))
        .collect();
    let own = sh_quote(&own.to_string_lossy());
    format!(
        r#"#!/bin/sh
# Written by Flotilla for claim {claim}: a lane works on its own branch and
# never pushes to a protected branch (policy.toml's `protected`, and the base).
input=$(cat)
refused=0
while read -r local_ref local_sha remote_ref remote_sha; do
  case "$remote_ref" in refs/heads/*) ;; *) continue ;; esac
  branch=${{remote_ref#refs/heads/}}
  case "$branch" in
    {arms}) echo "flotilla: refusing to push to $branch: it is protected by policy; claim {claim} works on flotilla/{claim} (push that, or open a change request: flotilla change open {claim})" >&2; refused=1 ;;
  esac
done <<EOF_INPUT
$input
EOF_INPUT
[ "$refused" = 0 ] || exit 1
own={own}
if [ -x "$own" ]; then printf '%s\n' "$input" | "$own" "$@"; fi
"#,
        arms = arms.join("|"),
    )
}

/// The `pre-commit` script for `claim`: refuses a commit that changes a
/// path matching one of `sensitive` (globs; `**/` also matches at the
/// top), then runs the repository's own pre-commit hook `own`.
pub(crate) fn pre_commit(claim: &str, sensitive: &[String], own: &Path) -> String {
    let arms: Vec<String> = sensitive.iter().flat_map(|g| glob_arms(g)).collect();
    let own = sh_quote(&own.to_string_lossy());
    let check = if arms.is_empty() {
        String::new()
    } else {
        format!(
            r#"git diff --cached --name-only | while read -r path; do
  case "$path" in
    {arms}) echo "flotilla: $path is a sensitive path (policy.toml's sensitive): a lane in claim {claim} may not change it; ask a person to" >&2; exit 1 ;;
  esac
done || exit 1
"#,
            arms = arms.join("|")
        )
    };
    format!(
        "#!/bin/sh\n# Written by Flotilla for claim {claim}: sensitive paths are not committed here.\n{check}own={own}\nif [ -x \"$own\" ]; then exec \"$own\" \"$@\"; fi\n"
    )
}

/// A path glob as `sh` case patterns (where `*` also crosses `/`).
fn glob_arms(glob: &str) -> Vec<String> {
    let pattern = |g: &str| sh_pattern(&g.replace("**", "*"));
    match glob.strip_prefix("**/") {
        Some(rest) => vec![pattern(rest), pattern(&format!("*/{rest}"))],
        None => vec![pattern(glob)],
    }
}

/// Writes the hooks directory of a worktree: `hooks` (name, script), and a
/// link to each other hook the repository has, so its own hooks still run.
pub(crate) fn write(dir: &Path, hooks: &[(&str, String)], own_hooks: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    for (name, script) in hooks {
        let hook = dir.join(name);
        std::fs::write(&hook, script)?;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o700))?;
    }
    let Ok(entries) = std::fs::read_dir(own_hooks) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let link = dir.join(&name);
        let sample = name.to_string_lossy().ends_with(".sample");
        let ours = hooks.iter().any(|(n, _)| name == *n);
        if !ours && !sample && !link.exists() {
            std::os::unix::fs::symlink(entry.path(), link)?;
        }
    }
    Ok(())
}

/// A branch pattern as an `sh` case pattern: literal parts quoted, `*` bare.
fn sh_pattern(pattern: &str) -> String {
    pattern
        .split('*')
        .map(sh_quote)
        .collect::<Vec<_>>()
        .join("*")
}

fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_quoted_but_for_their_stars() {
        assert_eq!(sh_pattern("release/*"), "'release/'*''");
        assert_eq!(sh_pattern("it's"), r"'it'\''s'");
        let script = pre_push(
            "fix",
            "main",
            &["release/*".into()],
            Path::new("/r/hooks/pre-push"),
        );
        assert!(script.contains("'main'|'release/'*''"), "{script}");
        assert!(script.contains("own='/r/hooks/pre-push'"));
        let script = pre_commit(
            "fix",
            &["**/.env".into(), "secrets/**".into()],
            Path::new("/o"),
        );
        assert!(
            script.contains("'.env'|''*'/.env'|'secrets/'*''"),
            "{script}"
        );
    }
}
