//! Readiness checks (`flotilla ready`): which tool each profile command
//! needs and how to ask it its version ([`tool_of`], [`probe_of`]), what to
//! run instead when a tool is missing ([`route`]), the checks made of what
//! the host found ([`tool_checks`]), and which CLIs can say whether they
//! are logged in ([`login_probe`]).
//!
//! Owns these decisions, as plain functions. Must not run a tool, read a
//! file or install anything: the host probes and hands in what it found.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::profile::{PROFILE_PATH, Profile};
use crate::lane::CliKind;

/// `routed_to` of a command left out because nothing can stand in for it.
pub const SKIP: &str = "skip";

/// One thing checked, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadyCheck {
    /// What was checked: `git`, `policy`, `profile`, `agent CLIs`,
    /// `cli claude`, or a profile command as `lint: cargo clippy ...`.
    pub name: String,
    /// Whether it passed as it is.
    pub ok: bool,
    /// Whether readiness depends on it (a single CLI does not).
    pub required: bool,
    /// What was found: a version line, or what is wrong.
    pub detail: String,
    /// When it failed: the command run instead, or `skip` when the
    /// command is left out with nothing in its place.
    pub routed_to: Option<String>,
    /// Why it was routed that way, or what to do about a failure.
    pub why: Option<String>,
}

impl ReadyCheck {
    /// Whether it stands in the way of readiness: it is required, failed,
    /// and was not routed around.
    pub fn blocks(&self) -> bool {
        self.required && !self.ok && self.routed_to.is_none()
    }
}

/// What a tool said when probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolState {
    /// It ran: its version line (or where it is).
    Usable(String),
    /// It is missing or failed: why.
    Unusable(String),
}

/// How to see that a tool is there, without running the repository's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// Run these words (the program found on PATH) and read the version.
    Version(Vec<String>),
    /// A program found on PATH that takes no `--version` flag.
    OnPath(String),
    /// A file in the repository (a path relative to its top level): seen
    /// to be executable, never run.
    InRepo(String),
}

/// cargo's own subcommands; any other is a tool of its own (`cargo-clippy`).
const CARGO_BUILTIN: &[&str] = &[
    "add", "bench", "build", "check", "clean", "config", "doc", "fetch", "fix", "help", "init",
    "install", "metadata", "new", "package", "publish", "remove", "run", "rustc", "rustdoc",
    "test", "tree", "update", "vendor", "version",
];

/// Python modules of the standard library run with `-m`: the interpreter
/// is the tool.
const PYTHON_STDLIB: &[&str] = &["unittest", "doctest", "compileall", "py_compile", "venv"];

/// The tool a command needs: its first word (after `NAME=value`
/// assignments); `cargo SUB` for a subcommand cargo does not have itself
/// (with its `+toolchain`, if given); `python -m MOD` for a module outside
/// the standard library. `None` for an empty command.
pub fn tool_of(command: &str) -> Option<String> {
    let words: Vec<&str> = command
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect();
    let tool = match words.as_slice() {
        [] => return None,
        ["cargo", toolchain, rest @ ..] if toolchain.starts_with('+') => match rest {
            [sub, ..] if external(sub) => format!("cargo {toolchain} {sub}"),
            _ => format!("cargo {toolchain}"),
        },
        ["cargo", sub, ..] if external(sub) => format!("cargo {sub}"),
        [py @ ("python" | "python3"), "-m", module, ..] if !PYTHON_STDLIB.contains(module) => {
            format!("{py} -m {module}")
        }
        [first, ..] => (*first).to_owned(),
    };
    Some(tool)
}

/// Whether `cargo SUB` runs a tool of its own (`cargo-clippy`).
fn external(sub: &str) -> bool {
    !sub.starts_with('-') && !CARGO_BUILTIN.contains(&sub)
}

