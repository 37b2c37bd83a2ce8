//! `flotilla doctor`: directories and permissions, the socket path, the
//! config, the daemon, the store and versions. Each check is ok, warn or
//! fail with a hint; any fail makes the exit code 1. The daemon checks its
//! store; when no daemon answers, doctor looks at the file itself, read-only,
//! so a store the daemon could not open is explained before `flotilla up`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::Result;
use flotilla_actors::protocol::{HostStatusArgs, PROTOCOL_VERSION, StoreCheckArgs};
use flotilla_actors::store::{Probe, Store, StoreError};
use flotilla_host::client::ControlClient;
use flotilla_host::config::HostConfig;
use flotilla_host::home::{Home, check_private};
use flotilla_host::store_file;
use serde::Serialize;
use serde_json::json;

use super::Env;
use crate::exit::{FAILED, OK};
use crate::output::{self, outln};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    name: String,
    status: Level,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

fn check(name: &str, status: Level, detail: impl Into<String>, hint: Option<&str>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
        hint: hint.map(str::to_owned),
    }
}

fn directory(name: &str, dir: &Path, must_be_private: bool) -> Check {
    let Ok(meta) = std::fs::metadata(dir) else {
        return check(
            name,
            Level::Warn,
            format!("{} does not exist yet", dir.display()),
            Some("`flotilla up` creates it"),
        );
    };
    let mode = meta.mode() & 0o777;
    match check_private(dir) {
        Ok(()) if mode & 0o077 == 0 => check(
            name,
            Level::Ok,
            format!("{} (mode {mode:o})", dir.display()),
            None,
        ),
        Ok(()) => check(
            name,
            Level::Warn,
            format!("{} is readable by others (mode {mode:o})", dir.display()),
            Some(&format!("chmod 700 {}", dir.display())),
        ),
        Err(e) => check(
            name,
            if must_be_private {
                Level::Fail
            } else {
                Level::Warn
            },
            e.to_string(),
            Some(&format!("chmod 700 {} (or remove it)", dir.display())),
        ),
    }
}

async fn daemon_checks(env: &Env, checks: &mut Vec<Check>) {
    let mut client = match ControlClient::connect(&env.home).await {
        Ok(c) => c,
        Err(e) => {
            let store = offline_store_check(&env.home).await;
            let hint = if store.status == Level::Fail {
                "the store check fails: fix the store first (see its hint), then `flotilla up`"
            } else {
                "start it with `flotilla up`"
            };
            checks.push(check("daemon", Level::Fail, e.to_string(), Some(hint)));
            checks.push(store);
            return;
        }
    };
    match client.call(&HostStatusArgs {}).await {
        Ok(s) => {
            checks.push(check(
                "daemon",
                Level::Ok,
                format!("host {} pid {} up {}s", s.host, s.pid, s.uptime_secs),
                None,
            ));
            let ours = env!("CARGO_PKG_VERSION");
            if s.version == ours && s.protocol == PROTOCOL_VERSION {
                checks.push(check(
                    "versions",
                    Level::Ok,
                    format!("flotilla {ours}, protocol {PROTOCOL_VERSION}"),
                    None,
                ));
            } else {
                checks.push(check("versions", Level::Warn, format!("this command is {ours} (protocol {PROTOCOL_VERSION}), the daemon {} (protocol {})", s.version, s.protocol),
                    Some("restart the daemon after an upgrade: flotilla down && flotilla up")));
            }
            let restarting: Vec<&str> = s
                .actors
                .iter()
                .filter(|a| a.restarts > 0)
                .map(|a| a.name.as_str())
                .collect();
            if !restarting.is_empty() {
                checks.push(check(
                    "actors",
                    Level::Warn,
                    format!("restarted since start: {}", restarting.join(", ")),
                    Some("see logs/daemon.log for why"),
                ));
            }
        }
        Err(e) => checks.push(check(
            "daemon",
            Level::Fail,
            e.to_string(),
            Some("restart it: flotilla down && flotilla up"),
        )),
    }
    match client.call(&StoreCheckArgs {}).await {
        Ok(r) if r.ok => checks.push(check(
            "store",
            Level::Ok,
            format!("{} schema v{}: {}", r.path, r.schema_version, r.detail),
            None,
        )),
        Ok(r) => checks.push(check(
            "store",
            Level::Fail,
            format!("{}: {}", r.path, r.detail),
            Some("stop the daemon and move the store away; see docs/operations.md"),
        )),
        Err(e) => checks.push(check("store", Level::Fail, e.to_string(), None)),
    }
}

