//! The review packet: everything an independent reviewer is given about
//! one change (the claim, the commit range, the tier and why, the
//! checklist, the diff and its hash), and the prompt rendered from it.
//!
//! The caller gathers the facts (git, the claim, the tier rules) and sends
//! the prompt; nothing here runs git, reads a file or starts a model.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::tier::TierDecision;
use super::verdict::VERDICT_SHAPE;

/// The most characters of the diff the prompt shows; the rest is cut
/// with a marker (the hash still covers the whole diff).
pub const MAX_PROMPT_DIFF_CHARS: usize = 200_000;

/// What the reviewer is given about one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewPacket {
    /// The claim the change was made under.
    pub claim: String,
    /// The claim's title.
    pub title: String,
    /// What the author was asked to do, when there was a brief.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief: Option<String>,
    /// The commit the change starts from.
    pub base: String,
    /// The commit under review.
    pub head: String,
    /// The review's tier, and why.
    pub tier: TierDecision,
    /// What the reviewer must check at that tier.
    pub checklist: Vec<String>,
    /// `git diff base..head`, whole.
    pub diff: String,
    /// [`diff_sha256`] of `diff`: names exactly what was reviewed.
    pub diff_sha256: String,
    /// The model family that wrote the change.
    pub author_family: String,
    /// The model family reviewing it (another one).
    pub reviewer_family: String,
}

