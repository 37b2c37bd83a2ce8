//! `flotilla integrations install|uninstall|status`: the instructions that
//! teach an agent CLI about Flotilla, written where that CLI looks for them,
//! and nothing else: a Claude Code skill, a Codex skill, a Gemini CLI
//! extension, a Qwen Code extension. Only for CLIs found on PATH (or named
//! with `--cli`); never run implicitly. What was written is recorded in the
//! home (`state/integrations.json`) with a digest of each file, so
//! `uninstall` removes exactly that, and leaves a file the user changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use flotilla_actors::lane::CliKind;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Env;
use crate::args::{INTEGRATED_CLIS, IntegrationsArgs, IntegrationsCommand};
use crate::exit::OK;
use crate::output::{self, StdoutError, outln};

/// What `install` wrote: file path to the SHA-256 of its contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    files: BTreeMap<String, String>,
}

/// The instructions, shared by every CLI.
fn instructions() -> String {
    "# Flotilla\n\n\
     You are a member of a Flotilla team: other agents and people you can message, and worker \
     lanes you can start. Use the Flotilla MCP tools when they are offered (`whoami`, \
     `list_peers`, `send`, `broadcast`, `inbox`, `reply`, `rename`, `outbox`, `lane`), otherwise \
     the `flotilla` command (your identity is in FLOTILLA_PEER; every `--as` defaults to it).\n\n\
     - Who am I, who can I reach: `whoami`, `list_peers` (`flotilla peers`).\n\
     - Message a peer: `send` with `to` (NAME on this host, HOST/NAME elsewhere); answer a \
       message with `reply` and its id (`flotilla reply --to-message ID TEXT`).\n\
     - Read: `inbox` (`flotilla inbox`); messages framed `[Flotilla]` come from the daemon with \
       a verified sender.\n\
     - Delegate: `lane` with action `run` (or `flotilla lane run --cli CLI --prompt ...`) starts \
       a worker and returns its result; `start` then `wait` to do other work meanwhile.\n\
     - Only message peers about the work; never forward secrets.\n"
        .to_owned()
}

/// The files of `cli`'s integration under the user's home `home`.
fn files(cli: CliKind, home: &Path) -> Vec<(PathBuf, String)> {
    let skill = |dir: PathBuf| {
        let text = format!(
            "---\nname: flotilla\ndescription: Work with the Flotilla team: message peers, read your inbox, start and collect worker lanes.\n---\n\n{}",
            instructions()
        );
        vec![(dir.join("flotilla").join("SKILL.md"), text)]
    };
    let extension = |dir: PathBuf, manifest: &str, context: &str| {
        let ext = dir.join("flotilla");
        let meta = json!({"name": "flotilla", "version": env!("CARGO_PKG_VERSION"), "contextFileName": context});
        vec![
            (ext.join(manifest), format!("{meta:#}\n")),
            (ext.join(context), instructions()),
        ]
    };
    match cli {
        CliKind::Claude => skill(home.join(".claude/skills")),
        CliKind::Codex => {
            let codex = std::env::var_os("CODEX_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".codex"));
            skill(codex.join("skills"))
        }
        CliKind::Gemini => extension(
            home.join(".gemini/extensions"),
            "gemini-extension.json",
            "GEMINI.md",
        ),
        CliKind::Qwen => extension(
            home.join(".qwen/extensions"),
            "qwen-extension.json",
            "QWEN.md",
        ),
        _ => Vec::new(),
    }
}

fn digest(text: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, text);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn record_file(env: &Env) -> PathBuf {
    env.home.state_dir.join("integrations.json")
}

fn load(env: &Env) -> Result<Record> {
    match std::fs::read_to_string(record_file(env)) {
        Ok(text) => Ok(serde_json::from_str(&text).context("integrations.json is damaged")?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
        Err(e) => Err(e.into()),
    }
}

fn save(env: &Env, record: &Record) -> Result<()> {
    flotilla_host::home::create_private(&env.home.state_dir)?;
    let text = serde_json::to_vec_pretty(record)?;
    flotilla_actors::private_file::write(&record_file(env), &text)?;
    Ok(())
}

/// The CLIs to act on: `--cli`, else every CLI with an integration.
fn chosen(a: &IntegrationsArgs) -> Vec<CliKind> {
    a.cli
        .map_or_else(|| INTEGRATED_CLIS.to_vec(), |cli| vec![cli])
}

pub(crate) fn run(env: &Env, c: IntegrationsCommand) -> Result<u8> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set")?;
    let (action, a) = match &c {
        IntegrationsCommand::Install(a) => ("install", a),
        IntegrationsCommand::Uninstall(a) => ("uninstall", a),
        IntegrationsCommand::Status(a) => ("status", a),
    };
    let mut record = load(env)?;
    let mut rows = Vec::new();
    for cli in chosen(a) {
        let installed = on_path(cli.as_str());
        let mut paths = Vec::new();
        for (path, text) in files(cli, &home) {
            let key = path.display().to_string();
            let present = std::fs::read(&path).ok();
            let ours = present.as_deref().map(digest) == record.files.get(&key).cloned();
            let change = match action {
                "install" if installed || a.cli.is_some() => Some("write"),
                "uninstall" if present.is_some() && ours => Some("remove"),
                "uninstall" if present.is_some() => Some("keep (changed since it was written)"),
                _ => None,
            };
            if !a.dry_run {
                match change {
                    Some("write") => {
                        if let Some(dir) = path.parent() {
                            std::fs::create_dir_all(dir)?;
                        }
                        std::fs::write(&path, &text)?;
                        record.files.insert(key.clone(), digest(text.as_bytes()));
                    }
                    Some("remove") => {
                        std::fs::remove_file(&path)?;
                        record.files.remove(&key);
                        if let Some(dir) = path.parent() {
                            let _ = std::fs::remove_dir(dir);
                        }
                    }
                    _ => {}
                }
            }
            paths.push(json!({"path": key, "present": present.is_some(), "written_by_flotilla": ours, "change": change}));
        }
        rows.push(json!({"cli": cli.as_str(), "installed": installed, "files": paths}));
    }
    if !a.dry_run && action != "status" {
        save(env, &record)?;
    }
    let reply = json!({"schema": "flotilla.integrations.v1", "action": action, "dry_run": a.dry_run, "clis": rows});
    if env.json {
        output::json(&reply)?;
    } else {
        print_rows(&reply)?;
    }
    Ok(OK)
}

fn print_rows(reply: &serde_json::Value) -> Result<(), StdoutError> {
    for row in reply["clis"].as_array().into_iter().flatten() {
        let cli = row["cli"].as_str().unwrap_or_default();
        let found = if row["installed"] == true {
            "found"
        } else {
            "not found"
        };
        outln!("{cli} ({found} on PATH)")?;
        for f in row["files"].as_array().into_iter().flatten() {
            let what = match (f["change"].as_str(), f["present"] == true) {
                (Some(change), _) => change.to_owned(),
                (None, true) => "present".to_owned(),
                (None, false) => "absent".to_owned(),
            };
            outln!("  {what}: {}", f["path"].as_str().unwrap_or_default())?;
        }
    }
    Ok(())
}
