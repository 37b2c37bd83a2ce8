//! Run records: what a repository remembers of its claims, in git.
//!
//! Every record is one commit on [`RECORDS_REF`], appended, never
//! rewritten: the commit's parent is the record before it, its tree is
//! empty, and its message is a subject line (`flotilla: KIND CLAIM`), a
//! blank line and the record as one JSON object ([`Record`]). Because the
//! records travel with the repository (pushed next to the claim's branch),
//! a successor with only a clone folds them into the same [`Board`].
//!
//! Owns the record's shape, its encoding in a commit message, and the fold
//! of records into a board. Must not run git (the host's `governance::git`
//! does) or look at the clock (times come in on the records).

use serde::{Deserialize, Serialize};

use super::claim::ClaimId;
use crate::model::Timestamp;

/// The ref every record is a commit on.
pub const RECORDS_REF: &str = "refs/flotilla/records";
/// The schema id every record carries.
pub const RECORD_SCHEMA: &str = "flotilla.record.v1";

/// One run record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    /// Always [`RECORD_SCHEMA`].
    pub schema: String,
    /// When it was written.
    pub at: Timestamp,
    /// The host that wrote it.
    pub host: String,
    /// The claim it is about.
    pub claim: ClaimId,
    /// What happened.
    #[serde(flatten)]
    pub entry: Entry,
}

/// What a record says happened, tagged by `kind` with its fields in `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Entry {
    /// A claim was added.
    Claim {
        /// What the claim is for.
        title: String,
        /// Its branch (`flotilla/<id>`).
        branch: String,
        /// The branch it starts from.
        base: String,
        /// The brief given with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        brief: Option<String>,
    },
    /// A lane started work on the claim, in the claim's worktree.
    Lane {
        /// The lane's peer id (`HOST/NAME`).
        lane: String,
        /// Its CLI.
        cli: String,
        /// The worktree it runs in, on the writing host.
        worktree: String,
    },
    /// A lane's turn on the claim ended.
    Turn {
        /// The lane's peer id.
        lane: String,
        /// How it ended (`completed`, `failed`, ...).
        status: String,
        /// The branch's head when it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head: Option<String>,
        /// What the lane said at its end (its answer or its error), cut
        /// to [`SUMMARY_CHARS`] characters ([`turn_summary`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// A fleet's worker on the claim handed over to a fresh session (its
    /// context was nearly full) with this note.
    Handoff {
        /// The lane's peer id.
        lane: String,
        /// The note its successor started with.
        note: crate::fleet::rotation::HandoffNote,
    },
    /// A reviewer's verdict on the claim's branch, bound to one commit and
    /// the hash of the diff it was shown.
    Gate(Box<GateRecord>),
    /// A change request was opened for the claim's branch.
    Change {
        /// Where: `github`, `gitlab` or `local`.
        forge: super::change::Forge,
        /// The request's address, when a forge opened it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// The claim's branch.
        branch: String,
        /// The branch it asks to merge into.
        base: String,
        /// The branch's head when it was opened.
        head: String,
        /// The commits past the base, oldest first.
        commits: Vec<String>,
        /// [`super::diff_sha256`] of the diff from the base.
        diff_sha256: String,
    },
    /// The claim's branch was merged into its base.
    Merge {
        /// Who merged.
        by: super::merge::MergeBy,
        /// The merge commit on the base.
        commit: String,
        /// The claim's head that was merged.
        head: String,
        /// The base branch.
        base: String,
        /// Where the gate stood for that head.
        gate: super::gate::GateStatus,
        /// A person merged without a passed gate, saying so.
        without_gate: bool,
        /// The checks that passed first (the coordinator's).
        #[serde(default)]
        checks: Vec<String>,
    },
    /// The claim was dropped; its worktree is gone unless kept.
    Drop {
        /// Whether its worktree was kept.
        kept: bool,
    },
}

/// The most characters of a turn's summary kept in its record.
pub const SUMMARY_CHARS: usize = 1_000;

/// A turn's summary for its record: `text` trimmed and cut to
/// [`SUMMARY_CHARS`] characters (with `…` when cut); `None` when empty.
pub fn turn_summary(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut cut: String = text.chars().take(SUMMARY_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    Some(cut)
}

impl Entry {
    /// The record's kind, as in its JSON and its commit's subject.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::Claim { .. } => "claim",
            Entry::Lane { .. } => "lane",
            Entry::Turn { .. } => "turn",
            Entry::Handoff { .. } => "handoff",
            Entry::Gate(_) => "gate",
            Entry::Merge { .. } => "merge",
            Entry::Change { .. } => "change",
            Entry::Drop { .. } => "drop",
        }
    }
}