/// SHA-256 of a diff, as `sha256:` and 64 lowercase hex digits.
pub fn diff_sha256(diff: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, diff.as_bytes());
    let mut out = String::from("sha256:");
    for byte in digest.as_ref() {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

impl ReviewPacket {
    /// The reviewer's prompt: who they are, the change, its tier and why,
    /// the numbered checklist, the diff (cut past
    /// [`MAX_PROMPT_DIFF_CHARS`]) and the verdict's shape.
    pub fn prompt(&self) -> String {
        let mut out = String::new();
        self.write_intro(&mut out);
        self.write_tier(&mut out);
        self.write_checklist(&mut out);
        self.write_diff(&mut out);
        out.push_str("## Your verdict\n\n");
        out.push_str(VERDICT_SHAPE);
        out.push_str("\n\nReturn only that JSON object as your final message.\n");
        out
    }

    fn write_intro(&self, out: &mut String) {
        let _ = write!(
            out,
            "You are an independent code reviewer. You are a model of the {} family; \
             the change was written by a model of another family ({}). Judge it on \
             its own merits: do not assume the author was right, and do not change \
             any file.\n\n## The change\n\nClaim {}: {}\n\n",
            self.reviewer_family, self.author_family, self.claim, self.title
        );
        match &self.brief {
            Some(brief) => {
                let _ = write!(out, "The brief:\n\n{}\n\n", brief.trim_end());
            }
            None => out.push_str("There was no brief; judge the change by its claim's title.\n\n"),
        }
        let _ = write!(out, "Commits: {}..{}\n\n", self.base, self.head);
    }

    fn write_tier(&self, out: &mut String) {
        let d = &self.tier;
        let _ = write!(out, "## Risk tier: {}\n\n", d.tier);
        let _ = writeln!(out, "Computed from the touched paths: {}.", d.computed);
        if let Some(requested) = &d.requested {
            let _ = writeln!(out, "Requested: {requested}.");
        }
        if let Some(floor) = &d.floor {
            let _ = writeln!(
                out,
                "Floor set by posture rules: {floor} (no request goes below it)."
            );
        }
        if d.held_by.is_empty() {
            out.push_str("No path rule matched: the computed tier is the default.\n");
        } else {
            out.push_str("Why:\n");
        }
        for reason in &d.held_by {
            let _ = writeln!(out, "- {reason}");
        }
        out.push('\n');
    }

    fn write_checklist(&self, out: &mut String) {
        out.push_str(
            "## Checklist\n\nCheck each of these; any one that fails blocks the change.\n\n",
        );
        if self.checklist.is_empty() {
            out.push_str("(This tier has no checklist: review for correctness and safety.)\n");
        }
        for (i, item) in self.checklist.iter().enumerate() {
            let _ = writeln!(out, "{}. {item}", i + 1);
        }
        out.push('\n');
    }

    fn write_diff(&self, out: &mut String) {
        let (shown, cut) = cut_diff(&self.diff);
        let fence = "`".repeat(longest_backtick_run(shown).max(2) + 1);
        let _ = write!(
            out,
            "## The diff ({})\n\n{fence}diff\n{shown}",
            self.diff_sha256
        );
        if !shown.is_empty() && !shown.ends_with('\n') {
            out.push('\n');
        }
        if cut > 0 {
            let _ = writeln!(
                out,
                "[diff truncated: {cut} more characters not shown; review what is shown, \
                 and say in a note that the rest was not seen]"
            );
        }
        let _ = write!(out, "{fence}\n\n");
    }
}

/// The diff as shown, and how many characters were cut. A cut falls at
/// the end of a line when one is within the limit.
fn cut_diff(diff: &str) -> (&str, usize) {
    let Some((at, _)) = diff.char_indices().nth(MAX_PROMPT_DIFF_CHARS) else {
        return (diff, 0);
    };
    let end = diff[..at].rfind('\n').map_or(at, |newline| newline + 1);
    (&diff[..end], diff[end..].chars().count())
}

/// The longest run of backticks in `text`, so the fence around it can be
/// longer and a diff of Markdown cannot close it early.
pub(crate) fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::governance::tier::{TierRules, decide};

    fn packet(diff: &str) -> ReviewPacket {
        let rules = TierRules::default();
        let tier = decide(&rules, &["security/keys.rs", "src/lib.rs"], Some("low")).unwrap();
        ReviewPacket {
            claim: "c-42".into(),
            title: "Rotate the signing key".into(),
            brief: Some("Rotate the key yearly.".into()),
            base: "1111111".into(),
            head: "2222222".into(),
            checklist: rules.checklist_for(&tier.tier).to_vec(),
            tier,
            diff: diff.into(),
            diff_sha256: diff_sha256(diff),
            author_family: "claude".into(),
            reviewer_family: "gpt".into(),
        }
    }

    #[test]
    fn the_hash_is_stable_and_prefixed() {
        assert_eq!(
            diff_sha256(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let hash = diff_sha256("+x\n");
        assert_eq!(hash, diff_sha256("+x\n"));
        assert_ne!(hash, diff_sha256("+y\n"));
        assert_eq!(hash.len(), "sha256:".len() + 64);
    }

    #[test]
    fn the_prompt_holds_the_range_the_tier_the_checklist_and_the_shape() {
        let p = packet("--- a/src/lib.rs\n+++ b/src/lib.rs\n+x\n");
        let prompt = p.prompt();
        for needle in [
            "independent code reviewer",
            "of another family (claude)",
            "Claim c-42: Rotate the signing key",
            "Rotate the key yearly.",
            "Commits: 1111111..2222222",
            "## Risk tier: max",
            "Requested: low.",
            "Floor set by posture rules: max",
            "- max because security/keys.rs matched security/** (security)",
            "1. the change does what the brief asks\n2. tests cover the change\n",
            "```diff\n--- a/src/lib.rs\n+++ b/src/lib.rs\n+x\n```",
            &p.diff_sha256,
            VERDICT_SHAPE,
        ] {
            assert!(prompt.contains(needle), "{needle:?} not in:\n{prompt}");
        }
        let last = p.checklist.len();
        assert!(prompt.contains(&format!("{last}. {}", p.checklist[last - 1])));
        assert!(prompt.ends_with("Return only that JSON object as your final message.\n"));
    }

    #[test]
    fn a_long_diff_is_cut_with_a_marker_but_hashed_whole() {
        let line = format!("+{}\n", "é".repeat(98));
        let diff = line.repeat(MAX_PROMPT_DIFF_CHARS / 100 + 3);
        let p = packet(&diff);
        let prompt = p.prompt();
        assert_eq!(p.diff_sha256, diff_sha256(&diff));
        assert!(
            prompt.contains("[diff truncated: 300 more characters not shown;"),
            "{}",
            &prompt[prompt.len() - 2_000..]
        );
        assert!(!prompt.contains(diff.as_str()));
        let (shown, cut) = cut_diff(&diff);
        assert_eq!((shown.chars().count(), cut), (MAX_PROMPT_DIFF_CHARS, 300));
        assert!(shown.ends_with('\n'), "cut at the end of a line");
        let (shown, cut) = cut_diff("ab");
        assert_eq!((shown, cut), ("ab", 0));
    }

    #[test]
    fn a_diff_holding_a_fence_gets_a_longer_one() {
        let prompt = packet("+```rust\n+fn x() {}\n+```\n").prompt();
        assert!(prompt.contains("````diff\n+```rust"), "{prompt}");
        assert!(prompt.contains("+```\n````\n"), "{prompt}");
    }
}
