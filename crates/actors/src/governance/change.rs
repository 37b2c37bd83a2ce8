//! A claim's change request: where it is opened (the forge the remote is
//! on, through that forge's own CLI, or a local change record when there
//! is no forge) and what it says.
//!
//! Owns choosing the forge and the request's text. Must not run a forge's
//! CLI or git, and never sees a token: the forge's CLI holds the user's.

use serde::{Deserialize, Serialize};

/// Where a change request lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Forge {
    /// A pull request, opened with `gh`.
    Github,
    /// A merge request, opened with `glab`.
    Gitlab,
    /// A local change record in the run records only.
    Local,
}

impl Forge {
    /// The forge of a remote's URL, or `setting` (policy.toml's `forge`:
    /// `github`, `gitlab`, `none`) when given.
    pub fn of(url: Option<&str>, setting: Option<&str>) -> Result<Self, String> {
        match setting {
            Some("github") => return Ok(Self::Github),
            Some("gitlab") => return Ok(Self::Gitlab),
            Some("none") => return Ok(Self::Local),
            Some(other) => {
                return Err(format!(
                    "policy.toml's forge is {other:?}; use github, gitlab or none"
                ));
            }
            None => {}
        }
        let host = url.map(host_of).unwrap_or_default().to_ascii_lowercase();
        Ok(if host == "github.com" || host.ends_with(".github.com") {
            Self::Github
        } else if host == "gitlab.com" || host.starts_with("gitlab.") {
            Self::Gitlab
        } else {
            Self::Local
        })
    }

    /// The forge's CLI, if it has one.
    pub fn cli(self) -> Option<&'static str> {
        match self {
            Self::Github => Some("gh"),
            Self::Gitlab => Some("glab"),
            Self::Local => None,
        }
    }
}

/// The host of a git remote URL (`https://h/...`, `ssh://u@h:p/...`,
/// `u@h:path`); empty for a local path.
fn host_of(url: &str) -> &str {
    let rest = match url.split_once("://") {
        Some((_, rest)) => rest,
        None if url.contains(':') && !url.starts_with('/') => url,
        None => return "",
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    rest.split(['/', ':']).next().unwrap_or_default()
}

/// The change request's body: the brief, the commits and where the gate
/// stands, and how it was made.
pub fn body(claim: &str, brief: Option<&str>, commits: &[String], gate: &str) -> String {
    let mut out = String::new();
    if let Some(brief) = brief.filter(|b| !b.trim().is_empty()) {
        out.push_str(brief.trim());
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "Claim `{claim}`, {} commit(s).\n\nReview gate: {gate}\n",
        commits.len()
    ));
    out.push_str(
        "\nOpened by Flotilla; the claim's run records are under refs/flotilla/records.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forge_comes_from_the_remote_unless_the_policy_names_it() {
        let of = |url| Forge::of(Some(url), None).expect("forge");
        assert_eq!(of("https://github.com/acme/app.git"), Forge::Github);
        assert_eq!(of("git@github.com:acme/app.git"), Forge::Github);
        assert_eq!(of("ssh://git@gitlab.com:22/acme/app.git"), Forge::Gitlab);
        assert_eq!(of("https://gitlab.example.org/acme/app"), Forge::Gitlab);
        assert_eq!(of("/srv/git/app.git"), Forge::Local);
        assert_eq!(of("https://git.example.org/app.git"), Forge::Local);
        assert_eq!(Forge::of(None, None), Ok(Forge::Local));
        assert_eq!(Forge::of(Some("/x"), Some("github")), Ok(Forge::Github));
        assert_eq!(
            Forge::of(Some("https://github.com/a/b"), Some("none")),
            Ok(Forge::Local)
        );
        assert!(
            Forge::of(None, Some("bitbucket"))
                .expect_err("unknown")
                .contains("github, gitlab or none")
        );
    }

    #[test]
    fn the_body_says_what_the_change_is_and_where_its_gate_stands() {
        let text = body(
            "fix",
            Some("make it work"),
            &["a".into(), "b".into()],
            "passed",
        );
        assert!(
            text.starts_with("make it work\n\nClaim `fix`, 2 commit(s)."),
            "{text}"
        );
        assert!(text.contains("Review gate: passed"));
    }
}
