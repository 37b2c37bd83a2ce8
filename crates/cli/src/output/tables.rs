//! The table-shaped human outputs: the roster, lanes, the outbox, the
//! hub's roster and the host's status. Each fits the terminal through
//! [`crate::table`]; the JSON shapes never come here.

use std::fmt::Write as _;

use flotilla_actors::protocol::{HostStatusReply, OutboxReply, RosterReply};
use flotilla_hub::view::HubRosterReply;

use super::or_dash;

/// A serde enum's wire name (`connected`, `queued`...).
fn wire_name<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The roster as a table.
pub(crate) fn roster(r: &RosterReply) -> String {
    let mut out = format!("host {} — {} peer(s)\n", r.host, r.peers.len());
    let mut t = crate::table::new(&[
        "PEER",
        "KIND",
        "PRODUCT",
        "STATE",
        "INBOX",
        "LAST SEEN",
        "LANE",
        "GROUPS",
    ]);
    for p in &r.peers {
        let g: Vec<&str> = p.groups.iter().map(|g| g.as_str()).collect();
        let lane = r.lanes.iter().find(|l| l.id == p.id);
        t.add_row([
            p.id.to_string(),
            p.kind.to_string(),
            or_dash(p.product.as_deref()),
            p.state.to_string(),
            p.inbox_depth.to_string(),
            or_dash(p.last_seen),
            lane.map_or_else(|| "-".to_owned(), roster_lane),
            g.join(","),
        ]);
    }
    out.push_str(&crate::table::render(&t));
    out
}

/// A lane's cell of the roster: phase, permission mode, context used and
/// owner, as the reference system's roster shows them.
fn roster_lane(l: &flotilla_actors::protocol::RosterLane) -> String {
    let context = l
        .context_used_pct
        .map_or_else(|| "ctx -".to_owned(), |p| format!("ctx {p:.0}%"));
    format!(
        "{} · {} · {context} · owner {}",
        l.phase, l.permissions, l.owner
    )
}

/// `lane list`: one row per lane.
pub(crate) fn lanes_table(lanes: &[flotilla_actors::protocol::LaneView]) -> String {
    let mut t = crate::table::new(&[
        "LANE",
        "CLI",
        "PHASE",
        "TURNS",
        "LAST",
        "PERMISSIONS",
        "OWNER",
        "RESULT",
    ]);
    for v in lanes {
        t.add_row([
            v.lane.to_string(),
            v.cli.to_string(),
            v.phase.to_string(),
            v.turns.to_string(),
            v.last_status
                .map_or_else(|| "-".to_owned(), |s| s.to_string()),
            v.permissions.to_string(),
            v.owner.to_string(),
            if v.uncollected { "waiting" } else { "-" }.to_owned(),
        ]);
    }
    let mut out = crate::table::render(&t);
    if lanes.iter().any(|v| v.uncollected) {
        out.push_str("(a waiting result is collected with: flotilla lane wait NAME)\n");
    }
    out
}

/// `host status`: the host, its actors as a table, and its hub link.
pub(crate) fn host_status(s: &HostStatusReply) -> String {
    let mut out = format!(
        "host {}  flotilla {} (protocol {})  pid {}  up {}s since {}\npeers {}  queued messages {}  accepted since start {}\n",
        s.host,
        s.version,
        s.protocol,
        s.pid,
        s.uptime_secs,
        s.started_at,
        s.peers,
        s.messages.queued,
        s.messages.accepted_since_start
    );
    let mut t = crate::table::new(&["ACTOR", "STATE", "RESTARTS", "LAST FAILURE"]);
    for a in &s.actors {
        t.add_row([
            a.name.to_string(),
            wire_name(a.state),
            a.restarts.to_string(),
            or_dash(a.last_failure.as_deref()),
        ]);
    }
    out.push_str(&crate::table::render(&t));
    match &s.hub_link {
        Some(link) => {
            let rtt = link.rtt_ms.map(|ms| format!("{ms:.2} ms"));
            let _ = writeln!(
                out,
                "hub {} ({})  {}  since {}  rtt {}  links {}",
                link.hub,
                link.hub_name,
                wire_name(link.state),
                link.since,
                or_dash(rtt),
                link.connects
            );
            if let Some(e) = &link.last_error {
                let _ = writeln!(out, "  last error: {e}");
            }
        }
        None => out.push_str("hub none\n"),
    }
    out
}