/// The store, looked at read-only because no daemon answers: the store's
/// own error and what to do, before `flotilla up` runs into it.
async fn offline_store_check(home: &Home) -> Check {
    let path = home.store_file();
    if let Err(e) = store_file::check(home, false) {
        return check("store", Level::Fail, e.to_string(), e.hint().as_deref());
    }
    if !path.exists() {
        return check(
            "store",
            Level::Ok,
            format!("{} does not exist yet", path.display()),
            Some("`flotilla up` creates it"),
        );
    }
    let probe_path = path.clone();
    let probed = tokio::task::spawn_blocking(move || Store::probe(&probe_path)).await;
    let shown = path.display();
    match probed {
        Ok(Ok(Probe::Readable(v))) => check(
            "store",
            Level::Ok,
            format!("{shown} schema v{v} (read-only: no daemon runs)"),
            None,
        ),
        Ok(Ok(Probe::NeedsRepair)) => check(
            "store",
            Level::Warn,
            format!("{shown} was not closed cleanly"),
            Some("the daemon repairs it when it starts: flotilla up"),
        ),
        Ok(Err(e)) => check(
            "store",
            Level::Fail,
            format!("{shown}: {e}"),
            Some(&store_hint(&e, home)),
        ),
        Err(e) => check(
            "store",
            Level::Fail,
            format!("{shown}: reading it failed: {e}"),
            Some(&damaged_hint(&path)),
        ),
    }
}

fn store_hint(e: &StoreError, home: &Home) -> String {
    match e {
        StoreError::Locked { .. } => format!(
            "another process has it open, probably a daemon that does not answer: its pid is in \
             {}, its log in {}",
            home.pid_file().display(),
            home.log_file().display()
        ),
        StoreError::TooNew { .. } => {
            "run a flotilla release at least as new as the one that wrote it".into()
        }
        _ => damaged_hint(&home.store_file()),
    }
}

fn damaged_hint(path: &Path) -> String {
    format!(
        "the daemon cannot open it: move {} away (keep it; it may be recoverable), then start \
         anew with an empty store: flotilla up --new-store",
        path.display()
    )
}

pub(crate) async fn run(env: &Env) -> Result<u8> {
    let home = &env.home;
    let mut checks = vec![
        directory("run_dir", &home.run_dir, true),
        directory("state_dir", &home.state_dir, false),
        directory("logs_dir", &home.logs_dir, false),
        directory("certs_dir", &home.certs_dir, false),
    ];
    let socket = home.socket_path();
    checks.push(if home.socket_is_fallback() {
        check(
            "socket_path",
            Level::Ok,
            format!(
                "{} (the home's path is too long for a socket; using this private fallback)",
                socket.display()
            ),
            None,
        )
    } else {
        check("socket_path", Level::Ok, socket.display().to_string(), None)
    });
    checks.push(match HostConfig::load(&home.config_file) {
        Ok(_) if home.config_file.exists() => check(
            "config",
            Level::Ok,
            home.config_file.display().to_string(),
            None,
        ),
        Ok(_) => check(
            "config",
            Level::Ok,
            format!("{} absent: embedded defaults", home.config_file.display()),
            None,
        ),
        Err(e) => check(
            "config",
            Level::Fail,
            e.to_string(),
            Some("fix the file; docs/config.md lists the keys"),
        ),
    });
    daemon_checks(env, &mut checks).await;
    let failed = checks.iter().any(|c| c.status == Level::Fail);
    if env.json {
        output::json(
            &json!({"schema": "flotilla.doctor.v1", "ok": !failed, "home": home.label(), "checks": checks}),
        )?;
    } else {
        for c in &checks {
            let tag = match c.status {
                Level::Ok => "ok  ",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            outln!("{tag}  {:<12} {}", c.name, c.detail)?;
            if let Some(h) = &c.hint {
                outln!("      {:<12} hint: {h}", "")?;
            }
        }
    }
    Ok(if failed { FAILED } else { OK })
}
