//! The roster's views walked through hundreds of changes (joins, group
//! changes, leaves, links going down and up), told one by one or gathered
//! in batches: every view a host built from its deltas must equal a full
//! recomputation.

use super::tests::{host, peer};
use super::*;
use flotilla_actors::federation::RosterPeer;

#[test]
fn incremental_views_always_equal_a_full_recomputation() {
    // A deterministic walk of joins, group changes, leaves and links going
    // down and up; after each step every linked host's view, as built from
    // the deltas it was sent, must be exactly what a full recomputation
    // gives.
    walk_views(7, 1);
}

#[test]
fn changes_told_together_leave_every_view_as_changes_told_one_by_one() {
    // The same walk with changes gathered (links still going up and down
    // between them, as the core gathers a burst) and told at random
    // moments: after each telling, every view is whole and exact.
    for seed in [7, 11, 23] {
        walk_views(seed, 4);
    }
}

/// A walk of 300 roster changes from `seed`, told after each change with a
/// chance of one in `tell_every`; after each telling every linked host's
/// view, as built from its deltas, must equal a full recomputation.
fn walk_views(seed: u64, tell_every: u64) {
    let names = ["a", "b", "c", "d", "e", "f"];
    let groups = ["g0", "g1", "g2", "g3"];
    let mut r = HubRoster::default();
    let mut seen: BTreeMap<HostName, BTreeMap<PeerId, RosterPeer>> = BTreeMap::new();
    let apply_to = |seen: &mut BTreeMap<HostName, BTreeMap<PeerId, RosterPeer>>,
                    deltas: Vec<(HostName, RosterDelta)>| {
        for (h, d) in deltas {
            let view = seen.entry(h).or_default();
            if d.reset {
                view.clear();
            }
            for id in d.removed {
                view.remove(&id);
            }
            for p in d.upserts {
                view.insert(p.record.id.clone(), p);
            }
        }
    };
    let mut state = seed;
    let mut untold = Untold::default();
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for name in names {
        let h = host(name);
        r.set_online(&h, true, None, Timestamp(0));
        let reset = r.reset_view(&h);
        apply_to(&mut seen, vec![(h, reset)]);
    }
    for step in 0..300 {
        let h = host(names[next(names.len() as u64) as usize]);
        let change = match next(5) {
            0..=2 => {
                let id = format!("{h}/p{}", next(4));
                let g1 = groups[next(4) as usize];
                let g2 = groups[next(4) as usize];
                let d = RosterDelta {
                    reset: false,
                    upserts: vec![peer(&id, &[g1, g2])],
                    removed: Vec::new(),
                };
                r.apply(&h, &d).expect("own")
            }
            3 => {
                let d = RosterDelta {
                    reset: false,
                    upserts: Vec::new(),
                    removed: vec![PeerId::parse(&format!("{h}/p{}", next(4))).expect("id")],
                };
                r.apply(&h, &d).expect("own")
            }
            _ => {
                let online = r.host(&h).is_some_and(|e| e.online);
                let change = r.set_online(&h, !online, None, Timestamp(step));
                if online {
                    seen.remove(&h);
                } else {
                    let reset = r.reset_view(&h);
                    apply_to(&mut seen, vec![(h.clone(), reset)]);
                }
                change
            }
        };
        untold.add(&change);
        if next(tell_every) != 0 {
            continue;
        }
        let deltas = r.untold_deltas(&std::mem::take(&mut untold));
        let each = deltas
            .into_iter()
            .flat_map(|(hosts, delta)| hosts.into_iter().map(move |h| (h, delta.clone())));
        apply_to(&mut seen, each.collect());
        for (viewer, view) in &seen {
            assert_eq!(*view, r.view_for(viewer), "step {step}, viewer {viewer}");
        }
    }
}