/// `outbox`: one row per recipient of each message sent.
pub(crate) fn outbox(r: &OutboxReply) -> String {
    let mut out = String::new();
    if r.messages.is_empty() {
        let _ = writeln!(out, "{} has sent nothing yet", r.peer);
    } else {
        let mut t = crate::table::new(&["SEQ", "MESSAGE", "SENT", "SUMMARY", "TO", "STATE"]);
        for m in &r.messages {
            for (i, to) in m.recipients.iter().enumerate() {
                let first = i == 0;
                let state = match &to.reason {
                    Some(reason) => format!("{} ({reason})", wire_name(to.state)),
                    None => wire_name(to.state),
                };
                t.add_row([
                    if first {
                        format!("#{}", m.seq)
                    } else {
                        String::new()
                    },
                    if first {
                        m.id.to_string()
                    } else {
                        String::new()
                    },
                    if first {
                        m.sent_at.to_string()
                    } else {
                        String::new()
                    },
                    if first {
                        or_dash(m.summary.as_deref())
                    } else {
                        String::new()
                    },
                    to.peer.to_string(),
                    state,
                ]);
            }
        }
        out.push_str(&crate::table::render(&t));
    }
    if r.waiting_for_hub > 0 {
        let _ = writeln!(
            out,
            "{} message(s) of this host wait for the hub (see `flotilla host status`)",
            r.waiting_for_hub
        );
    }
    out
}

/// `hub roster`: the hosts as a table, then every peer and lane, then
/// what the hub refused or slowed.
pub(crate) fn hub_roster(r: &HubRosterReply) -> String {
    let mut out = format!("hub {} — {} host(s)\n", r.hub, r.hosts.len());
    let mut hosts = crate::table::new(&[
        "HOST",
        "STATE",
        "VERSION",
        "RTT",
        "LAST SEEN",
        "FROM",
        "QUEUED",
    ]);
    let mut peers = crate::table::new(&["PEER", "KIND", "PRODUCT", "GROUPS"]);
    let mut notes = String::new();
    for h in &r.hosts {
        hosts.add_row([
            h.host.to_string(),
            h.state.clone(),
            format!("v{}", h.version),
            h.rtt_ms
                .map_or_else(|| "-".to_owned(), |ms| format!("{ms:.1} ms")),
            h.last_seen.to_string(),
            or_dash(h.remote.as_deref()),
            format!("{} msg / {} B", h.queued.messages, h.queued.bytes),
        ]);
        for p in h.peers.iter().chain(&h.lanes) {
            let g: Vec<&str> = p.groups.iter().map(|g| g.as_str()).collect();
            peers.add_row([
                p.id.to_string(),
                p.kind.to_string(),
                or_dash(p.product.as_deref()),
                g.join(","),
            ]);
        }
        for refused in &h.refused {
            let _ = writeln!(
                notes,
                "{}: refused {} in {}: {}",
                h.host, refused.peer, refused.group, refused.reason
            );
        }
        if h.budget.state == "slowed" {
            let _ = writeln!(notes, "{}: slowed: over its budget now", h.host);
        }
        if let Some(cut) = &h.budget.last_cut {
            let _ = writeln!(notes, "{}: cut at {}: {}", h.host, cut.at, cut.reason);
        }
    }
    out.push_str(&crate::table::render(&hosts));
    if peers.row_count() > 0 {
        out.push('\n');
        out.push_str(&crate::table::render(&peers));
    }
    out.push_str(&notes);
    out
}
