//! Lane calls held while hosts relink after the hub's own restart. A hub
//! that has just started (after a crash, say) has no links yet: for
//! [`RELINK_GRACE`] a call to a host the hub knew, that is not linked yet,
//! waits for that host to link instead of being refused at once; at the
//! end of the grace what still waits is refused as before. Outside the
//! grace nothing is held (a call to a host that is not linked is answered
//! at once, see [`super::relay`]).
//!
//! Owns only the waiting calls and the grace's clock; relaying is
//! `relay`'s.

use std::time::{Duration, Instant};

use flotilla_actors::federation::LaneCall;
use flotilla_actors::names::HostName;

/// How long after the hub starts a call waits for its target to relink
/// (hosts ping every 5 s by default and redial at once after a reset).
pub(super) const RELINK_GRACE: Duration = Duration::from_secs(10);

/// A call waiting for its target: who asked, and the call (naming its
/// target in `host`).
pub(super) type Waiting = (HostName, LaneCall);

/// The calls waiting for their targets to relink.
#[derive(Debug)]
pub(super) struct RelinkWaits {
    /// When the grace ends.
    until: Instant,
    /// The waiting calls, in the order they came.
    waiting: Vec<Waiting>,
    /// Whether the grace was ended (by its timer).
    over: bool,
    /// Hosts that linked since the start (their relink is done).
    relinked: std::collections::HashSet<HostName>,
}

impl RelinkWaits {
    /// A grace that starts at `now` (the hub's start).
    pub(super) fn new(now: Instant) -> Self {
        Self {
            until: now + RELINK_GRACE,
            waiting: Vec::new(),
            over: false,
            relinked: Default::default(),
        }
    }

    /// Whether a call to `target`, not linked, may wait at `now`: the
    /// grace is on and the host has not linked since the start.
    pub(super) fn may_wait(&self, target: &HostName, now: Instant) -> bool {
        !self.over && now < self.until && !self.relinked.contains(target)
    }

    /// Keeps `call` (its target in `call.host`) from `asker` until its
    /// target links or the grace ends.
    pub(super) fn wait(&mut self, asker: HostName, call: LaneCall) {
        self.waiting.push((asker, call));
    }

    /// The calls for `target`, which has just linked, in order.
    pub(super) fn linked(&mut self, target: &HostName) -> Vec<Waiting> {
        if !self.over {
            self.relinked.insert(target.clone());
        }
        let (ready, rest) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(_, call)| call.host == *target);
        self.waiting = rest;
        ready
    }

    /// Forgets the calls `asker` made (its link dropped: no one to answer).
    pub(super) fn asker_gone(&mut self, asker: &HostName) {
        self.waiting.retain(|(a, _)| a != asker);
    }

    /// The grace is over: every call still waiting, to be refused (and
    /// none waits from now on).
    pub(super) fn end(&mut self) -> Vec<Waiting> {
        self.over = true;
        std::mem::take(&mut self.waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str) -> HostName {
        HostName::new(name).expect("host")
    }

    fn call(target: &str, n: u64) -> LaneCall {
        LaneCall {
            call: n,
            host: host(target),
            requester: "laptop/lead".parse().expect("peer"),
            groups: Vec::new(),
            op: "lane.start".into(),
            args: "{}".into(),
        }
    }

    #[test]
    fn only_a_host_not_back_yet_within_the_grace_is_waited_for() {
        let start = Instant::now();
        let mut waits = RelinkWaits::new(start);
        let work = host("work");
        assert!(waits.may_wait(&work, start + Duration::from_secs(1)));
        assert!(
            !waits.may_wait(&work, start + RELINK_GRACE),
            "after the grace"
        );
        assert!(waits.linked(&work).is_empty());
        assert!(
            !waits.may_wait(&work, start),
            "it relinked: a later drop is refused at once"
        );
    }

    #[test]
    fn a_link_releases_its_calls_in_order_and_the_end_the_rest() {
        let mut waits = RelinkWaits::new(Instant::now());
        waits.wait(host("laptop"), call("work", 1));
        waits.wait(host("laptop"), call("build", 2));
        waits.wait(host("ci"), call("work", 3));
        waits.asker_gone(&host("ci"));
        let ready: Vec<u64> = waits
            .linked(&host("work"))
            .iter()
            .map(|(_, c)| c.call)
            .collect();
        assert_eq!(ready, [1]);
        let rest: Vec<u64> = waits.end().iter().map(|(_, c)| c.call).collect();
        assert_eq!(rest, [2]);
        assert!(waits.end().is_empty());
        assert!(
            !waits.may_wait(&host("x"), Instant::now()),
            "none waits after the end"
        );
    }
}
