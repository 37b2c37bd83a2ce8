//! The board: every claim of a repository and where it stands, folded from
//! its run records alone.
//!
//! Owns the fold and the rules that read it (which claims are in flight,
//! whether another may start). Must not read git or the daemon's lanes:
//! the host adds what it sees live (a lane's phase) when it shows the board.

use serde::{Deserialize, Serialize};

use super::claim::ClaimId;
use super::record::{Entry, GateRecord, Record};
use crate::model::Timestamp;

/// Where a claim stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// Added; no lane has worked on it yet.
    Open,
    /// A lane works (or worked) on it in its worktree.
    InFlight,
    /// Dropped.
    Dropped,
    /// Merged into its base.
    Merged,
}

/// One claim as its records tell it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClaimState {
    /// Its id.
    pub id: ClaimId,
    /// What it is for.
    pub title: String,
    /// Its branch.
    pub branch: String,
    /// The branch it starts from.
    pub base: String,
    /// Its brief, if it was given one.
    pub brief: Option<String>,
    /// Where it stands.
    pub status: ClaimStatus,
    /// The lane that last started work on it (`HOST/NAME`).
    pub lane: Option<String>,
    /// That lane's CLI.
    pub cli: Option<String>,
    /// The worktree it runs in, on the host that wrote the lane record.
    pub worktree: Option<String>,
    /// How the last turn ended.
    pub last_turn: Option<String>,
    /// The branch's head at the last turn's end.
    pub head: Option<String>,
    /// The host that added it.
    pub added_by: String,
    /// When it was added.
    pub added_at: Timestamp,
    /// When its last record was written.
    pub updated_at: Timestamp,
    /// How many records it has.
    pub records: u32,
    /// The last review, if any.
    pub gate: Option<GateState>,
    /// Its change request (`github`, `gitlab` or `local`) and its address.
    pub change: Option<ChangeState>,
}

/// A claim's change request, as the board shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeState {
    /// Where it lives.
    pub forge: super::change::Forge,
    /// Its address, when a forge opened it.
    pub url: Option<String>,
    /// The head it was opened at.
    pub head: String,
}

/// The last review of a claim, as the board shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateState {
    /// Which review of the claim it was (1 for the first).
    pub round: u32,
    /// When it was recorded.
    pub at: Timestamp,
    /// What it decided and saw.
    #[serde(flatten)]
    pub record: GateRecord,
}

/// Every claim of one repository, in the order they were added.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Board {
    /// The claims.
    pub claims: Vec<ClaimState>,
}

/// Why another claim may not start now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{in_flight} claim(s) of this repository are in flight ({names}); starting {starting} as \
     well is over the policy's concurrency of {limit}: drop or finish one (flotilla claim drop \
     ID), or raise `concurrency` in policy.toml"
)]
pub struct ConcurrencyRefusal {
    /// Other claims in flight.
    pub in_flight: usize,
    /// Their ids, comma-separated (`none` when there are none).
    pub names: String,
    /// The claims asked to start, comma-separated.
    pub starting: String,
    /// The policy's limit.
    pub limit: u32,
}

