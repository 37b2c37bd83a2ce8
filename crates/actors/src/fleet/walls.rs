//! Usage walls: a member whose turn failed on its provider's rate limit or
//! a usage limit (`rate_limited`, `usage_limit`) is not bounced: the same
//! turn goes back to the front of the queue. With a next model on its
//! role's fallback chain, the member moves to it and the turn runs again at
//! once; without one, the fleet pauses and resumes by itself when the wall
//! should have lifted: at the reset the CLI reported (plus a small
//! margin), else after the fleet's wall wait, doubled at each wall in a
//! row, at most 32 times. Pure, like [`super::run`].

use super::run::{Action, FleetRun, Queued, Rules, SUPERVISOR, TurnEnd};

/// How long after a reported reset the fleet resumes: the provider's
/// clock and ours differ a little.
pub(super) const RESET_MARGIN_MS: u64 = 2_000;

/// The error classes that are walls.
pub(super) const WALLS: [&str; 2] = ["rate_limited", "usage_limit"];

/// Whether a turn that ended like `end` hit a wall.
pub(super) fn is_wall(end: &TurnEnd) -> bool {
    !end.ok && end.class.as_deref().is_some_and(|c| WALLS.contains(&c))
}

impl FleetRun {
    /// `role`'s turn hit a wall: its work goes back to the front of the
    /// queue, then the member moves down its chain or the fleet pauses.
    pub(super) fn walled(&mut self, role: &str, end: &TurnEnd, r: &Rules<'_>) -> Vec<Action> {
        self.again(role);
        let class = end.class.clone().unwrap_or_default();
        let chain = r.chains.get(role).map_or(&[][..], Vec::as_slice);
        let at = self.models.get(role).copied().unwrap_or(0);
        if let Some(next) = chain.get(at) {
            self.models.insert(role.to_owned(), at + 1);
            self.note(
                r,
                format!("{role} hit a usage wall ({class}); it moves to the model {next}"),
            );
            return Vec::new();
        }
        self.walls += 1;
        let (until, source) = match end.resets_at_ms.filter(|t| *t > r.now_ms) {
            Some(reset) => (
                reset.saturating_add(RESET_MARGIN_MS),
                "at the reset its CLI reported",
            ),
            None => {
                let wait = r.wall_wait_ms.saturating_mul(1 << (self.walls - 1).min(5));
                (r.now_ms.saturating_add(wait), "after the fleet's wall wait")
            }
        };
        let reason = format!(
            "usage wall: {role} hit {class} ({}); resumes by itself in {} s, {source}",
            end.text.lines().next().unwrap_or_default(),
            (until - r.now_ms).div_ceil(1000)
        );
        self.wall_until_ms = Some(until);
        self.pause(reason.clone(), r);
        vec![Action::Paused(reason), Action::WallUntil(until)]
    }

    /// `role`'s turn in flight goes back to the front of the queue, to run
    /// again (nothing is bounced).
    pub(super) fn again(&mut self, role: &str) {
        let held = if let Some(ask) = self.serving.remove(role) {
            Some(Queued::Request(super::service::ServiceAsk {
                turn: None,
                ..ask
            }))
        } else if role == SUPERVISOR {
            self.supervisor.take().map(|a| Queued::Supervisor(a.prompt))
        } else {
            self.working.remove(role).map(|mut a| {
                a.turn = None;
                Queued::Work(a)
            })
        };
        if let Some(held) = held {
            self.queue.push_front(held);
        }
    }

    /// The model `role`'s next turn runs with: `None` for its own, or the
    /// chain's model it moved to.
    pub fn model_of(&self, role: &str, r: &Rules<'_>) -> Option<String> {
        let at = self.models.get(role).copied().unwrap_or(0);
        at.checked_sub(1)
            .and_then(|i| r.chains.get(role).and_then(|c| c.get(i)))
            .cloned()
    }

    /// The wall should have lifted: resume (once; a person's resume or a
    /// later pause wins).
    pub fn wall_lifted(&mut self, r: &Rules<'_>) -> Vec<Action> {
        match self.wall_until_ms {
            Some(until) if until <= r.now_ms => {
                self.wall_until_ms = None;
                self.note(r, "the usage wall should have lifted".into());
                self.resume(r)
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "walls_tests.rs"]
mod tests;
