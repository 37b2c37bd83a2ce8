//! A person holding a lane (`flotilla lane attach`): who holds it, since
//! when, and the one turn asked for while it is held. Pure rules, no
//! processes and no clock: the lane actor carries out their effects and
//! keeps the hold on disk beside the lane's files.
//!
//! The rules:
//! - Only a lane whose CLI has an interactive session that resumes a
//!   native one can be held ([`steps_in`]: not exec, not grok), and only by
//!   one holder at a time.
//! - While held, no turn starts. The first turn asked for (`lane resume`,
//!   a fleet's dispatch) waits with its number reserved and starts when the
//!   hold ends; a second one is refused as busy. Messages to a persistent
//!   lane stay queued as they would behind a running turn.
//! - The holder is a process (pid and start time): the hold ends when it
//!   releases it or when that process is gone, including across a daemon
//!   restart (the hold is kept while its holder lives).

use serde::{Deserialize, Serialize};

use super::{CliKind, LaneError, LanePhase, LaneRecord};
use crate::model::Timestamp;

/// Who holds a lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// How the holder is shown (`lane attach (pid 123) on /dev/pts/1`).
    pub name: String,
    /// The holding process.
    pub pid: u32,
    /// Its start time (clock ticks since boot), to recognise it.
    pub pid_start: Option<u64>,
}

/// A turn asked for while the lane was held: it starts at the release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingTurn {
    /// The turn number it was given.
    pub turn: u32,
    /// Its prompt.
    pub prompt: String,
    /// Whether it continues the native session.
    pub resume: bool,
}

/// A lane's hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneHold {
    /// Who holds it.
    pub holder: Holder,
    /// Since when.
    pub since: Timestamp,
    /// The turn that waits for the release.
    pub waiting: Option<WaitingTurn>,
}

/// Why a lane cannot be held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HoldError {
    /// The lane's CLI cannot resume a native session.
    #[error(
        "lane {lane} runs {cli}, which has no interactive session that resumes a native one; attach works on claude, codex, gemini, qwen, pi and opencode lanes"
    )]
    NoResume {
        /// The lane.
        lane: String,
        /// Its CLI.
        cli: String,
    },
    /// No turn has left a native session yet.
    #[error("lane {0} has no native session yet (no turn has recorded one); run a turn first")]
    NoSession(String),
    /// Someone else holds it.
    #[error("lane {lane} is held by {holder}; wait for that attach to end")]
    Held {
        /// The lane.
        lane: String,
        /// Who holds it.
        holder: String,
        /// Since when (ms since the epoch).
        since: u64,
    },
    /// The release came from a process that does not hold it.
    #[error("lane {0} is not held by this process")]
    NotHolder(String),
}

/// Whether a person can step into a lane of `cli`: its interactive CLI
/// resumes the native session the lane's turns keep.
pub fn steps_in(cli: CliKind) -> bool {
    !matches!(cli, CliKind::Exec | CliKind::Grok)
}

impl LaneHold {
    /// `holder` takes `lane` at `now`; refused when its CLI cannot resume,
    /// when someone holds it already, or when it is idle with no native
    /// session (a running turn may still record one: see [`Self::ready`]).
    pub fn claim(
        current: Option<&LaneHold>,
        lane: &LaneRecord,
        holder: Holder,
        now: Timestamp,
    ) -> Result<LaneHold, HoldError> {
        let name = lane.spec.name.to_string();
        if !steps_in(lane.spec.cli) {
            return Err(HoldError::NoResume {
                lane: name,
                cli: lane.spec.cli.to_string(),
            });
        }
        if let Some(h) = current {
            return Err(HoldError::Held {
                lane: name,
                holder: h.holder.name.clone(),
                since: h.since.0,
            });
        }
        if lane.phase != LanePhase::Running {
            Self::session_of(lane)?;
        }
        Ok(LaneHold {
            holder,
            since: now,
            waiting: None,
        })
    }

    /// The native session the holder steps into, once no turn runs.
    pub fn session_of(lane: &LaneRecord) -> Result<&str, HoldError> {
        match &lane.native_session {
            Some(id) if !lane.session_gone() => Ok(id),
            _ => Err(HoldError::NoSession(lane.spec.name.to_string())),
        }
    }

    /// Whether the holder may step in now: `None` while a turn runs.
    pub fn ready(lane: &LaneRecord) -> Option<Result<&str, HoldError>> {
        (lane.phase != LanePhase::Running).then(|| Self::session_of(lane))
    }

    /// A turn asked for while held: it is given the next number and waits
    /// for the release. Refused when one waits already, or when the lane
    /// would refuse it anyway (an uncollected result, archived).
    pub fn ask_turn(
        &mut self,
        lane: &LaneRecord,
        prompt: String,
        resume: bool,
    ) -> Result<u32, LaneError> {
        let name = lane.spec.name.to_string();
        if self.waiting.is_some() || lane.phase == LanePhase::Running {
            return Err(LaneError::Held(name, self.holder.name.clone()));
        }
        lane.may_begin(resume)?;
        let turn = lane.turns + 1;
        self.waiting = Some(WaitingTurn {
            turn,
            prompt,
            resume,
        });
        Ok(turn)
    }

    /// Whether `pid` (started at `pid_start`) is the holder.
    pub fn held_by(&self, pid: u32, pid_start: Option<u64>) -> bool {
        self.holder.pid == pid && (pid_start.is_none() || self.holder.pid_start == pid_start)
    }
}

#[cfg(test)]
#[path = "hold_tests.rs"]
mod tests;
