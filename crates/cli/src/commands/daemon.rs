//! `up`, `down`, `host run`, `host status`, `host install`, `host uninstall`.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use flotilla_actors::names::HostName;
use flotilla_actors::protocol::{HostStatusArgs, HostStatusReply, ShutdownArgs};
use flotilla_host::client::ControlClient;
use flotilla_host::daemon::{self as host_daemon, DaemonOptions};
use serde_json::json;

use super::Env;
use super::daemon_settings::{self, Settings};
use crate::args::{RunArgs, UpArgs};
use crate::exit::{CONFLICT, CliError, FAILED, OK, UNAVAILABLE, USAGE};
use crate::output::{self, StdoutError, out, outln};

/// How long `up` waits for a new daemon to answer.
const START_PATIENCE: Duration = Duration::from_secs(20);
/// How long `down` waits for the daemon to exit.
const STOP_PATIENCE: Duration = Duration::from_secs(30);

fn host_name(args: &RunArgs) -> Result<Option<HostName>> {
    Ok(args.name.as_deref().map(HostName::new).transpose()?)
}

pub(crate) async fn run(env: &Env, args: RunArgs) -> Result<u8> {
    let options = DaemonOptions {
        name: host_name(&args)?,
        test_hooks: std::env::var("FLOTILLA_TEST_HOOKS").is_ok_and(|v| v == "1"),
        hub: args.hub.clone(),
        hub_name: args.hub_name.clone(),
        allow_remote_lanes: args
            .allow_remote_lanes
            .as_ref()
            .map(|clis| clis.iter().map(ToString::to_string).collect()),
        allow_remote_groups: args.allow_remote_groups.clone(),
        remote_lane_roots: args.remote_lane_roots.clone(),
        remote_lane_max_permissions: args.remote_lane_max_permissions.map(|p| p.to_string()),
        remote_lane_env: args.remote_lane_env.clone(),
        remote_lane_args: args.remote_lane_args,
        new_store: args.new_store,
    };
    // A second daemon is refused by the first's lock: it records nothing.
    if running(env).await.is_none() {
        env.home.prepare()?;
        daemon_settings::record(&env.home, &Settings::given(&args))?;
    }
    host_daemon::run(env.home.clone(), options).await?;
    Ok(OK)
}

async fn running(env: &Env) -> Option<HostStatusReply> {
    let mut client = ControlClient::connect(&env.home).await.ok()?;
    client.call(&HostStatusArgs {}).await.ok()
}

fn print_running(
    env: &Env,
    status: &HostStatusReply,
    started: bool,
    restarted: bool,
) -> Result<(), StdoutError> {
    if env.json {
        output::json(&json!({"schema": "flotilla.up.v1", "started": started,
            "restarted": restarted, "home": env.home.label(), "status": status}))?;
    } else {
        let verb = match (started, restarted) {
            (true, true) => "restarted",
            (true, false) => "started",
            _ => "already running",
        };
        outln!(
            "flotilla daemon {verb}: host {}, pid {}, home {}",
            status.host,
            status.pid,
            env.home.label()
        )?;
    }
    Ok(())
}

pub(crate) async fn up(env: &Env, args: UpArgs) -> Result<u8> {
    let given = Settings::given(&args.run);
    if args.save {
        save(env, &given)?;
    }
    let mut restarted = false;
    let mut start_with = given.clone();
    if let Some(status) = running(env).await {
        let record = daemon_settings::recorded(&env.home, status.pid);
        let differences = match &record {
            Some(record) => {
                let mut in_use = record.effective.clone();
                in_use.name = Some(status.host.to_string());
                given.differences(&in_use)
            }
            None => Vec::new(),
        };
        // A restart keeps the flags the daemon was started with that are
        // not given again.
        if let Some(record) = record {
            start_with = record.given.overlay(&given);
        }
        if !args.restart {
            if differences.is_empty() {
                print_running(env, &status, false, false)?;
                return Ok(OK);
            }
            let what: Vec<String> = differences
                .iter()
                .map(|(k, wanted, now)| format!("{k} is {now}, not {wanted}"))
                .collect();
            return Err(CliError {
                code: CONFLICT,
                message: format!(
                    "the daemon is already running (pid {}) with other settings: {}",
                    status.pid,
                    what.join("; ")
                ),
                hint: Some(
                    "add --restart to stop it and start it with these (and --save to keep them in config.toml)"
                        .to_owned(),
                ),
            }
            .into());
        }
        stop(env).await?;
        restarted = true;
    }
    start(env, &start_with, args.run.new_store, restarted).await
}

