//! The command line of an interactive session (`flotilla peer claude`...):
//! the vendor's own interactive CLI, in the user's terminal, with
//! Flotilla's MCP server and (where the CLI can take them) live delivery
//! hooks registered for that session only. Plain logic: the launcher
//! prepares a private home when the plan names one, starts the relay when
//! the plan has one, then execs.
//!
//! Delivery per CLI:
//! - Claude Code `live`: hooks in `--settings` (an `asyncRewake` waiter on
//!   `SessionStart` and `Stop` wakes an idle session; `PostToolUse` and
//!   `UserPromptSubmit` add waiting messages as context).
//! - Codex `live`: hooks (`-c` overrides) add waiting messages to a prompt
//!   or a tool result and keep a turn going when messages wait at its end,
//!   and record the session's thread; a relay beside the session hands a
//!   message to an idle session with `codex queue --thread` (a new turn).
//!   Codex asks its user to review new hooks once (Flotilla does not
//!   bypass that review); before the session's first turn a message waits
//!   for the first prompt.
//! - Gemini CLI and Qwen Code `next-turn`: hooks in the private home's
//!   settings add waiting messages to a prompt or a tool result
//!   (`BeforeAgent`/`AfterTool`, `UserPromptSubmit`/`PostToolUse`) and keep
//!   a turn going when messages wait at its end (`AfterAgent`, `Stop`);
//!   neither has a way to wake an idle session.
//! - pi, opencode, grok `poll`: the agent reads its inbox through the
//!   tools or the command.

use std::path::Path;

use flotilla_actors::lane::CliKind;
use serde_json::{Value, json};

use super::common::stdin_plan;
use super::{CommandPlan, mcp};
use crate::lanes::identity::McpServer;

/// What an interactive session's command needs.
#[derive(Debug)]
pub struct InteractiveContext<'a> {
    /// The CLI's executable.
    pub program: &'a str,
    /// Flotilla's MCP server for this session.
    pub server: &'a McpServer,
    /// The `flotilla hook` command line (program, `--home`, `hook`) for
    /// message delivery into the session; `None` for no delivery (a lane's
    /// attach: messages to the lane wait as prompts of its next turn).
    pub hook: Option<&'a [String]>,
    /// The session peer's name.
    pub peer: &'a str,
    /// The session's process (the launcher's pid, which the CLI keeps).
    pub pid: u32,
    /// A native conversation to adopt.
    pub resume: Option<&'a str>,
    /// Native arguments, passed as they are.
    pub args: &'a [String],
    /// The session's own directory (for private homes).
    pub dir: &'a Path,
    /// The environment the CLI will inherit (to find its configuration).
    pub env: &'a [(String, String)],
}

impl InteractiveContext<'_> {
    /// A `flotilla hook VERB ...` command line for this session.
    fn hook_argv(&self, verb: &[&str]) -> Vec<String> {
        let mut argv = self.hook.unwrap_or_default().to_vec();
        argv.extend(verb.iter().map(|w| (*w).to_owned()));
        argv.extend(["--as".to_owned(), self.peer.to_owned()]);
        argv.extend(["--session-pid".to_owned(), self.pid.to_string()]);
        argv
    }

    /// The same, as one `sh -c` command.
    fn hook_command(&self, verb: &[&str]) -> String {
        let words: Vec<String> = self
            .hook_argv(verb)
            .iter()
            .map(|w| shell_quote(w))
            .collect();
        words.join(" ")
    }
}

/// An interactive session's command and how messages reach it.
#[derive(Debug)]
pub struct InteractivePlan {
    /// The CLI's command.
    pub plan: CommandPlan,
    /// `live`, `next-turn` or `poll` (shown in `peers` and `roster`), or
    /// `none` without delivery hooks.
    pub delivery: &'static str,
    /// A process to start beside the CLI that hands messages over.
    pub relay: Option<Vec<String>>,
    /// Inherited variables the CLI must not see (see [`HEADLESS_MARKERS`]).
    pub env_removed: &'static [&'static str],
}

/// Variables that turn Gemini CLI headless even in a terminal
/// (`CI=true`, `GITHUB_ACTIONS=true`: it then waits for a prompt on stdin
/// and exits without one). A session is interactive by construction, so
/// they are not passed to it.
const HEADLESS_MARKERS: &[&str] = &["CI", "GITHUB_ACTIONS"];

