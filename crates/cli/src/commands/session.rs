//! `flotilla peer claude|codex|gemini|qwen|pi|opencode|grok`: the vendor's
//! own interactive CLI in this terminal, as a session peer.
//!
//! This process registers the peer with its own pid and start time as
//! evidence, then becomes the CLI (`exec`), so the pid the daemon watches
//! is the CLI's: when it ends, even by `kill -9`, the daemon notices within
//! a second and the peer leaves. The CLI gets the session's identity
//! (`FLOTILLA_PEER`, `FLOTILLA_HOME`, `FLOTILLA_HOST`, and
//! `FLOTILLA_SESSION_PID` for its hooks) and Flotilla's MCP server for this
//! session only; the user's own settings are never written.

use std::os::unix::process::CommandExt;

use anyhow::{Context, Result};
use flotilla_actors::lane::CliKind;
use flotilla_actors::names::{GroupName, PeerName};
use flotilla_actors::protocol::{PeerJoinArgs, PeerLeaveArgs, SessionEvidence};
use flotilla_host::config::HostConfig;
use flotilla_host::lanes::cli::{InteractiveContext, InteractivePlan, interactive_plan};
use flotilla_host::lanes::identity::LaneIdentity;
use flotilla_host::lanes::process::start_time;

use super::Env;
use crate::args::SessionCli;
use crate::exit::CliError;

/// Exit code when the CLI could not be started.
const CANNOT_START: u8 = 127;

/// Starts the session's relay (Codex) in a process group of its own, so the
/// terminal's Ctrl-C is the CLI's alone; it ends with the session. Its
/// messages go to `LOGS/session-NAME.log`. A relay that cannot start leaves
/// the session on `poll` delivery, with a warning.
fn start_relay(env: &Env, name: &PeerName, argv: &[String]) {
    use std::os::unix::process::CommandExt as _;
    let log = env.home.logs_dir.join(format!("session-{name}.log"));
    let stderr = flotilla_host::home::create_private(&env.home.logs_dir)
        .ok()
        .and_then(|()| flotilla_actors::private_file::create(&log).ok());
    let mut command = std::process::Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    match stderr {
        Some(file) => command.stderr(file),
        None => command.stderr(std::process::Stdio::null()),
    };
    if let Err(e) = command.spawn() {
        eprintln!(
            "warning: cannot start the session's relay ({e}): read messages with the inbox tool"
        );
    }
}

pub(crate) async fn launch(env: &Env, cli: CliKind, a: SessionCli) -> Result<u8> {
    let config = HostConfig::load(&env.home.config_file)?;
    let program = config.cli_program(cli, cli.as_str());
    let pid = std::process::id();
    let name = match &a.name {
        Some(n) => PeerName::new(n)?,
        None => PeerName::new(&format!("{cli}-{pid}"))?,
    };
    let groups = a
        .groups
        .iter()
        .map(|g| GroupName::explicit(g))
        .collect::<Result<Vec<_>, _>>()?;
    let exe = std::env::current_exe().context("cannot find the flotilla executable")?;
    let exe = exe.display().to_string();
    let mut client = env.client().await?;
    let status = client
        .call(&flotilla_actors::protocol::HostStatusArgs {})
        .await?;
    let peer = flotilla_actors::names::PeerId::new(status.host.clone(), name.clone());
    let identity = LaneIdentity::new(env.home.root.as_deref(), peer);
    let mut hook = vec![exe.clone()];
    if let Some(root) = &env.home.root {
        hook.extend(["--home".to_owned(), root.display().to_string()]);
    }
    hook.extend(["hook".to_owned()]);
    let session_dir = env.home.state_dir.join("sessions").join(name.as_str());
    let inherited: Vec<(String, String)> = std::env::vars().collect();
    let ctx = InteractiveContext {
        program: &program,
        server: &identity.mcp_server(&exe),
        hook: Some(&hook),
        peer: name.as_str(),
        pid,
        resume: a.resume.as_deref(),
        args: &a.args,
        dir: &session_dir,
        env: &inherited,
    };
    let InteractivePlan {
        plan,
        delivery,
        relay,
        env_removed,
    } = interactive_plan(cli, &ctx)
        .map_err(|e| CliError::usage(e, "see `flotilla peer --help`"))?;
    if let Some(home) = &plan.cli_home {
        std::fs::create_dir_all(&session_dir)?;
        if let Some(warning) = flotilla_host::lanes::cli_home::prepare(home)? {
            eprintln!("warning: {warning}");
        }
    }
    let join = PeerJoinArgs {
        name: name.clone(),
        groups,
        product: Some(cli.to_string()),
        session: Some(SessionEvidence {
            pid,
            start_time: start_time(pid),
            delivery: delivery.to_owned(),
        }),
    };
    let view = client.call(&join).await?;
    eprintln!(
        "flotilla: {} joined as a {cli} session ({delivery} delivery)",
        view.id
    );
    if let Some(relay) = &relay {
        start_relay(env, &name, relay);
    }
    let mut command = std::process::Command::new(&plan.argv[0]);
    command.args(&plan.argv[1..]);
    command.envs(plan.env.iter().map(|(k, v)| (k, v)));
    command.envs(identity.env());
    command.env("FLOTILLA_SESSION_PID", pid.to_string());
    for name in identity
        .env_removed()
        .into_iter()
        .chain(env_removed.iter().copied())
    {
        command.env_remove(name);
    }
    let error = command.exec();
    // Only reached when the CLI could not start.
    let leave = PeerLeaveArgs { name, force: true };
    let _ = client.call(&leave).await;
    Err(CliError {
        code: CANNOT_START,
        message: format!("cannot start {program}: {error}"),
        hint: Some(format!(
            "install {cli}, or name its path in the [clis] section of config.toml; `flotilla lane doctor` shows what is found"
        )),
    }
    .into())
}
