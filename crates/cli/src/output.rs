//! Printing results: `--json` prints the daemon's reply (a documented shape
//! with a schema id) as one JSON document on stdout; otherwise a short human
//! rendering. Nothing but results goes to stdout.
//!
//! Every write to stdout goes through [`write_stdout`] (or the [`out!`] and
//! [`outln!`] macros over it), never `print!`/`println!`, which panic when the
//! reader has gone (`flotilla roster | head -1`). A closed pipe becomes
//! [`StdoutError::Closed`], which the command returns like any error and
//! `main` turns into a quiet exit 0, as ripgrep does. SIGPIPE stays ignored
//! (Rust's default): resetting it would let a closed socket kill the daemon,
//! which is this same binary.

use std::fmt::Write as _;
use std::io::Write as _;

use flotilla_actors::model::Message;
use flotilla_actors::protocol::{HostStatusReply, PeerView, RosterReply};
use serde::Serialize;

/// Why a write to stdout failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StdoutError {
    /// The reader went away (a closed pipe): the command stops, and exits 0
    /// without a word.
    #[error("stdout was closed by its reader")]
    Closed,
    /// Any other failure (a full disk, a revoked terminal).
    #[error("cannot write to stdout: {0}")]
    Failed(#[source] std::io::Error),
    /// A value that cannot be rendered as JSON (a bug).
    #[error("cannot render JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes `text` to stdout and flushes it, so a closed pipe shows at once.
pub(crate) fn write_stdout(text: std::fmt::Arguments<'_>) -> Result<(), StdoutError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_fmt(text)
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => StdoutError::Closed,
            _ => StdoutError::Failed(e),
        })
}

/// `print!` that returns a [`StdoutError`] instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` that returns a [`StdoutError`] instead of panicking.
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};

/// Whether `err` is only a closed stdout, which ends a command quietly.
pub(crate) fn is_closed_stdout(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|cause| matches!(cause.downcast_ref(), Some(StdoutError::Closed)))
}

/// Prints a value as pretty JSON.
pub(crate) fn json<T: Serialize>(value: &T) -> Result<(), StdoutError> {
    let text = serde_json::to_string_pretty(value)?;
    outln!("{text}")
}

/// Prints `value` as [`json`] does, with `"schema": schema_id` first when
/// its type carries no schema id of its own (a reply shared by several ops,
/// or an event line): every `--json` shape names its schema (docs/schemas/).
pub(crate) fn json_as<T: Serialize>(schema_id: &str, value: &T) -> Result<(), StdoutError> {
    let text = serde_json::to_string_pretty(&with_schema(schema_id, value)?)?;
    outln!("{text}")
}

/// One JSON line: `value` with `"schema": schema_id` first (see [`json_as`]).
pub(crate) fn json_line_as<T: Serialize>(schema_id: &str, value: &T) -> Result<(), StdoutError> {
    let text = serde_json::to_string(&with_schema(schema_id, value)?)?;
    outln!("{text}")
}

/// `value` as JSON, with a `schema` key first unless it has one already.
fn with_schema<T: Serialize>(schema_id: &str, value: &T) -> serde_json::Result<serde_json::Value> {
    let value = serde_json::to_value(value)?;
    let serde_json::Value::Object(fields) = value else {
        return Ok(value);
    };
    if fields.contains_key("schema") {
        return Ok(serde_json::Value::Object(fields));
    }
    let mut tagged = serde_json::Map::with_capacity(fields.len() + 1);
    tagged.insert("schema".into(), schema_id.into());
    tagged.extend(fields);
    Ok(serde_json::Value::Object(tagged))
}

fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

