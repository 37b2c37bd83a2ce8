//! The tools `flotilla mcp` offers: stable names, descriptions and the JSON
//! Schemas of their input and output (documented in docs/agents.md).
//!
//! Inputs are closed (`additionalProperties: false`) so a typo is an error,
//! not a silently ignored field; outputs are open, so a daemon that adds a
//! field never breaks a client that checks the schema. Plain data.

use serde_json::{Value, json};

/// One tool.
#[derive(Debug, Clone)]
pub(crate) struct ToolSpec {
    /// Its stable name.
    pub(crate) name: &'static str,
    /// What it does, for the agent.
    pub(crate) description: &'static str,
    /// Whether it only reads (and so works without an identity).
    pub(crate) read_only: bool,
    /// JSON Schema of its arguments.
    pub(crate) input: Value,
    /// JSON Schema of its structured result.
    pub(crate) output: Value,
}

/// The lane actions.
pub(crate) const LANE_ACTIONS: &[&str] = &[
    "run",
    "start",
    "resume",
    "wait",
    "status",
    "interrupt",
    "archive",
    "list",
    "events",
    "doctor",
];

/// The CLIs a lane can run.
pub(crate) const CLIS: &[&str] = &[
    "claude", "codex", "gemini", "qwen", "pi", "opencode", "grok", "exec",
];