/// What a review decided, and exactly what it saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateRecord {
    /// The commit reviewed (the branch's head then).
    pub commit: String,
    /// The commit the diff starts from.
    pub base: String,
    /// [`super::diff_sha256`] of the diff the reviewer was shown.
    pub diff_sha256: String,
    /// The tier reviewed at.
    pub tier: String,
    /// The tier asked for, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_tier: Option<String>,
    /// The author's CLI and its model family.
    pub author: String,
    /// The author's model family, if it has one.
    pub author_family: Option<String>,
    /// The reviewer's CLI.
    pub reviewer: String,
    /// The reviewer's model family.
    pub reviewer_family: String,
    /// The reviewer's lane (`HOST/NAME`).
    pub lane: String,
    /// `pass`, `fail`, or `bounced` when no well-formed verdict came back.
    pub outcome: GateOutcome,
    /// The findings that block a merge.
    #[serde(default)]
    pub blocking: Vec<super::Finding>,
    /// Notes that do not block.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Why a verdict was bounced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounced: Option<String>,
}

/// What a review decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// The reviewer passed the change.
    Pass,
    /// The reviewer failed it, with blocking findings.
    Fail,
    /// The reviewer's answer was not a well-formed verdict, twice.
    Bounced,
}

/// Why a commit message is not a record this version reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// No blank line separates the subject from the JSON.
    #[error("a run record's message has no JSON after its subject line")]
    NoBody,
    /// The JSON does not parse as a record.
    #[error("a run record does not parse: {0}")]
    Json(String),
    /// A schema this version does not know.
    #[error("a run record has schema {0:?}; this version reads {RECORD_SCHEMA}")]
    Schema(String),
}

impl Record {
    /// A record of `entry` about `claim`.
    pub fn new(claim: ClaimId, entry: Entry, host: &str, at: Timestamp) -> Self {
        Self {
            schema: RECORD_SCHEMA.to_owned(),
            at,
            host: host.to_owned(),
            claim,
            entry,
        }
    }

    /// The commit message that carries it.
    pub fn to_message(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("flotilla: {} {}\n\n{json}\n", self.entry.kind(), self.claim)
    }

    /// Reads a record back from its commit's message.
    pub fn from_message(message: &str) -> Result<Self, RecordError> {
        let (_, body) = message.split_once("\n\n").ok_or(RecordError::NoBody)?;
        let record: Record =
            serde_json::from_str(body.trim()).map_err(|e| RecordError::Json(e.to_string()))?;
        if record.schema != RECORD_SCHEMA {
            return Err(RecordError::Schema(record.schema));
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(entry: Entry) -> Record {
        let id = ClaimId::parse("context-meter").expect("id");
        Record::new(id, entry, "laptop", Timestamp(1_790_000_000_000))
    }

    #[test]
    fn a_record_goes_through_its_commit_message_unchanged() {
        let rec = record(Entry::Claim {
            title: "Context meter".into(),
            branch: "flotilla/context-meter".into(),
            base: "main".into(),
            brief: Some("show it".into()),
        });
        let message = rec.to_message();
        assert!(
            message.starts_with("flotilla: claim context-meter\n\n{"),
            "{message}"
        );
        assert_eq!(Record::from_message(&message), Ok(rec));
    }

    #[test]
    fn the_json_names_its_kind_and_keeps_fields_in_data() {
        let rec = record(Entry::Drop { kept: true });
        let value: serde_json::Value =
            serde_json::from_str(rec.to_message().split_once("\n\n").expect("body").1)
                .expect("json");
        assert_eq!(value["kind"], "drop");
        assert_eq!(value["data"]["kept"], true);
        assert_eq!(value["schema"], RECORD_SCHEMA);
        assert_eq!(value["claim"], "context-meter");
    }

    #[test]
    fn what_is_not_a_record_is_named() {
        assert_eq!(
            Record::from_message("just a subject"),
            Err(RecordError::NoBody)
        );
        assert!(matches!(
            Record::from_message("s\n\n{not json"),
            Err(RecordError::Json(_))
        ));
        let mut rec = record(Entry::Drop { kept: false });
        rec.schema = "flotilla.record.v9".into();
        let text = rec.to_message();
        assert_eq!(
            Record::from_message(&text),
            Err(RecordError::Schema("flotilla.record.v9".into()))
        );
    }
}