fn groups(p: &PeerView) -> String {
    p.groups
        .iter()
        .map(|g| g.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// Peers as a table.
pub(crate) fn peers(peers: &[PeerView]) -> String {
    if peers.is_empty() {
        return "no peers share a group with you\n".into();
    }
    let mut t = crate::table::new(&["PEER", "KIND", "PRODUCT", "STATE", "GROUPS"]);
    for p in peers {
        t.add_row([
            p.id.to_string(),
            p.kind.to_string(),
            or_dash(p.product.as_deref()),
            p.state.to_string(),
            groups(p),
        ]);
    }
    crate::table::render(&t)
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

/// Messages for a reader.
pub(crate) fn messages(list: &[Message], remaining: u64, peek: bool) -> String {
    if list.is_empty() {
        return "no messages\n".into();
    }
    let mut out = String::new();
    for m in list {
        let scope = match &m.group {
            Some(g) => format!(" (to group {g})"),
            None => String::new(),
        };
        let _ = writeln!(out, "── {} from {}{} at {}", m.id, m.from, scope, m.sent_at);
        if let Some(s) = &m.summary {
            let _ = writeln!(out, "summary: {s}");
        }
        if let Some(r) = &m.in_reply_to {
            let _ = writeln!(out, "in reply to: {r}");
        }
        let _ = writeln!(out, "{}", m.body);
    }
    if remaining > 0 {
        let _ = writeln!(out, "({remaining} more waiting; run inbox again)");
    }
    if peek {
        let _ = writeln!(out, "(peek: nothing was acknowledged)");
    }
    out
}

/// The daemon's status.
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
    let _ = writeln!(
        out,
        "{:<16} {:<11} {:>8}  LAST FAILURE",
        "ACTOR", "STATE", "RESTARTS"
    );
    for a in &s.actors {
        let state = serde_json::to_value(a.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<16} {:<11} {:>8}  {}",
            a.name,
            state,
            a.restarts,
            or_dash(a.last_failure.as_deref())
        );
    }
    if let Some(link) = &s.hub_link {
        let state = serde_json::to_value(link.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let rtt = link.rtt_ms.map(|ms| format!("{ms:.2} ms"));
        let _ = writeln!(
            out,
            "hub {} ({})  {}  since {}  rtt {}  links {}",
            link.hub,
            link.hub_name,
            state,
            link.since,
            or_dash(rtt),
            link.connects
        );
        if let Some(e) = &link.last_error {
            let _ = writeln!(out, "  last error: {e}");
        }
    } else {
        out.push_str("hub none\n");
    }
    out
}

/// One lane on one line.
pub(crate) fn lane_line(v: &flotilla_actors::protocol::LaneView) -> String {
    let phase = v.phase.to_string();
    let last = v
        .last_status
        .map(|s| s.to_string())
        .unwrap_or_else(|| "-".into());
    let collect = if v.uncollected {
        "  (result waiting: flotilla lane wait)"
    } else {
        ""
    };
    format!(
        "{:<28} {:<8} {:<9} turns {:<3} last {:<11} owner {}{collect}",
        v.lane.to_string(),
        v.cli.to_string(),
        phase,
        v.turns,
        last,
        v.owner
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

/// One lane event on one line.
pub(crate) fn event_line(e: &flotilla_actors::lane::events::LaneEvent) -> String {
    use flotilla_actors::lane::events::EventKind as K;
    let what = match &e.kind {
        K::LaneStarted {
            cli,
            cwd,
            permissions,
            ..
        } => format!("lane.started {cli} in {cwd} (permissions {permissions})"),
        K::TurnStarted {
            prompt_bytes,
            resume,
            ..
        } => format!(
            "turn.started ({prompt_bytes} bytes of prompt{})",
            if *resume { ", resumed" } else { "" }
        ),
        K::Message { text } => format!("message: {text}"),
        K::ToolCall { name, input, .. } => format!("tool.call {name} {input}"),
        K::ToolResult {
            is_error, output, ..
        } => format!(
            "tool.result{} {output}",
            if *is_error { " (error)" } else { "" }
        ),
        K::Usage {
            usage,
            context_window,
        } => format!(
            "usage in {} out {} cached {} window {}",
            usage.input,
            usage.output,
            usage.cached,
            or_dash(*context_window)
        ),
        K::Error { message } => format!("error: {message}"),
        K::Note { text } => format!("note: {text}"),
        K::TurnCompleted(r) => format!(
            "turn.completed {} exit {} {}",
            r.status,
            or_dash(r.exit),
            r.error.as_deref().unwrap_or("")
        ),
    };
    format!("{:>5} {} turn {} {what}", e.seq, e.at, e.turn)
}

/// A sender's outbox.
pub(crate) fn outbox(r: &flotilla_actors::protocol::OutboxReply) -> String {
    let mut out = String::new();
    if r.messages.is_empty() {
        let _ = writeln!(out, "{} has sent nothing yet", r.peer);
    }
    for m in &r.messages {
        let _ = writeln!(
            out,
            "#{} {} {} {}",
            m.seq,
            m.id,
            m.sent_at,
            or_dash(m.summary.as_deref())
        );
        for to in &m.recipients {
            let state = serde_json::to_value(to.state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let reason = to
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            let _ = writeln!(out, "    {:<32} {state}{reason}", to.peer.to_string());
        }
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

/// The operator's view of the federation.
pub(crate) fn hub_roster(r: &flotilla_hub::view::HubRosterReply) -> String {
    let mut out = format!("hub {} — {} host(s)\n", r.hub, r.hosts.len());
    for h in &r.hosts {
        let rtt = h
            .rtt_ms
            .map(|ms| format!("{ms:.1} ms"))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<20} {:<8} v{:<8} rtt {:<9} last seen {}  from {}  queued {} msg / {} B",
            h.host.to_string(),
            h.state,
            h.version,
            rtt,
            h.last_seen,
            or_dash(h.remote.as_deref()),
            h.queued.messages,
            h.queued.bytes
        );
        for p in h.peers.iter().chain(&h.lanes) {
            let g: Vec<&str> = p.groups.iter().map(|g| g.as_str()).collect();
            let _ = writeln!(
                out,
                "    {:<32} {:<8} {:<10} {}",
                p.id.to_string(),
                p.kind.to_string(),
                or_dash(p.product.as_deref()),
                g.join(",")
            );
        }
        for r in &h.refused {
            let _ = writeln!(out, "    refused {} in {}: {}", r.peer, r.group, r.reason);
        }
        if h.budget.state == "slowed" {
            let _ = writeln!(out, "    slowed: over its budget now");
        }
        if let Some(cut) = &h.budget.last_cut {
            let _ = writeln!(out, "    cut at {}: {}", cut.at, cut.reason);
        }
    }
    out
}
