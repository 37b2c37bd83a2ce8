//! `host install|uninstall` and `hub install|uninstall`: the service file
//! that runs this home's daemon or hub under systemd (Linux) or launchd
//! (macOS). What goes in it is `flotilla_host::service`'s (pure); this
//! module picks the binary, refuses what would break later, writes or
//! removes the file, and with `--enable` runs the service manager's
//! commands.
//!
//! JSON: `flotilla.service.v1` (`action`, `dry_run`, `name`, `path`,
//! `contents` or `existed`, `next[]`, `notes[]`, `enabled`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use flotilla_host::config::HostConfig;
use flotilla_host::service::{self, Platform, ServiceRole, UserEnv};
use serde_json::json;

use super::Env;
use crate::args::ServiceArgs;
use crate::exit::{CliError, FAILED, NOT_FOUND, OK, USAGE};
use crate::output::{self, outln};

fn user_env() -> Result<UserEnv> {
    let home = std::env::var_os("HOME").map(PathBuf::from).ok_or_else(|| {
        CliError::usage(
            "HOME is not set",
            "service files go under your home directory; set HOME",
        )
    })?;
    Ok(UserEnv {
        home,
        config_home: std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        path: std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
    })
}

/// The binary the service runs: `--binary`, else this one unless it sits
/// in a cargo build directory.
fn binary(args: &ServiceArgs) -> Result<PathBuf> {
    if let Some(given) = &args.binary {
        let path = std::fs::canonicalize(given).map_err(|e| CliError {
            code: NOT_FOUND,
            message: format!("--binary {}: {e}", given.display()),
            hint: Some("name the installed flotilla binary".to_owned()),
        })?;
        return Ok(path);
    }
    let exe = std::env::current_exe().context("cannot find the flotilla executable")?;
    if service::in_build_tree(&exe) {
        return Err(CliError::usage(
            format!(
                "this flotilla runs from a build directory ({}): a `cargo clean` or a rebuild would take the service's binary away",
                exe.display()
            ),
            "install it first (`cargo install --path crates/cli`) and run that one, or name a binary with --binary PATH",
        ));
    }
    Ok(exe)
}

fn service_file(env: &Env, args: &ServiceArgs, role: ServiceRole) -> Result<service::ServiceFile> {
    Ok(service::render(
        role,
        Platform::current(),
        &binary(args)?,
        &env.home,
        &user_env()?,
    ))
}

pub(crate) fn install(env: &Env, args: ServiceArgs, role: ServiceRole) -> Result<u8> {
    if role == ServiceRole::Hub
        && HostConfig::load(&env.home.config_file)?
            .hub_server
            .is_none()
    {
        return Err(CliError {
            code: USAGE,
            message: format!(
                "{} runs no hub: there is nothing to install",
                env.home.label()
            ),
            hint: Some("make the hub first: flotilla hub init --name HUB-DNS-NAME".to_owned()),
        }
        .into());
    }
    let file = service_file(env, &args, role)?;
    let steps: Vec<String> = file.enable.iter().map(|a| a.join(" ")).collect();
    if !args.dry_run {
        service::install(&file).with_context(|| format!("cannot write {}", file.path.display()))?;
    }
    let enabled = args.enable && !args.dry_run;
    if enabled {
        enable(&file.enable)?;
    }
    if env.json {
        output::json(
            &json!({"schema": "flotilla.service.v1", "action": "install",
            "dry_run": args.dry_run, "name": file.name, "path": file.path,
            "contents": file.contents, "next": if enabled { Vec::new() } else { steps.clone() },
            "notes": file.notes, "enabled": enabled}),
        )?;
        return Ok(OK);
    }
    if args.dry_run {
        outln!("would write {}:\n\n{}", file.path.display(), file.contents)?;
    } else if enabled {
        outln!(
            "wrote {} and started it ({})",
            file.path.display(),
            steps.join("; ")
        )?;
    } else {
        outln!(
            "wrote {}\nto start it now and at every login, run (or add --enable):",
            file.path.display()
        )?;
        for step in &steps {
            outln!("  {step}")?;
        }
    }
    for note in &file.notes {
        outln!("note: {note}")?;
    }
    Ok(OK)
}

/// Runs the service manager's commands, stopping at the first that fails.
fn enable(steps: &[Vec<String>]) -> Result<()> {
    for argv in steps {
        let Some((program, rest)) = argv.split_first() else {
            continue;
        };
        let out = std::process::Command::new(program)
            .args(rest)
            .output()
            .map_err(|e| CliError {
                code: FAILED,
                message: format!("cannot run {program}: {e}"),
                hint: Some("the unit is written; start it with your service manager".to_owned()),
            })?;
        if !out.status.success() {
            return Err(CliError {
                code: FAILED,
                message: format!(
                    "`{}` failed ({}): {}",
                    argv.join(" "),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                hint: Some("the unit is written; fix the service manager's complaint and run the command again".to_owned()),
            }
            .into());
        }
    }
    Ok(())
}

pub(crate) fn uninstall(env: &Env, args: ServiceArgs, role: ServiceRole) -> Result<u8> {
    let file = service_file(env, &args, role)?;
    let existed = if args.dry_run {
        file.path.exists()
    } else {
        service::uninstall(&file)
            .with_context(|| format!("cannot remove {}", file.path.display()))?
    };
    if env.json {
        output::json(
            &json!({"schema": "flotilla.service.v1", "action": "uninstall", "dry_run": args.dry_run,
            "name": file.name, "path": file.path, "existed": existed, "next": file.disable}),
        )?;
    } else if !existed {
        outln!("nothing to remove: {} does not exist", file.path.display())?;
    } else {
        let verb = if args.dry_run {
            "would remove"
        } else {
            "removed"
        };
        outln!(
            "{verb} {}; if it was running, also run:",
            file.path.display()
        )?;
        for step in &file.disable {
            outln!("  {step}")?;
        }
    }
    Ok(OK)
}
