//! The command line of an interactive session (`flotilla peer claude`...):
//! the vendor's own interactive CLI, in the user's terminal, with
//! Flotilla's MCP server and (where the CLI has hooks that can wake it)
//! live delivery registered for that session only. Plain logic: the
//! launcher prepares a private home when the plan names one, then execs.
//!
//! Delivery per CLI: Claude Code `live` (hooks in `--settings`: an
//! `asyncRewake` waiter on `SessionStart` and `Stop` wakes an idle session;
//! `PostToolUse` and `UserPromptSubmit` add waiting messages as context);
//! every other CLI `poll` (the agent reads its inbox through the tools or
//! the command).

use std::path::Path;

use flotilla_actors::lane::CliKind;
use serde_json::json;

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
    /// The `flotilla hook` command line for this session (program and
    /// its identity arguments), for CLIs with hooks.
    pub hook: &'a [String],
    /// A native conversation to adopt.
    pub resume: Option<&'a str>,
    /// Native arguments, passed as they are.
    pub args: &'a [String],
    /// The session's own directory (for private homes).
    pub dir: &'a Path,
    /// The environment the CLI will inherit (to find its configuration).
    pub env: &'a [(String, String)],
}

/// The plan and the delivery mode of an interactive session of `cli`.
pub fn interactive_plan(
    cli: CliKind,
    c: &InteractiveContext<'_>,
) -> Result<(CommandPlan, &'static str), String> {
    let mut plan = stdin_plan(c.program, &[]);
    plan.stdin_prompt = false;
    let delivery = match cli {
        CliKind::Claude => {
            mcp::claude(&mut plan, c.server);
            plan.args(["--settings", &claude_hooks(c.hook)]);
            plan.opt("--resume", c.resume);
            "live"
        }
        CliKind::Codex => {
            mcp::codex(&mut plan, c.server);
            if let Some(id) = c.resume {
                plan.args(["resume", id]);
            }
            "poll"
        }
        CliKind::Gemini => {
            mcp::gemini(&mut plan, c.server, c.env, c.dir);
            plan.opt("--resume", c.resume);
            "poll"
        }
        CliKind::Qwen => {
            mcp::qwen(&mut plan, c.server, c.env, c.dir);
            plan.opt("--resume", c.resume);
            "poll"
        }
        CliKind::Opencode => {
            mcp::opencode(&mut plan, c.server);
            plan.opt("--session", c.resume);
            "poll"
        }
        CliKind::Pi => {
            plan.opt("--session", c.resume);
            "poll"
        }
        CliKind::Grok if c.resume.is_some() => {
            return Err("grok keeps no session to resume; start without --resume".into());
        }
        CliKind::Grok => "poll",
        CliKind::Exec => {
            return Err(
                "exec is not an interactive CLI; use `flotilla lane run --cli exec`".into(),
            );
        }
    };
    plan.args(c.args);
    Ok((plan, delivery))
}

/// Claude Code's hooks for live delivery, as a `--settings` JSON string.
fn claude_hooks(hook: &[String]) -> String {
    let command = |verb: &str| {
        let mut words: Vec<String> = hook.iter().map(|w| shell_quote(w)).collect();
        words.push(verb.to_owned());
        words.join(" ")
    };
    let waiter = json!([{"hooks": [{
        "type": "command", "command": command("wait"),
        "asyncRewake": true, "timeout": 86_400,
        "rewakeSummary": "message from Flotilla",
    }]}]);
    let drain = |event: &str| json!([{"hooks": [{"type": "command", "command": command(&format!("drain {event}")), "timeout": 30}]}]);
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
mod tests {
    use super::*;

    fn server() -> McpServer {
        McpServer {
            program: "/bin/flotilla".into(),
            args: vec!["mcp".into(), "--as".into(), "s".into()],
            env: vec![],
        }
    }

    fn plan(cli: CliKind, resume: Option<&str>) -> Result<(CommandPlan, &'static str), String> {
        let hook = vec![
            "/bin/flotilla".to_owned(),
            "--home".into(),
            "/h x".into(),
            "hook".into(),
        ];
        let args = vec!["--verbose".to_owned()];
        let ctx = InteractiveContext {
            program: "cli",
            server: &server(),
            hook: &hook,
            resume,
            args: &args,
            dir: Path::new("/s"),
            env: &[("HOME".into(), "/u".into())],
        };
        interactive_plan(cli, &ctx)
    }

    #[test]
    fn claude_gets_tools_hooks_and_its_resume_flag() {
        let (p, delivery) = plan(CliKind::Claude, Some("abc")).expect("plan");
        assert_eq!(delivery, "live");
        assert!(!p.stdin_prompt);
        let i = p
            .argv
            .iter()
            .position(|a| a == "--settings")
            .expect("settings");
        let hooks: serde_json::Value = serde_json::from_str(&p.argv[i + 1]).expect("json");
        let wait = &hooks["hooks"]["Stop"][0]["hooks"][0];
        assert_eq!(wait["asyncRewake"], true);
        assert_eq!(wait["command"], "/bin/flotilla --home '/h x' hook wait");
        assert_eq!(p.argv[p.argv.len() - 3..], ["--resume", "abc", "--verbose"]);
    }

    #[test]
    fn other_clis_poll_and_refuse_what_they_cannot_do() {
        let (p, delivery) = plan(CliKind::Codex, Some("t1")).expect("plan");
        assert_eq!(delivery, "poll");
        assert!(p.argv.windows(2).any(|w| w == ["resume", "t1"]));
        let (p, _) = plan(CliKind::Gemini, None).expect("plan");
        assert!(p.cli_home.is_some());
        assert!(plan(CliKind::Grok, Some("x")).is_err());
        assert!(plan(CliKind::Exec, None).is_err());
    }
}