fn input(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn output(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn text(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn message_fields() -> Value {
    json!({
        "body": text("the message text"),
        "summary": text("a one-line summary (optional)"),
        "id": text("your id for this message (1-64 letters, digits, - or _); a retry with the same id is stored once"),
    })
}

fn sent() -> Value {
    output(json!({
        "id": {"type": "string"},
        "recipients": {"type": "array", "items": {"type": "string"}},
        "seq": {"type": "integer"},
        "duplicate": {"type": "boolean"},
        "remote": {"type": "array"},
    }))
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    base
}

/// Every tool, in a stable order.
pub(crate) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "whoami",
            description: "Who this session is in Flotilla: its peer id, host, groups and whether the daemon answers. Works without an identity and says how to set one.",
            read_only: true,
            input: input(json!({}), &[]),
            output: output(json!({
                "peer": {"type": ["string", "null"]},
                "host": {"type": ["string", "null"]},
                "registered": {"type": "boolean"},
                "groups": {"type": "array", "items": {"type": "string"}},
                "daemon": {"type": "boolean"},
                "hint": {"type": ["string", "null"]},
            })),
        },
        ToolSpec {
            name: "list_peers",
            description: "The peers that share a group with you (on this host and, through the hub, on others), with their kind and groups.",
            read_only: false,
            input: input(json!({}), &[]),
            output: output(json!({"viewer": {"type": "string"}, "peers": {"type": "array"}})),
        },
        ToolSpec {
            name: "send",
            description: "Send a message to one or several peers (NAME on this host, HOST/NAME elsewhere). All or nothing: if any target is out of your groups nothing is sent.",
            read_only: false,
            input: input(
                with(
                    json!({"to": {"description": "one target or a list", "oneOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}, "minItems": 1}
                    ]}}),
                    message_fields(),
                ),
                &["to", "body"],
            ),
            output: sent(),
        },
        ToolSpec {
            name: "broadcast",
            description: "Send a message to every other member of a group you are in.",
            read_only: false,
            input: input(
                with(json!({"group": text("the group")}), message_fields()),
                &["group", "body"],
            ),
            output: sent(),
        },
        ToolSpec {
            name: "inbox",
            description: "Read your messages, oldest first, and acknowledge them (peek: read without acknowledging). wait_s (0-60) waits for a first message.",
            read_only: false,
            input: input(
                json!({
                    "peek": {"type": "boolean", "default": false},
                    "wait_s": {"type": "integer", "minimum": 0, "maximum": 60, "default": 0},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                }),
                &[],
            ),
            output: output(json!({
                "messages": {"type": "array"},
                "remaining": {"type": "integer"},
                "acknowledged": {"type": "boolean"},
            })),
        },
        ToolSpec {
            name: "reply",
            description: "Answer the sender of a message you received (by its id).",
            read_only: false,
            input: input(
                with(
                    json!({"to_message": text("the id of the message you answer")}),
                    message_fields(),
                ),
                &["to_message", "body"],
            ),
            output: sent(),
        },
        ToolSpec {
            name: "rename",
            description: "Rename yourself on this host, keeping your groups and unread messages.",
            read_only: false,
            input: input(json!({"new_name": text("your new name")}), &["new_name"]),
            output: output(json!({"id": {"type": "string"}, "groups": {"type": "array"}})),
        },
        ToolSpec {
            name: "outbox",
            description: "What you sent and where each message stands: accepted, queued at the hub, delivered or dropped (with the reason).",
            read_only: false,
            input: input(
                json!({"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20}}),
                &[],
            ),
            output: output(json!({"messages": {"type": "array"}})),
        },
        lane_tool(),
        fleet_tool(),
    ]
}

fn fleet_tool() -> ToolSpec {
    ToolSpec {
        name: "fleet",
        description: "Fleets: lead a team (a supervisor agent and workers) whose work the daemon accepts against the task's definition of done (docs/fleets.md). action: start (needs name and spec; the fleet is yours, and when you are a fleet's member it becomes that fleet's sub-team, with its own budget and clock), task (a new task), status (members, steps, spent, parent and sub-fleets), list, pause, resume (optionally a new budget card), stop.",
        read_only: false,
        input: input(
            json!({
                "action": {"type": "string", "enum": ["start", "task", "status", "list", "pause", "resume", "stop"]},
                "name": text("the fleet's name"),
                "spec": {"type": "object", "description": "start: the fleet as fleet.start takes it (docs/protocol.md): supervisor {cli, model, command}, workers [{cli, model, command}], lifecycle, dir (default: this server's), max_busy, budget, turn_timeout_secs, ...; not name, not as"},
                "task": {"type": "object", "description": "start, task: {goal, hours, artifacts: [{path, min_chars, contains}], checks: [{run, cwd}]}"},
                "budget": {"type": "object", "description": "resume: a new budget card {model_calls, rounds, wall_hours, tokens, cost}"},
            }),
            &["action"],
        ),
        output: json!({"type": "object"}),
    }
}

fn lane_tool() -> ToolSpec {
    ToolSpec {
        name: "lane",
        description: "Lanes: supervised worker sessions of a coding-agent CLI or a command, on this host or another (host). action: run (start and wait for the result), start, resume (a follow-up prompt), wait (collect the result, once), status, interrupt, archive, list, events, doctor. Lanes you start are owned by you: their results also reach your inbox.",
        read_only: false,
        input: input(
            json!({
                "action": {"type": "string", "enum": LANE_ACTIONS},
                "host": text("the host that runs the lane (default: this one)"),
                "name": text("the lane's name (start/run: default CLI-XXXXXX)"),
                "cli": {"type": "string", "enum": CLIS},
                "prompt": text("the prompt (start, run, resume)"),
                "cwd": text("absolute working directory (default: this server's)"),
                "model": text("the model"),
                "permissions": {"type": "string", "enum": ["default", "workspace", "bypass"]},
                "timeout_s": {"type": "integer", "minimum": 1, "description": "the turn's deadline; for wait and run, how long to wait"},
                "persistent": {"type": "boolean"},
                "auto_archive_after_s": {"type": ["integer", "null"], "minimum": 0},
                "groups": {"type": "array", "items": {"type": "string"}},
                "inherit_groups": {"type": "boolean"},
                "args": {"type": "array", "items": {"type": "string"}, "description": "for cli exec: the command"},
                "all": {"type": "boolean", "description": "list: include archived lanes"},
                "after": {"type": "integer", "minimum": 0, "description": "events: only after this sequence number"},
            }),
            &["action"],
        ),
        output: json!({"type": "object"}),
    }
}

/// The spec of a tool, by name.
pub(crate) fn find(name: &str) -> Option<ToolSpec> {
    tools().into_iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_closed_input_schema_and_an_object_output() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "whoami",
                "list_peers",
                "send",
                "broadcast",
                "inbox",
                "reply",
                "rename",
                "outbox",
                "lane",
                "fleet"
            ]
        );
        for t in &tools {
            assert_eq!(t.input["type"], "object", "{}", t.name);
            assert_eq!(t.input["additionalProperties"], false, "{}", t.name);
            assert_eq!(t.output["type"], "object", "{}", t.name);
            for required in t.input["required"].as_array().into_iter().flatten() {
                let key = required.as_str().unwrap_or_default();
                assert!(
                    t.input["properties"].get(key).is_some(),
                    "{}: {key}",
                    t.name
                );
            }
        }
        assert!(find("lane").is_some() && find("nope").is_none());
    }
}
