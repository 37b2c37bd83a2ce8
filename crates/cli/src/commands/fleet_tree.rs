//! The team tree of `fleet status`: a fleet, the fleet whose member leads
//! it, and the sub-fleets its members started, all the way down, from
//! `fleet list` (each fleet's `parent` and `children`). Text only: the
//! JSON shapes carry the links and never the drawn tree.

use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{FleetState, FleetView};

/// Fleets nest at most this deep; the drawing stops there too (a loop in
/// a hand-edited store never hangs a status).
const DEPTH: usize = 8;

fn state(s: FleetState) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The lines of `root`'s tree among `all`: empty when it neither leads
/// nor is led.
pub(crate) fn lines(root: &FleetView, all: &[FleetView]) -> Vec<String> {
    if root.parent.is_none() && root.children.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["  team:".to_owned()];
    if let Some(p) = &root.parent {
        out.push(format!("    led by {} of fleet {}", p.role, p.fleet));
    }
    out.push(format!("    {} ({})", root.name, state(root.state)));
    below(&root.name, all, "    ", 0, &mut out);
    out
}

fn below(name: &PeerName, all: &[FleetView], indent: &str, depth: usize, out: &mut Vec<String>) {
    let Some(view) = all.iter().find(|f| &f.name == name) else {
        return;
    };
    if depth >= DEPTH {
        return;
    }
    let count = view.children.len();
    for (i, child) in view.children.iter().enumerate() {
        let last = i + 1 == count;
        let (branch, more) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        out.push(format!(
            "{indent}{branch}{} ({}), led by {}",
            child.name,
            state(child.state),
            child.role
        ));
        below(&child.name, all, &format!("{indent}{more}"), depth + 1, out);
    }
}
