//! The lane state machine: which verbs are allowed when, what each changes.
//! Pure: callers pass `now` and carry out the effects.

use serde::{Deserialize, Serialize};

use super::answers::OwedReply;
use super::{ErrorClass, LaneSpec, TurnResult};
use crate::model::Timestamp;
use crate::names::MessageId;

/// Where a lane is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LanePhase {
    /// No process; ready for a turn.
    Idle,
    /// A turn's process is running.
    Running,
    /// Put away; keeps its events; `resume` brings it back.
    Archived,
}

impl std::fmt::Display for LanePhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LanePhase::Idle => "idle",
            LanePhase::Running => "running",
            LanePhase::Archived => "archived",
        })
    }
}

/// The turn in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningTurn {
    /// Turn number.
    pub turn: u32,
    /// When it started.
    pub started_at: Timestamp,
    /// When it must end.
    pub deadline: Option<Timestamp>,
    /// The supervising process (the lane shim), once started.
    pub pid: Option<u32>,
    /// Its start time (clock ticks since boot), to recognise it after a restart.
    pub pid_start: Option<u64>,
    /// Whether the turn continues the native session.
    pub resume: bool,
    /// Set once an interrupt was asked for.
    pub interrupted: bool,
    /// Watchdog restarts of this turn.
    pub restarts: u32,
    /// Bytes of the turn's stdout already turned into events.
    pub output_offset: u64,
}

/// A lane as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneRecord {
    /// How it was asked for.
    pub spec: LaneSpec,
    /// Where it is.
    pub phase: LanePhase,
    /// Turns started so far.
    pub turns: u32,
    /// The CLI's own session id, for resume.
    pub native_session: Option<String>,
    /// The running turn.
    pub running: Option<RunningTurn>,
    /// The last result not yet handed out by `wait`.
    pub uncollected: Option<TurnResult>,
    /// The last result, collected or not.
    pub last_result: Option<TurnResult>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When its last turn ended.
    pub finished_at: Option<Timestamp>,
    /// Prompts (from messages) waiting for the next turn.
    pub queued: Vec<String>,
    /// The messages among `queued` (since store version 7).
    pub queued_from: Vec<MessageId>,
    /// The messages the running turn answers: its result goes back to
    /// their senders, threaded to each ([`super::answers`]).
    pub answering: Vec<MessageId>,
    /// Answers of ended turns not yet sent.
    pub replies_owed: Vec<OwedReply>,
    /// Notices (a child lane's end) held for the next turn's prompt,
    /// never a turn of their own.
    pub asides: Vec<String>,
}

/// Why a verb is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaneError {
    /// A turn is running.
    #[error("lane {0} is running a turn; wait for it (flotilla lane wait {0}) or interrupt it")]
    Busy(String),
    /// A result is waiting to be collected.
    #[error("lane {0} has an uncollected result; collect it first with `flotilla lane wait {0}`")]
    Uncollected(String),
    /// The lane is archived and the verb needs it active.
    #[error("lane {0} is archived; `flotilla lane resume {0}` brings it back")]
    Archived(String),
    /// Nothing is running.
    #[error("lane {0} is not running a turn")]
    NotRunning(String),
    /// The CLI has no native session to continue.
    #[error("lane {0} has no native session to resume yet")]
    NoSession(String),
    /// A person holds the lane (`lane attach`) and a turn already waits
    /// for the release.
    #[error(
        "lane {0} is held by {1} (flotilla lane attach) and a turn already waits for its release; ask again once it ends"
    )]
    Held(String, String),
}

/// What the actor must do to start a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPlan {
    /// The turn's number.
    pub turn: u32,
    /// Continue the native session.
    pub resume: bool,
    /// The deadline, if any.
    pub deadline: Option<Timestamp>,
}

impl LaneRecord {
    /// A new, idle lane.
    pub fn new(spec: LaneSpec, now: Timestamp) -> Self {
        Self {
            spec,
            phase: LanePhase::Idle,
            turns: 0,
            native_session: None,
            running: None,
            uncollected: None,
            last_result: None,
            created_at: now,
            finished_at: None,
            queued: Vec::new(),
            queued_from: Vec::new(),
            answering: Vec::new(),
            replies_owed: Vec::new(),
            asides: Vec::new(),
        }
    }

    fn name(&self) -> String {
        self.spec.name.to_string()
    }

