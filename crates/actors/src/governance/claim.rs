//! A claim's id: the slug of its title, unique in its repository, and the
//! name of its branch.
//!
//! Owns the id's rules and how one is made from a title. Must not look at
//! a repository: which ids are taken comes in from the board.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest id, in characters.
pub const MAX_ID: usize = 48;
/// The prefix of every claim's branch.
pub const BRANCH_PREFIX: &str = "flotilla/";

/// A claim's id: lowercase ASCII letters, digits and single dashes, not
/// starting or ending with a dash, at most [`MAX_ID`] characters.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
pub struct ClaimId(String);

/// Why a text is not a claim id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a claim id: use lowercase letters, digits and single dashes, \
     at most 48 characters (`flotilla claim list` shows the ids)"
)]
pub struct BadClaimId(pub String);

impl ClaimId {
    /// Checks an id.
    pub fn parse(text: &str) -> Result<Self, BadClaimId> {
        let fine = !text.is_empty()
            && text.len() <= MAX_ID
            && !text.starts_with('-')
            && !text.ends_with('-')
            && !text.contains("--")
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if fine {
            Ok(Self(text.to_owned()))
        } else {
            Err(BadClaimId(text.to_owned()))
        }
    }

    /// A fresh id for `title`: its slug, or the slug with `-2`, `-3`...
    /// when `taken` says it is in use.
    pub fn for_title(title: &str, taken: impl Fn(&ClaimId) -> bool) -> Self {
        let base = slug(title);
        let first = Self(base.clone());
        if !taken(&first) {
            return first;
        }
        (2u32..)
            .map(|n| {
                let suffix = format!("-{n}");
                let stem = base[..base.len().min(MAX_ID - suffix.len())].trim_end_matches('-');
                Self(format!("{stem}{suffix}"))
            })
            .find(|id| !taken(id))
            .unwrap_or(first)
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The claim's branch.
    pub fn branch(&self) -> String {
        format!("{BRANCH_PREFIX}{}", self.0)
    }
}

/// A title's slug: ASCII letters and digits lowercased, every other run of
/// characters one dash, cut at [`MAX_ID`]; `claim` when nothing is left.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(MAX_ID);
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "claim".to_owned()
    } else {
        out.to_owned()
    }
}

impl fmt::Display for ClaimId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for ClaimId {
    type Error = BadClaimId;
    fn try_from(text: String) -> Result<Self, BadClaimId> {
        Self::parse(&text)
    }
}

impl From<ClaimId> for String {
    fn from(id: ClaimId) -> String {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_the_titles_slug() {
        let id = ClaimId::for_title("Context meter: show % used!", |_| false);
        assert_eq!(id.as_str(), "context-meter-show-used");
        assert_eq!(id.branch(), "flotilla/context-meter-show-used");
        assert_eq!(ClaimId::for_title("  ☃ ", |_| false).as_str(), "claim");
        let long = ClaimId::for_title(&"ab ".repeat(40), |_| false);
        assert!(long.as_str().len() <= MAX_ID && !long.as_str().ends_with('-'));
        assert!(ClaimId::parse(long.as_str()).is_ok());
    }

    #[test]
    fn a_taken_id_gets_a_number() {
        let taken = |id: &ClaimId| matches!(id.as_str(), "fix" | "fix-2");
        assert_eq!(ClaimId::for_title("Fix", taken).as_str(), "fix-3");
        let long = "x".repeat(MAX_ID);
        let id = ClaimId::for_title(&long, |id| id.as_str() == long);
        assert_eq!(id.as_str().len(), MAX_ID);
        assert!(id.as_str().ends_with("-2"));
    }

    #[test]
    fn bad_ids_are_refused() {
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a b",
            "a/b",
            "../x",
            &"a".repeat(49),
        ] {
            let err = ClaimId::parse(bad).expect_err(bad);
            assert!(err.to_string().contains("claim list"), "{err}");
        }
        assert!(serde_json::from_str::<ClaimId>("\"ok-1\"").is_ok());
        assert!(serde_json::from_str::<ClaimId>("\"../etc\"").is_err());
    }
}