impl Board {
    /// Folds records, oldest first. A record that does not fit (a second
    /// claim of one id, an entry for a claim never added or already
    /// dropped) is skipped and described in the returned notes.
    pub fn fold<'a>(records: impl IntoIterator<Item = &'a Record>) -> (Self, Vec<String>) {
        let mut board = Board::default();
        let mut notes = Vec::new();
        for record in records {
            if let Err(note) = board.apply(record) {
                notes.push(note);
            }
        }
        (board, notes)
    }

    /// One claim.
    pub fn get(&self, id: &ClaimId) -> Option<&ClaimState> {
        self.claims.iter().find(|c| &c.id == id)
    }

    /// Whether a claim of that id was ever added.
    pub fn has(&self, id: &ClaimId) -> bool {
        self.get(id).is_some()
    }

    /// Whether `id` may get a worktree now under a concurrency of `limit`:
    /// a claim already in flight always may (it has one).
    pub fn may_start(&self, id: &ClaimId, limit: u32) -> Result<(), ConcurrencyRefusal> {
        self.may_start_all(std::slice::from_ref(id), limit)
    }

    /// Whether every claim of `ids` may be in flight at once (a fleet's
    /// workers) under a concurrency of `limit`, with those already in
    /// flight.
    pub fn may_start_all(&self, ids: &[ClaimId], limit: u32) -> Result<(), ConcurrencyRefusal> {
        let busy: Vec<&str> = self
            .claims
            .iter()
            .filter(|c| c.status == ClaimStatus::InFlight && !ids.contains(&c.id))
            .map(|c| c.id.as_str())
            .collect();
        let new: Vec<&str> = ids
            .iter()
            .filter(|id| {
                !self
                    .get(id)
                    .is_some_and(|c| c.status == ClaimStatus::InFlight)
            })
            .map(ClaimId::as_str)
            .collect();
        let mine = ids.len() - new.len();
        if new.is_empty() || busy.len() + mine + new.len() <= limit as usize {
            return Ok(());
        }
        Err(ConcurrencyRefusal {
            in_flight: busy.len() + mine,
            names: match busy.is_empty() && mine == 0 {
                true => "none".to_owned(),
                false => busy.join(", "),
            },
            starting: new.join(", "),
            limit,
        })
    }

    fn apply(&mut self, record: &Record) -> Result<(), String> {
        let id = &record.claim;
        if let Entry::Claim {
            title,
            branch,
            base,
            brief,
        } = &record.entry
        {
            if self.has(id) {
                return Err(format!("claim {id} was added twice; the second is skipped"));
            }
            self.claims.push(ClaimState {
                id: id.clone(),
                title: title.clone(),
                branch: branch.clone(),
                base: base.clone(),
                brief: brief.clone(),
                status: ClaimStatus::Open,
                lane: None,
                cli: None,
                worktree: None,
                last_turn: None,
                head: None,
                added_by: record.host.clone(),
                added_at: record.at,
                updated_at: record.at,
                records: 1,
                gate: None,
                change: None,
            });
            return Ok(());
        }
        let kind = record.entry.kind();
        let Some(claim) = self.claims.iter_mut().find(|c| &c.id == id) else {
            return Err(format!(
                "a {kind} record names claim {id}, never added; skipped"
            ));
        };
        if matches!(claim.status, ClaimStatus::Dropped | ClaimStatus::Merged) {
            let ended = if claim.status == ClaimStatus::Merged {
                "merged"
            } else {
                "dropped"
            };
            return Err(format!(
                "a {kind} record came after claim {id} was {ended}; skipped"
            ));
        }
        claim.updated_at = record.at;
        claim.records += 1;
        match &record.entry {
            Entry::Lane {
                lane,
                cli,
                worktree,
            } => {
                claim.status = ClaimStatus::InFlight;
                claim.lane = Some(lane.clone());
                claim.cli = Some(cli.clone());
                claim.worktree = Some(worktree.clone());
            }
            Entry::Turn { status, head, .. } => {
                claim.last_turn = Some(status.clone());
                claim.head = head.clone().or(claim.head.take());
            }
            Entry::Gate(gate) => {
                let round = claim.gate.as_ref().map_or(1, |g| g.round + 1);
                claim.gate = Some(GateState {
                    round,
                    at: record.at,
                    record: (**gate).clone(),
                });
            }
            Entry::Handoff { .. } => {}
            Entry::Drop { .. } => claim.status = ClaimStatus::Dropped,
            Entry::Merge { .. } => claim.status = ClaimStatus::Merged,
            Entry::Change {
                forge, url, head, ..
            } => {
                claim.change = Some(ChangeState {
                    forge: *forge,
                    url: url.clone(),
                    head: head.clone(),
                });
            }
            Entry::Claim { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "board_tests.rs"]
mod tests;