/// The plan of an interactive session of `cli`.
pub fn interactive_plan(
    cli: CliKind,
    c: &InteractiveContext<'_>,
) -> Result<InteractivePlan, String> {
    let mut plan = stdin_plan(c.program, &[]);
    plan.stdin_prompt = false;
    let mut relay = None;
    let mut env_removed: &'static [&'static str] = &[];
    let delivery = match cli {
        CliKind::Claude => {
            mcp::claude(&mut plan, c.server);
            if c.hook.is_some() {
                plan.args(["--settings", &claude_hooks(c)]);
            }
            plan.opt("--resume", c.resume);
            delivered(c, "live")
        }
        CliKind::Codex => {
            mcp::codex(&mut plan, c.server);
            if let Some(hook) = c.hook {
                codex_hooks(&mut plan, hook);
                relay = Some(c.hook_argv(&["relay", "--codex", c.program]));
            }
            if let Some(id) = c.resume {
                plan.args(["resume", id]);
            }
            delivered(c, "live")
        }
        CliKind::Gemini => {
            mcp::gemini(&mut plan, c.server, c.env, c.dir);
            plan.opt("--resume", c.resume);
            env_removed = HEADLESS_MARKERS;
            let events = [
                ("BeforeAgent", "drain"),
                ("AfterTool", "drain"),
                ("AfterAgent", "stop"),
            ];
            with_hooks(&mut plan, c, &events)
        }
        CliKind::Qwen => {
            mcp::qwen(&mut plan, c.server, c.env, c.dir);
            plan.opt("--resume", c.resume);
            let events = [
                ("UserPromptSubmit", "drain"),
                ("PostToolUse", "drain"),
                ("Stop", "stop"),
            ];
            with_hooks(&mut plan, c, &events)
        }
        CliKind::Opencode => {
            mcp::opencode(&mut plan, c.server);
            plan.opt("--session", c.resume);
            delivered(c, "poll")
        }
        CliKind::Pi => {
            plan.opt("--session", c.resume);
            delivered(c, "poll")
        }
        CliKind::Grok if c.resume.is_some() => {
            return Err("grok keeps no session to resume; start without --resume".into());
        }
        CliKind::Grok => delivered(c, "poll"),
        CliKind::Exec => {
            return Err(
                "exec is not an interactive CLI; use `flotilla lane run --cli exec`".into(),
            );
        }
    };
    plan.args(c.args);
    Ok(InteractivePlan {
        plan,
        delivery,
        relay,
        env_removed,
    })
}

/// `delivery`, or `none` for a session without delivery hooks.
fn delivered(c: &InteractiveContext<'_>, delivery: &'static str) -> &'static str {
    if c.hook.is_some() { delivery } else { "none" }
}

/// Adds `flotilla hook VERB EVENT` hooks (timeouts in milliseconds) to the
/// private home's settings: `next-turn` delivery, or `poll` when the CLI
/// runs without a private home (no HOME), or `none` without hooks.
fn with_hooks(
    plan: &mut CommandPlan,
    c: &InteractiveContext<'_>,
    events: &[(&str, &str)],
) -> &'static str {
    if c.hook.is_none() {
        return "none";
    }
    let Some(home) = plan.cli_home.as_mut() else {
        return "poll";
    };
    for (event, verb) in events {
        let hook = json!({"type": "command", "name": format!("flotilla-{verb}"),
            "command": c.hook_command(&[verb, event]), "timeout": 30_000});
        home.hooks
            .insert((*event).to_owned(), json!([{"hooks": [hook]}]));
    }
    "next-turn"
}

/// Codex's hooks, as `-c hooks.EVENT=...` overrides (timeouts in
/// seconds). Their commands name no session (the identity comes from the
/// environment), so they are the same for every session of a home and
/// Codex's review of new hooks asks once, not at every start. Each records
/// the session's thread for the relay.
fn codex_hooks(plan: &mut CommandPlan, hook: &[String]) {
    let events = [
        ("SessionStart", "drain"),
        ("UserPromptSubmit", "drain"),
        ("PostToolUse", "drain"),
        ("Stop", "stop"),
    ];
    for (event, verb) in events {
        let mut words: Vec<String> = hook.iter().map(|w| shell_quote(w)).collect();
        words.extend([
            verb.to_owned(),
            event.to_owned(),
            "--record-thread".to_owned(),
        ]);
        let command = Value::from(words.join(" ")).to_string();
        plan.args([
            "-c".to_owned(),
            format!(
                "hooks.{event}=[{{hooks=[{{type=\"command\",command={command},timeout=30}}]}}]"
            ),
        ]);
    }
}

/// Claude Code's hooks for live delivery, as a `--settings` JSON string.
fn claude_hooks(c: &InteractiveContext<'_>) -> String {
    let waiter = json!([{"hooks": [{
        "type": "command", "command": c.hook_command(&["wait"]),
        "asyncRewake": true, "timeout": 86_400,
        "rewakeSummary": "message from Flotilla",
    }]}]);
    let drain = |event: &str| -> Value {
        json!([{"hooks": [{"type": "command", "command": c.hook_command(&["drain", event]), "timeout": 30}]}])
    };
    json!({"hooks": {
        "SessionStart": waiter,
        "Stop": waiter,
        "PostToolUse": drain("PostToolUse"),
        "UserPromptSubmit": drain("UserPromptSubmit"),
    }})
    .to_string()
}

/// A word for `sh -c`, quoted when it needs to be.
fn shell_quote(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-=:@".contains(c));
    if plain && !word.is_empty() {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
#[path = "interactive_tests.rs"]
mod tests;
