//! The schemas of the `--json` shapes the CLI builds with `json!` rather
//! than from a type (setup, certificates, hub administration, config,
//! diagnostics) and of the error envelope. Owns only these descriptions:
//! when a command's `json!` gains a field, add it here (the e2e test
//! `schemas` checks real output against them).

use schemars::{Schema, json_schema};
use serde_json::{Value, json};

/// The error envelope's file stem: it has no `schema` property (it is known
/// by its `error` key, docs/cli.md).
pub(super) const ERROR_ID: &str = "flotilla.error.v1";

/// An object whose `properties` are all required; more may come (fields
/// are only ever added).
pub(super) fn object(description: &str, properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "description": description,
        "properties": properties, "required": required})
}

/// [`object`] with some properties that may be absent.
pub(super) fn object_with_optional(
    description: &str,
    properties: Value,
    optional: &[&str],
) -> Value {
    let mut value = object(description, properties);
    if let Some(list) = value["required"].as_array_mut() {
        list.retain(|k| !optional.iter().any(|o| k == o));
    }
    value
}

pub(super) fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

pub(super) fn strings(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

pub(super) fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

pub(super) fn count(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

pub(super) fn nullable_string(description: &str) -> Value {
    json!({"type": ["string", "null"], "description": description})
}

pub(super) fn top(description: &str, properties: Value) -> Schema {
    schema(object(description, properties))
}

pub(super) fn schema(value: Value) -> Schema {
    Schema::try_from(value).unwrap_or_else(|_| json_schema!({}))
}

/// Every hand-written shape.
pub(super) fn all() -> Vec<(&'static str, Schema)> {
    let mut shapes = vec![
        (ERROR_ID, error()),
        ("flotilla.send-batch.v1", send_batch()),
        (
            "flotilla.up.v1",
            top(
                "`flotilla up --json`: the daemon runs.",
                json!({
                    "started": boolean("Whether this call started it."),
                    "restarted": boolean("Whether it replaced a daemon of another version."),
                    "home": string("The home."),
                    "status": {"type": "object", "description": "The daemon's `flotilla.host-status.v1` reply.",
                        "properties": {"schema": {"const": "flotilla.host-status.v1"}}, "required": ["schema"]},
                }),
            ),
        ),
        (
            "flotilla.down.v1",
            schema(object_with_optional(
                "`flotilla down --json`.",
                json!({
                    "stopped": boolean("Whether a daemon was stopped."),
                    "was_running": boolean("Whether one was running."),
                    "pid": count("The stopped daemon's process id."),
                }),
                &["pid"],
            )),
        ),
        (
            "flotilla.config.v1",
            top(
                "`flotilla config show --json`: every key.",
                json!({
                    "path": string("The config file."),
                    "exists": boolean("Whether it exists."),
                    "keys": {"type": "array", "items": object("One key.", json!({
                        "key": string("The key (`hub_server.name`)."),
                        "value": {"description": "Its value (`null` when unset)."},
                        "source": {"enum": ["file", "default", "unset"]},
                    }))},
                }),
            ),
        ),
        (
            "flotilla.config.value.v1",
            top(
                "`flotilla config get KEY --json`.",
                json!({
                    "key": string("The key."),
                    "value": {"description": "Its value."},
                    "source": {"enum": ["file", "default"]},
                }),
            ),
        ),
        (
            "flotilla.config.set.v1",
            top(
                "`flotilla config set|unset KEY --json`.",
                json!({
                    "path": string("The config file."),
                    "key": string("The key."),
                    "value": {"description": "Its value now (`null` when unset)."},
                    "previous": {"description": "Its value before (`null` when unset)."},
                }),
            ),
        ),
        (
            "flotilla.config.path.v1",
            top(
                "`flotilla config path --json`.",
                json!({
                    "path": string("The config file."),
                    "exists": boolean("Whether it exists."),
                }),
            ),
        ),
        (
            "flotilla.doctor.v1",
            top(
                "`flotilla doctor --json`.",
                json!({
                    "ok": boolean("Whether no check failed."),
                    "home": string("The home."),
                    "checks": {"type": "array", "items": object_with_optional("One check.", json!({
                        "name": string("What was checked."),
                        "status": {"enum": ["ok", "warn", "fail"]},
                        "detail": string("What was found."),
                        "hint": string("What to do."),
                    }), &["hint"])},
                }),
            ),
        ),
        (
            "flotilla.logs.v1",
            top(
                "`flotilla logs --json` (without `--follow`).",
                json!({
                    "file": string("The log file."),
                    "lines": strings("Its last lines."),
                }),
            ),
        ),
        (
            "flotilla.log-line.v1",
            top(
                "One line of `flotilla logs --follow --json`.",
                json!({"line": string("A line of the log, as written.")}),
            ),
        ),
        (
            "flotilla.man.v1",
            top(
                "`flotilla man --out DIR --json`.",
                json!({
                    "dir": string("Where the pages were written."),
                    "pages": strings("The pages written."),
                }),
            ),
        ),
        (
            "flotilla.schemas.v1",
            top(
                "`flotilla schemas --json`.",
                json!({
                    "dir": nullable_string("Where the schemas were written (`null`: none written)."),
                    "ids": strings("Every schema id."),
                }),
            ),
        ),
        (
            "flotilla.lane-detached.v1",
            top(
                "`lane run --json` left by a first Ctrl-C: the turn goes on.",
                json!({
                    "lane": string("The lane."),
                    "wait": string("The command that collects the result."),
                }),
            ),
        ),
    ];
    shapes.extend(super::handwritten_setup::all());
    shapes
}

/// The error envelope, on stdout with `--json` when a command fails.
/// One line of `send --batch --json` per input message, in input order.
fn send_batch() -> Schema {
    schema(object_with_optional(
        "`flotilla send --batch --json`: one line per message, in the input's order.",
        json!({
            "line": count("The input line, from 1."),
            "ok": boolean("Whether the message was sent."),
            "result": {"type": "object", "description": "When sent: the acknowledgement, as `flotilla.send.v1` (`id`, `recipients`, `seq`, `sent_at`, `duplicate`, `remote`)."},
            "error": object_with_optional("When not sent: why, as the control protocol's error.", json!({
                "code": string("Stable error code (`targets_refused`...; `unavailable`: no answer came, the daemon stayed away, and the message may be stored already)."),
                "message": string("What was wrong."),
                "hint": string("What to do."),
                "details": {"description": "More, by code (`unavailable` without an answer: `{\"id\": ...}`, the id to send the message again with, so it is stored once)."},
            }), &["hint", "details"]),
        }),
        &["result", "error"],
    ))
}

fn error() -> Schema {
    schema(object(
        "The error envelope of any failing `--json` command (docs/cli.md).",
        json!({"error": object("What failed.", json!({
            "code": string("Stable error code (`not_found`, `usage`...)."),
            "exit": count("The process's exit code."),
            "message": string("What went wrong."),
            "hint": nullable_string("What to do."),
            "details": {"description": "More, by code (`null` when none)."},
        }))}),
    ))
}