/// Every tool the profile's commands need, once each, in order.
pub fn tools_of(profile: &Profile) -> Vec<String> {
    let mut tools = Vec::new();
    for (_, command) in profile.commands() {
        if let Some(tool) = tool_of(command)
            && !tools.contains(&tool)
        {
            tools.push(tool);
        }
    }
    tools
}

/// The tools to probe next, given what was `found` so far: first the
/// profile's own; once those are known, the tools of the alternatives of
/// each command whose tool is unusable. Empty when nothing is left.
pub fn tools_to_probe(profile: &Profile, found: &BTreeMap<String, ToolState>) -> Vec<String> {
    let mut tools: Vec<String> = (tools_of(profile).into_iter())
        .filter(|t| !found.contains_key(t))
        .collect();
    if !tools.is_empty() {
        return tools;
    }
    let usable = |tool: &str| matches!(found.get(tool), Some(ToolState::Usable(_)));
    for (_, command) in profile.commands() {
        if tool_of(command).is_some_and(|t| usable(&t)) {
            continue;
        }
        for alt in alternatives(command) {
            if let Some(tool) = alt.command.as_deref().and_then(tool_of)
                && !found.contains_key(&tool)
                && !tools.contains(&tool)
            {
                tools.push(tool);
            }
        }
    }
    tools
}

/// How to probe `tool`.
pub fn probe_of(tool: &str) -> Probe {
    if tool.contains('/') {
        return Probe::InRepo(tool.to_owned());
    }
    match tool {
        "sh" | "dash" => Probe::OnPath(tool.to_owned()),
        "go" => Probe::Version(vec!["go".into(), "version".into()]),
        _ => {
            let mut words: Vec<String> = tool.split_whitespace().map(str::to_owned).collect();
            words.push("--version".into());
            Probe::Version(words)
        }
    }
}

/// The version line of a probe's output: the first non-empty line of
/// stdout, else of stderr, at most 200 characters.
pub fn version_line(stdout: &str, stderr: &str) -> Option<String> {
    let first = |text: &str| {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(200).collect::<String>())
    };
    first(stdout).or_else(|| first(stderr))
}

/// One thing to run instead of a command whose tool is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternative {
    /// The command; `None`: leave it out.
    pub command: Option<String>,
    /// Why this stands in, and what to install to run the original.
    pub why: String,
}

fn alt(command: &str, why: &str) -> Alternative {
    Alternative {
        command: Some(command.to_owned()),
        why: why.to_owned(),
    }
}

fn skip(why: &str) -> Alternative {
    Alternative {
        command: None,
        why: why.to_owned(),
    }
}

/// What may stand in for `command`, best first; empty when nothing can.
pub fn alternatives(command: &str) -> Vec<Alternative> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let rest = |n: usize| words.get(n..).unwrap_or_default().join(" ");
    match words.as_slice() {
        ["cargo", "clippy", ..] => vec![alt(
            "cargo check --all-targets",
            "clippy is not installed (`rustup component add clippy` adds it); `cargo check` still finds compile errors, not lints",
        )],
        ["cargo", "nextest", ..] => vec![alt(
            "cargo test",
            "cargo-nextest is not installed; `cargo test` runs the same tests",
        )],
        ["cargo", "fmt", ..] => vec![skip(
            "rustfmt is not installed (`rustup component add rustfmt` adds it); formatting goes unchecked",
        )],
        ["ruff", "check", ..] | ["ruff"] => vec![
            alt(
                "python -m pyflakes .",
                "ruff is not installed; pyflakes finds errors, not style",
            ),
            alt(
                "python3 -m pyflakes .",
                "ruff is not installed; pyflakes finds errors, not style",
            ),
            skip("neither ruff nor pyflakes is installed; the lint is skipped"),
        ],
        ["ruff", ..] => vec![skip("ruff is not installed; this check is skipped")],
        ["golangci-lint", ..] => vec![alt(
            "go vet ./...",
            "golangci-lint is not installed; `go vet` runs Go's own checks",
        )],
        ["npm", ..] => vec![
            alt(
                &then("pnpm", &rest(1)),
                "npm is not installed; pnpm runs the same scripts",
            ),
            alt(
                &then("yarn", &rest(1)),
                "npm is not installed; yarn runs the same scripts",
            ),
        ],
        [py @ ("python" | "python3"), "-m", "pytest", ..] => python_tests(Some(py), &rest(3)),
        ["pytest", ..] => python_tests(None, &rest(1)),
        [py @ ("python" | "python3"), ..] => {
            let other = if *py == "python" { "python3" } else { "python" };
            vec![alt(
                &then(other, &rest(1)),
                &format!("{py} is not on the PATH; {other} is"),
            )]
        }
        _ => Vec::new(),
    }
}

