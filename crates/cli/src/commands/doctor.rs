//! `flotilla doctor`: directories and permissions, the socket path, the
//! config, the daemon, the store and versions. Each check is ok, warn or
//! fail with a hint; any fail makes the exit code 1.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::Result;
use flotilla_actors::protocol::{HostStatusArgs, PROTOCOL_VERSION, StoreCheckArgs};
use flotilla_host::client::ControlClient;
use flotilla_host::config::HostConfig;
use flotilla_host::home::check_private;
use serde::Serialize;
use serde_json::json;

use super::Env;
use crate::exit::{FAILED, OK};
use crate::output;

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
            checks.push(check(
                "daemon",
                Level::Fail,
                e.to_string(),
                Some("start it with `flotilla up`"),
            ));
            checks.push(check(
                "store",
                Level::Warn,
                "not checked: only the daemon opens the store",
                Some("start the daemon, then run doctor again"),
            ));
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
        );
    } else {
        for c in &checks {
            let tag = match c.status {
                Level::Ok => "ok  ",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            println!("{tag}  {:<12} {}", c.name, c.detail);
            if let Some(h) = &c.hint {
                println!("      {:<12} hint: {h}", "");
            }
        }
    }
    Ok(if failed { FAILED } else { OK })
}
