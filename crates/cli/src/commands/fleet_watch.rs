//! `flotilla fleet watch`: picks the control room (a tmux session laid out
//! by `fleet_room`, made and attached here) or the plain follow
//! (`fleet_follow`), and runs `tmux`. It owns the talk with tmux, not the
//! layout and not what a pane prints.

use std::io::IsTerminal;
use std::process::Stdio;

use anyhow::Result;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::FleetStatusArgs;
use serde::Serialize;
use tokio::process::Command;

use super::Env;
use super::fleet_follow::{Only, follow};
use super::fleet_room::{self, RoomPane, RoomPlan};
use super::fleet_start::check_name;
use crate::args::FleetWatchArgs;
use crate::exit::{CliError, FAILED, OK};
use crate::output::{self, outln};

/// What `fleet watch --no-attach --json` prints (`flotilla.fleet-room.v1`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct RoomReply {
    /// Schema id: `flotilla.fleet-room.v1`.
    pub(crate) schema: String,
    /// The fleet's name.
    pub(crate) fleet: String,
    /// The tmux session's name.
    pub(crate) session: String,
    /// The tmux server's socket, as tmux reports it.
    pub(crate) socket: Option<String>,
    /// Whether this command made the session (false: it was there).
    pub(crate) created: bool,
    /// The command that attaches to it.
    pub(crate) attach: String,
    /// Every pane: its role, window and command.
    pub(crate) panes: Vec<RoomPane>,
}

/// `fleet watch NAME [--plain] [--no-attach] [--only WHAT]`.
pub(crate) async fn watch(env: &Env, a: FleetWatchArgs) -> Result<u8> {
    let name = check_name(&a.name)?;
    if a.only.is_some() || a.plain {
        return follow(env, name, Only::parse(a.only.as_deref())).await;
    }
    if !a.no_attach {
        let terminal = std::io::stdout().is_terminal() && !env.json;
        if !terminal || !tmux_found().await {
            return follow(env, name, Only::All).await;
        }
    } else if !tmux_found().await {
        return Err(CliError::failed(
            "tmux is not installed (not found on PATH), so there is no control room to make",
            Some(
                "install tmux from your system's packages, or follow the fleet with `flotilla fleet watch NAME --plain`"
                    .to_owned(),
            ),
        ));
    }
    let room = room_of(env, &name).await?;
    let created = !has_session(&room.session).await;
    if created {
        let args = room.tmux_args();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        if !tmux(&refs).await? {
            return Err(CliError::failed(
                format!("tmux could not make the session {}", room.session),
                Some("see tmux's message above; `tmux -V` should be 3.1 or later".to_owned()),
            ));
        }
    }
    if a.no_attach {
        return print_room(env, &name, room, created).await;
    }
    attach(&room.session).await
}

/// The plan for the fleet's members as the daemon lists them.
async fn room_of(env: &Env, name: &PeerName) -> Result<RoomPlan> {
    let view = env
        .client()
        .await?
        .call(&FleetStatusArgs { name: name.clone() })
        .await?;
    let roles: Vec<String> = view.members.iter().map(|m| m.role.clone()).collect();
    Ok(fleet_room::plan(
        name.as_str(),
        &roles,
        &flotilla_command(env)?,
    ))
}

/// This binary and the `--home` that reaches the same daemon, for the
/// panes' shell.
fn flotilla_command(env: &Env) -> Result<String> {
    let exe = std::env::current_exe().map_err(|e| {
        CliError::failed(
            format!("cannot find this flotilla binary's path: {e}"),
            None,
        )
    })?;
    let mut words = vec![crate::hint::quoted(&exe.display().to_string())];
    if let Some(root) = &env.home.root {
        words.push("--home".to_owned());
        words.push(crate::hint::quoted(&root.display().to_string()));
    }
    Ok(words.join(" "))
}

/// `=SESSION`: the session of exactly that name (not a prefix).
fn exact(session: &str) -> String {
    format!("={session}")
}

async fn tmux_found() -> bool {
    Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// Whether the tmux server (if one runs) has the session.
async fn has_session(session: &str) -> bool {
    Command::new("tmux")
        .args(["has-session", "-t", &exact(session)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// Runs `tmux ARGS` quietly (its errors still on stderr); whether it
/// succeeded.
async fn tmux(args: &[&str]) -> Result<bool> {
    let status = Command::new("tmux")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .await
        .map_err(|e| CliError::failed(format!("cannot run tmux: {e}"), None))?;
    Ok(status.success())
}

/// Attaches this terminal (or, inside tmux, switches its client) to the
/// session; exits with tmux's exit.
async fn attach(session: &str) -> Result<u8> {
    let verb = match std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()) {
        true => "switch-client",
        false => "attach-session",
    };
    let status = Command::new("tmux")
        .args([verb, "-t", &exact(session)])
        .status()
        .await
        .map_err(|e| CliError::failed(format!("cannot run tmux: {e}"), None))?;
    Ok(status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(FAILED))
}

/// `--no-attach`: the session, its socket, how to attach, its panes.
async fn print_room(env: &Env, name: &PeerName, room: RoomPlan, created: bool) -> Result<u8> {
    let out = Command::new("tmux")
        .args([
            "display-message",
            "-p",
            "-t",
            &exact(&room.session),
            "#{socket_path}",
        ])
        .stdin(Stdio::null())
        .output()
        .await
        .ok();
    let socket = out
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|s| !s.is_empty());
    let attach = match &socket {
        Some(s) => format!(
            "tmux -S {} attach -t {}",
            crate::hint::quoted(s),
            exact(&room.session)
        ),
        None => format!("tmux attach -t {}", exact(&room.session)),
    };
    let reply = RoomReply {
        schema: "flotilla.fleet-room.v1".into(),
        fleet: name.to_string(),
        session: room.session,
        socket,
        created,
        attach,
        panes: room.panes,
    };
    if env.json {
        output::json(&reply)?;
        return Ok(OK);
    }
    let what = if created { "made" } else { "found" };
    outln!(
        "{what} the control room of fleet {}: tmux session {}",
        reply.fleet,
        reply.session
    )?;
    for p in &reply.panes {
        outln!("  {:<12} {:<10} {}", p.role, p.window, p.command)?;
    }
    outln!("attach: {}", reply.attach)?;
    Ok(OK)
}
