//! No restart while offline: before a member's failed or lost turn is fed
//! to its fleet's run (which would run it again), the member's model
//! endpoint is probed the way the lane watchdog probes it (a TCP
//! connection within 1 s to the host and port of the CLI's API base URL,
//! [`crate::lanes::endpoint`]). An endpoint that does not answer marks the
//! end, and the run waits ([`flotilla_actors::fleet::offline`]); this
//! module then probes again every [`PROBE_EVERY`] until it answers. It
//! decides nothing about the fleet.

use std::time::Duration;

use flotilla_actors::fleet::offline::worth_a_probe;
use flotilla_actors::fleet::{FleetSpec, TurnEnd};
use flotilla_actors::names::PeerName;

use super::runner::{FleetsMsg, FleetsRef};
use crate::lanes::endpoint;

/// How often a fleet waiting for the network probes again.
pub(super) const PROBE_EVERY: Duration = Duration::from_secs(3);

/// Marks `end` with `role`'s endpoint when the turn failed in a way the
/// network could explain and the endpoint does not answer now.
pub(super) async fn mark(spec: &FleetSpec, role: &str, end: &mut TurnEnd) {
    if !worth_a_probe(end) {
        return;
    }
    let Some(member) = spec.members().into_iter().find(|(r, _)| r == role) else {
        return;
    };
    if member.1.host.is_some() {
        // Its endpoint is on its own host: a probe from here says nothing.
        return;
    }
    let Some(at) = endpoint::of_cli(member.1.cli, &[], |k| std::env::var(k).ok()) else {
        return;
    };
    if !endpoint::reachable(&at).await {
        end.offline = Some(at);
    }
}

/// Probes `at` after [`PROBE_EVERY`] and tells the fleets' actor.
pub(super) fn again(me: FleetsRef, name: PeerName, at: String) {
    tokio::spawn(async move {
        tokio::time::sleep(PROBE_EVERY).await;
        let answers = endpoint::reachable(&at).await;
        let _ = me.cast(FleetsMsg::Probed(name, at, answers));
    });
}
