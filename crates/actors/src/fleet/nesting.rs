//! Teams of teams: a fleet started by a member of another fleet (a worker
//! that leads a sub-team, through the `fleet` tool or the command) is that
//! fleet's child. Each fleet keeps its own budget, clock, task and state,
//! and is started and stopped on its own; the tie is only recorded, so
//! `fleet status` can show the tree. Pure: the host passes every fleet's
//! record.

use serde::{Deserialize, Serialize};

use super::record::FleetRecord;
use crate::names::PeerName;

/// How deep fleets may nest: a team, its sub-teams, theirs, and one more.
pub const MAX_DEPTH: usize = 4;

/// The fleet whose member started a fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetParent {
    /// The parent fleet.
    pub fleet: PeerName,
    /// Its member that leads the child (`worker-1`, ...).
    pub role: String,
}

/// The parent of a fleet started as `as_peer`, among `fleets`: the fleet
/// that has a member lane of that name. `Err` when the new fleet would
/// nest deeper than [`MAX_DEPTH`].
pub fn parent_of<'a>(
    as_peer: Option<&PeerName>,
    fleets: impl Iterator<Item = &'a FleetRecord> + Clone,
) -> Result<Option<FleetParent>, String> {
    let Some(lane) = as_peer else {
        return Ok(None);
    };
    let Some(parent) = led_by(lane.as_str(), fleets.clone()) else {
        return Ok(None);
    };
    let mut depth = 1;
    let mut at = parent.fleet.clone();
    while let Some(up) = fleets
        .clone()
        .find(|r| r.spec.name == at)
        .and_then(|r| r.parent.clone())
    {
        depth += 1;
        if depth >= MAX_DEPTH {
            return Err(format!(
                "{lane} is a member of {}, which is already {depth} levels down; fleets nest at \
                 most {MAX_DEPTH} deep",
                parent.fleet
            ));
        }
        at = up.fleet;
    }
    Ok(Some(parent))
}

/// The fleet and role whose member lane is `lane`.
fn led_by<'a>(
    lane: &str,
    mut fleets: impl Iterator<Item = &'a FleetRecord>,
) -> Option<FleetParent> {
    fleets.find_map(|r| {
        r.spec
            .members()
            .into_iter()
            .find(|(role, _)| r.spec.lane_of(role) == lane)
            .map(|(role, _)| FleetParent {
                fleet: r.spec.name.clone(),
                role,
            })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::fleet::{FleetRun, FleetSpec};

    fn record(name: &str, parent: Option<(&str, &str)>) -> FleetRecord {
        let spec: FleetSpec = serde_json::from_value(serde_json::json!({
            "name": name,
            "supervisor": {"cli": "exec", "command": "true"},
            "workers": [{"cli": "exec", "command": "true"}],
            "dir": "/tmp",
        }))
        .unwrap();
        FleetRecord {
            spec,
            started_ms: 0,
            stopped: false,
            run: FleetRun::default(),
            parent: parent.map(|(f, r)| FleetParent {
                fleet: PeerName::new(f).unwrap(),
                role: r.into(),
            }),
            remote_seen: Default::default(),
        }
    }

    fn name(n: &str) -> PeerName {
        PeerName::new(n).unwrap()
    }

    #[test]
    fn a_fleet_started_by_a_member_is_its_fleets_child() {
        let fleets = [record("top", None)];
        let p = parent_of(Some(&name("top-worker-1")), fleets.iter()).unwrap();
        assert_eq!(
            p,
            Some(FleetParent {
                fleet: name("top"),
                role: "worker-1".into()
            })
        );
        assert_eq!(parent_of(Some(&name("lead")), fleets.iter()).unwrap(), None);
        assert_eq!(parent_of(None, fleets.iter()).unwrap(), None);
    }

    #[test]
    fn fleets_nest_at_most_four_deep() {
        let fleets = [
            record("a", None),
            record("b", Some(("a", "worker-1"))),
            record("c", Some(("b", "worker-1"))),
            record("d", Some(("c", "worker-1"))),
        ];
        assert!(parent_of(Some(&name("c-worker-1")), fleets.iter()).is_ok());
        let e = parent_of(Some(&name("d-worker-1")), fleets.iter()).unwrap_err();
        assert!(e.contains("at most 4 deep"), "{e}");
    }
}
