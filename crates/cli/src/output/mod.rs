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
use flotilla_actors::protocol::PeerView;
use serde::Serialize;

mod tables;
pub(crate) use tables::{host_status, hub_roster, lanes_table, outbox, roster};

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
    to_stdout(|out| out.write_fmt(text))
}

/// Runs `write` on stdout and flushes it, a closed pipe made
/// [`StdoutError::Closed`].
fn to_stdout(
    write: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
) -> Result<(), StdoutError> {
    let mut stdout = std::io::stdout().lock();
    write(&mut stdout)
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

/// Prints JSON passed on unread (a reply re-indented token by token as it
/// was read, never read into types) as [`json`] prints a value.
pub(crate) fn json_pretty(pretty: &[u8]) -> Result<(), StdoutError> {
    to_stdout(|out| out.write_all(pretty).and_then(|()| out.write_all(b"\n")))
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
    outln!("{}", json_text_as(schema_id, value)?)
}

/// `value` as one line of JSON with its `schema` key, not printed yet.
pub(crate) fn json_text_as<T: Serialize>(schema_id: &str, value: &T) -> serde_json::Result<String> {
    serde_json::to_string(&with_schema(schema_id, value)?)
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

pub(super) fn or_dash<T: ToString>(v: Option<T>) -> String {
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
            context_used_pct,
        } => format!(
            "usage in {} out {} cached {} window {} context {}",
            usage.input,
            usage.output,
            usage.cached,
            or_dash(*context_window),
            or_dash(context_used_pct.map(|p| format!("{p}%")))
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