/// Writes the flags given to `up --save` into config.toml.
fn save(env: &Env, given: &Settings) -> Result<()> {
    let path = &env.home.config_file;
    let before = super::config::read_text(path)?;
    let edited = given.save_into(&before).map_err(super::config::key_error)?;
    env.home.prepare()?;
    super::config::replace_file(path, &edited)?;
    if !env.json {
        crate::verbosity::note!("saved the given settings in {}", path.display());
    }
    Ok(())
}

/// `flotilla restart`: stops the daemon and starts it again with the
/// flags it was started with (and config.toml as it is now).
pub(crate) async fn restart(env: &Env) -> Result<u8> {
    let given = match running(env).await {
        Some(status) => {
            let given = daemon_settings::recorded(&env.home, status.pid)
                .map(|r| r.given)
                .unwrap_or_default();
            stop(env).await?;
            given
        }
        None => Settings::default(),
    };
    start(env, &given, false, true).await
}

async fn start(env: &Env, given: &Settings, new_store: bool, restarted: bool) -> Result<u8> {
    if let Some(name) = &given.name {
        HostName::new(name)?;
    }
    env.home.prepare()?;
    // A bad config.toml is said here whole, not as the tail of the
    // daemon's stderr.
    flotilla_host::config::HostConfig::load(&env.home.config_file).map_err(|e| CliError {
        code: FAILED,
        message: e.to_string(),
        hint: None,
    })?;
    flotilla_host::store_file::check(&env.home, new_store)?;
    let exe = std::env::current_exe().context("cannot find the flotilla executable")?;
    let stderr_path = env.home.logs_dir.join("daemon.stderr");
    let stderr = flotilla_actors::private_file::create(&stderr_path)
        .with_context(|| format!("cannot write {}", stderr_path.display()))?;
    let mut cmd = tokio::process::Command::new(exe);
    if let Some(root) = &env.home.root {
        cmd.arg("--home").arg(root);
    }
    cmd.args(["host", "run"]);
    cmd.args(given.to_flags());
    if new_store {
        cmd.arg("--new-store");
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(false)
        .spawn()
        .context("cannot start the daemon")?;
    let deadline = tokio::time::Instant::now() + START_PATIENCE;
    while tokio::time::Instant::now() < deadline {
        if let Some(exit) = child.try_wait()? {
            let log = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            let tail: Vec<&str> = log
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            // A documented refusal of the daemon (bad input, conflict) is
            // passed on; anything else is a failure to start.
            let code = exit
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .filter(|c| (USAGE..=UNAVAILABLE).contains(c))
                .unwrap_or(FAILED);
            return Err(CliError {
                code,
                message: format!("the daemon exited at start ({exit}): {}", tail.join("\n")),
                hint: Some(format!(
                    "see {} and {}",
                    stderr_path.display(),
                    env.home.log_file().display()
                )),
            }
            .into());
        }
        if let Some(status) = running(env).await {
            print_running(env, &status, true, restarted)?;
            return Ok(OK);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(CliError::failed(
        format!(
            "the daemon did not answer within {}s",
            START_PATIENCE.as_secs()
        ),
        Some(format!("see {}", env.home.log_file().display())),
    ))
}

pub(crate) async fn down(env: &Env) -> Result<u8> {
    if ControlClient::connect(&env.home).await.is_err() {
        if env.json {
            output::json(
                &json!({"schema": "flotilla.down.v1", "stopped": false, "was_running": false}),
            )?;
        } else {
            outln!("no daemon is running for {}", env.home.label())?;
        }
        return Ok(OK);
    }
    let status = stop(env).await?;
    if env.json {
        output::json(
            &json!({"schema": "flotilla.down.v1", "stopped": true, "was_running": true, "pid": status.pid}),
        )?;
    } else {
        outln!(
            "flotilla daemon stopped (host {}, pid {})",
            status.host,
            status.pid
        )?;
    }
    Ok(OK)
}

/// Asks the running daemon to stop and waits until it is gone.
async fn stop(env: &Env) -> Result<HostStatusReply> {
    let mut client = ControlClient::connect(&env.home).await?;
    let status = client.call(&HostStatusArgs {}).await?;
    client.call(&ShutdownArgs {}).await?;
    let deadline = tokio::time::Instant::now() + STOP_PATIENCE;
    while tokio::time::Instant::now() < deadline {
        if !env.home.pid_file().exists() && ControlClient::connect(&env.home).await.is_err() {
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(CliError::failed(
        format!(
            "the daemon (pid {}) did not stop within {}s",
            status.pid,
            STOP_PATIENCE.as_secs()
        ),
        Some(format!(
            "look at {}; as a last resort: kill {}",
            env.home.log_file().display(),
            status.pid
        )),
    ))
}

pub(crate) async fn status(env: &Env) -> Result<u8> {
    let reply = env.client().await?.call(&HostStatusArgs {}).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        out!("{}", output::host_status(&reply))?;
    }
    Ok(OK)
}