    /// Starts a turn: the first (`resume` false) or a follow-up. A follow-up
    /// is refused while a result is uncollected; it unarchives the lane.
    pub fn begin_turn(&mut self, resume: bool, now: Timestamp) -> Result<TurnPlan, LaneError> {
        self.may_begin(resume)?;
        self.turns += 1;
        let deadline = self.spec.timeout_secs.map(|s| Timestamp(now.0 + s * 1000));
        let continues = resume && self.turns > 1 && !self.session_gone();
        self.phase = LanePhase::Running;
        self.running = Some(RunningTurn {
            turn: self.turns,
            started_at: now,
            deadline,
            pid: None,
            pid_start: None,
            resume: continues,
            interrupted: false,
            restarts: 0,
            output_offset: 0,
        });
        Ok(TurnPlan {
            turn: self.turns,
            resume: continues,
            deadline,
        })
    }

    /// Whether a turn (a follow-up when `resume`) may begin now.
    pub fn may_begin(&self, resume: bool) -> Result<(), LaneError> {
        if self.phase == LanePhase::Running {
            return Err(LaneError::Busy(self.name()));
        }
        if self.uncollected.is_some() {
            return Err(LaneError::Uncollected(self.name()));
        }
        if self.phase == LanePhase::Archived && !resume {
            return Err(LaneError::Archived(self.name()));
        }
        Ok(())
    }

    /// The CLI said at the last turn that the native session to resume no
    /// longer exists: the next turn starts a new one.
    pub fn session_gone(&self) -> bool {
        self.last_result
            .as_ref()
            .is_some_and(|r| r.error_class == Some(ErrorClass::SessionNotFound))
    }

    /// Records the end of the running turn.
    pub fn finish_turn(&mut self, result: TurnResult) {
        if let Some(id) = &result.native_session_id {
            self.native_session = Some(id.clone());
        }
        if result.error_class == Some(ErrorClass::SessionNotFound) {
            self.native_session = None;
        }
        self.running = None;
        self.phase = LanePhase::Idle;
        self.finished_at = Some(result.finished_at);
        self.owe_replies(&result);
        self.last_result = Some(result.clone());
        self.uncollected = Some(result);
    }

    /// The prompt of the next turn from the messages that arrived while a
    /// turn ran (in arrival order, one prompt), when the lane is idle and
    /// has some; they are taken off the queue.
    pub fn take_queued(&mut self) -> Option<(String, Vec<MessageId>)> {
        if self.phase != LanePhase::Idle || self.queued.is_empty() {
            return None;
        }
        let prompt = std::mem::take(&mut self.queued).join("\n\n");
        Some((prompt, std::mem::take(&mut self.queued_from)))
    }

    /// Hands out the uncollected result, once.
    pub fn collect(&mut self) -> Option<TurnResult> {
        self.uncollected.take()
    }

    /// Marks an interrupt; refused when nothing runs.
    pub fn mark_interrupted(&mut self) -> Result<(), LaneError> {
        match self.running.as_mut() {
            Some(r) => {
                r.interrupted = true;
                Ok(())
            }
            None => Err(LaneError::NotRunning(self.name())),
        }
    }

    /// Archives an idle lane (a running one must be interrupted first).
    pub fn archive(&mut self) -> Result<(), LaneError> {
        if self.phase == LanePhase::Running {
            return Err(LaneError::Busy(self.name()));
        }
        self.phase = LanePhase::Archived;
        Ok(())
    }

    /// Whether the lane should be archived by now: finished and past its
    /// grace period. Persistence changes ownership only (as in the
    /// reference system): a persistent lane is archived too unless it was
    /// started with no grace period (`--no-auto-archive`), and a message
    /// brings it back ([`LaneRecord::wake`]).
    pub fn auto_archive_due(&self, now: Timestamp) -> bool {
        match (self.phase, self.finished_at, self.spec.auto_archive_secs) {
            (LanePhase::Idle, Some(done), Some(grace)) => now.0 >= done.0 + grace * 1000,
            _ => false,
        }
    }

    /// A message arrived for an archived persistent lane: it is idle again,
    /// so the message can start its turn whether or not the CLI resumes
    /// sessions. Returns whether it was archived.
    pub fn wake(&mut self) -> bool {
        let archived = self.phase == LanePhase::Archived && self.spec.persistent;
        if archived {
            self.phase = LanePhase::Idle;
        }
        archived
    }

    /// Whether the running turn is past its deadline.
    pub fn deadline_passed(&self, now: Timestamp) -> bool {
        self.running
            .as_ref()
            .and_then(|r| r.deadline)
            .is_some_and(|d| now >= d)
    }
}
