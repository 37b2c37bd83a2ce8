//! A lane's results on their way out: `wait` is shown the oldest result not
//! handed out (results a message's turn put aside first, then the record's)
//! and it counts as collected only once the client has it. It also builds
//! each turn's result. The owner's notices are `notify`'s.

use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::lane::{LanePhase, TurnResult, Usage, classify};
use flotilla_actors::model::Timestamp;

use super::cli::Outcome;
use super::lane::LaneState;
use super::process::TurnFiles;

/// What `Collect` found.
#[derive(Debug)]
pub enum Collected {
    /// The oldest result not handed out yet; it stays until `HandedOut`
    /// says the client has it.
    Result(Box<LaneEvent>),
    /// A turn is still running.
    Running,
    /// Nothing to collect.
    Nothing,
}

impl LaneState {
    /// The oldest result not handed out: put aside ones first, then the
    /// record's. Nothing changes until [`Self::handed_out`].
    pub(super) fn collect(&self) -> Collected {
        let oldest = self.shelf.first_key_value().map(|(t, r)| (*t, r));
        let result = oldest.or_else(|| {
            let turn = self.record.turns;
            self.record.uncollected.as_ref().map(|r| (turn, r))
        });
        if let Some((turn, result)) = result {
            let event = LaneEvent {
                seq: 0,
                at: result.finished_at,
                turn,
                kind: EventKind::TurnCompleted(result.clone()),
            };
            return Collected::Result(Box::new(event));
        }
        let waits = self.hold.as_ref().is_some_and(|h| h.waiting.is_some());
        if self.record.phase == LanePhase::Running || waits || self.released.is_some() {
            Collected::Running
        } else {
            Collected::Nothing
        }
    }

    /// The client has the result of `turn`: it is collected.
    pub(super) async fn handed_out(&mut self, turn: u32) {
        if self.shelf.remove(&turn).is_some() {
            let t = self.record.turns;
            self.save_with(t, Vec::new(), |w| w.unshelve = Some(turn))
                .await;
        } else if self.record.turns == turn
            && self.record.phase != LanePhase::Running
            && self.record.collect().is_some()
        {
            self.save().await;
        }
    }

    /// The turn's usage and cost with those of the attempts the watchdog
    /// killed before the last one (each attempt's output is on disk).
    fn with_earlier_attempts(&self, outcome: &Outcome) -> (Usage, Option<f64>) {
        let (mut usage, mut cost) = (outcome.usage, outcome.cost_usd);
        let Some(running) = &self.record.running else {
            return (usage, cost);
        };
        let spec = &self.record.spec;
        for attempt in 0..running.restarts {
            let files = TurnFiles::attempt(
                &self.ctx.home.state_dir,
                spec.name.as_str(),
                running.turn,
                attempt,
            );
            let killed = super::on_disk::failed_with_usage(spec, &self.ctx.config, &files, None);
            usage += killed.usage;
            if let Some(c) = killed.cost_usd {
                cost = Some(cost.unwrap_or(0.0) + c);
            }
        }
        (usage, cost)
    }

    /// Builds the result of the turn that just ended.
    pub(super) fn result(&self, outcome: Outcome, exit: Option<i32>) -> TurnResult {
        let started = self
            .record
            .running
            .as_ref()
            .map_or(Timestamp::now(), |t| t.started_at);
        let now = Timestamp::now();
        let (status, error) = match &self.stopping {
            Some((status, why)) => (
                *status,
                Some(
                    outcome
                        .error
                        .clone()
                        .map_or(why.clone(), |e| format!("{why}; {e}")),
                ),
            ),
            None => (outcome.status(), outcome.error.clone()),
        };
        let text = [error.as_deref(), outcome.result.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n");
        let error_class = classify(status, exit, &outcome.signal, Some(&text));
        let (usage, cost_usd) = self.with_earlier_attempts(&outcome);
        TurnResult {
            lane: self.id(),
            status,
            exit,
            result: outcome.result,
            error,
            usage,
            context_window: outcome.context_window,
            context_used_pct: outcome.context_used_pct,
            cost_usd,
            native_session_id: outcome
                .native_session_id
                .or_else(|| self.record.native_session.clone()),
            duration_ms: started.until(now).as_millis() as u64,
            finished_at: now,
            error_class,
        }
    }
}