/// `head`, then `rest` if there is any.
fn then(head: &str, rest: &str) -> String {
    if rest.is_empty() {
        head.to_owned()
    } else {
        format!("{head} {rest}")
    }
}

/// pytest through another interpreter than `tried` (the one that failed,
/// if any), then unittest.
fn python_tests(tried: Option<&str>, args: &str) -> Vec<Alternative> {
    let mut order = ["python", "python3"];
    if tried == Some("python3") {
        order.reverse();
    }
    let failed = tried.map_or("pytest".to_owned(), |py| format!("{py} -m pytest"));
    let mut alts: Vec<Alternative> = (order.iter())
        .filter(|py| Some(**py) != tried)
        .map(|py| {
            alt(
                &then(&format!("{py} -m pytest"), args),
                &format!("`{failed}` does not run; `{py} -m pytest` does"),
            )
        })
        .collect();
    alts.extend(order.iter().map(|py| {
        alt(
            &format!("{py} -m unittest discover"),
            "pytest is not installed; unittest runs unittest-style tests only",
        )
    }));
    alts
}

/// What runs instead of `command`, given which tools are usable: the
/// first alternative whose tool is, or a skip.
pub fn route(command: &str, usable: impl Fn(&str) -> bool) -> Option<Alternative> {
    alternatives(command)
        .into_iter()
        .find(|a| match &a.command {
            None => true,
            Some(c) => tool_of(c).is_some_and(|t| usable(&t)),
        })
}

/// One check per profile command, from what each tool said.
pub fn tool_checks(profile: &Profile, found: &BTreeMap<String, ToolState>) -> Vec<ReadyCheck> {
    let usable = |tool: &str| matches!(found.get(tool), Some(ToolState::Usable(_)));
    profile
        .commands()
        .map(|(role, command)| {
            let name = format!("{}: {command}", role.as_str());
            let tool = tool_of(command).unwrap_or_default();
            let (ok, detail) = match found.get(&tool) {
                Some(ToolState::Usable(version)) => (true, version.clone()),
                Some(ToolState::Unusable(why)) => (false, why.clone()),
                None => (false, format!("{tool} was not checked")),
            };
            let routed = (!ok).then(|| route(command, usable)).flatten();
            let why = match &routed {
                Some(r) => Some(r.why.clone()),
                None if !ok => Some(format!(
                    "install {tool} where the daemon's PATH finds it, or change this command in {PROFILE_PATH}"
                )),
                None => None,
            };
            ReadyCheck {
                name,
                ok,
                required: true,
                detail,
                routed_to: routed.map(|r| r.command.unwrap_or_else(|| SKIP.to_owned())),
                why,
            }
        })
        .collect()
}

/// The subcommand that says whether `cli` is logged in, reading only its
/// exit code (0: logged in), when it has one that needs no credentials.
pub fn login_probe(cli: CliKind) -> Option<&'static [&'static str]> {
    match cli {
        CliKind::Claude => Some(&["auth", "status"]),
        CliKind::Codex => Some(&["login", "status"]),
        _ => None,
    }
}

#[cfg(test)]
#[path = "readiness_tests.rs"]
mod tests;
