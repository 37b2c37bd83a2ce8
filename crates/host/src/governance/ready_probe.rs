//! The probes of `ready`: each tool's version (`TOOL --version`, stdin
//! closed, a short deadline, run outside the repository), git's, and the
//! agent CLIs as `lane.doctor` sees them, with whether they are logged in
//! where a CLI can say so without showing credentials.
//!
//! Owns running the probes. Must not install anything: every probe runs
//! with the switches that stop rustup, corepack and go from fetching a
//! toolchain, and never in the repository (whose toolchain files could ask
//! for one). A file of the repository is seen to be there, never run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use flotilla_actors::governance::ReadyCheck;
use flotilla_actors::governance::readiness::{
    Probe, ToolState, login_probe, probe_of, tools_to_probe, version_line,
};
use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{CliCheck, LaneDoctorReply};

use crate::lanes::doctor::find_program;

/// How long one probe may run.
const DEADLINE: Duration = Duration::from_secs(10);

/// Set on every probe: no tool manager fetches anything.
const NO_INSTALL: &[(&str, &str)] = &[
    ("RUSTUP_AUTO_INSTALL", "0"),
    ("COREPACK_ENABLE_NETWORK", "0"),
    ("COREPACK_ENABLE_DOWNLOAD_PROMPT", "0"),
    ("GOTOOLCHAIN", "local"),
    ("NPM_CONFIG_UPDATE_NOTIFIER", "false"),
];

/// One check per profile command, its tool probed (and, when missing, the
/// tools that might stand in).
pub(super) async fn tool_checks(
    top: &Path,
    profile: &flotilla_actors::governance::Profile,
) -> Vec<ReadyCheck> {
    let mut found = BTreeMap::new();
    loop {
        let next = tools_to_probe(profile, &found);
        if next.is_empty() {
            break;
        }
        for tool in next {
            let state = probe(top, &tool).await;
            found.insert(tool, state);
        }
    }
    flotilla_actors::governance::readiness::tool_checks(profile, &found)
}

/// `git --version`.
pub(super) async fn git_check() -> ReadyCheck {
    let (ok, detail) = match version(&["git".into(), "--version".into()]).await {
        ToolState::Usable(v) => (true, v),
        ToolState::Unusable(why) => (false, why),
    };
    ReadyCheck {
        name: "git".into(),
        ok,
        required: true,
        why: (!ok).then(|| "install git where the daemon's PATH finds it".to_owned()),
        detail,
        routed_to: None,
    }
}

async fn probe(top: &Path, tool: &str) -> ToolState {
    match probe_of(tool) {
        Probe::Version(words) => version(&words).await,
        Probe::OnPath(name) => match find_program(&name) {
            Some(path) => ToolState::Usable(path.display().to_string()),
            None => ToolState::Unusable(format!("{name}: not found on the daemon's PATH")),
        },
        Probe::InRepo(path) => {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(top.join(&path));
            if meta.is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0) {
                ToolState::Usable(format!("{path}: in the repository (not run)"))
            } else {
                ToolState::Unusable(format!("{path}: not an executable file in the repository"))
            }
        }
    }
}

/// Runs `words` (the program found on PATH) and reads its version line.
async fn version(words: &[String]) -> ToolState {
    let Some((program, args)) = words.split_first() else {
        return ToolState::Unusable("no command".into());
    };
    let Some(path) = find_program(program) else {
        return ToolState::Unusable(format!("{program}: not found on the daemon's PATH"));
    };
    let shown = words.join(" ");
    let mut command = tokio::process::Command::new(path);
    command
        .args(args)
        .current_dir("/")
        .envs(NO_INSTALL.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let out = match tokio::time::timeout(DEADLINE, command.output()).await {
        Err(_) => return ToolState::Unusable(format!("`{shown}` did not answer within 10 s")),
        Ok(Err(e)) => return ToolState::Unusable(format!("cannot run {program}: {e}")),
        Ok(Ok(out)) => out,
    };
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if out.status.success() {
        let line = version_line(&stdout, &stderr);
        ToolState::Usable(
            line.unwrap_or_else(|| format!("{program}: present (no version printed)")),
        )
    } else {
        let said = version_line(&stderr, &stdout).unwrap_or_else(|| out.status.to_string());
        ToolState::Unusable(format!("`{shown}` failed: {said}"))
    }
}

/// The agent CLIs that can run a lane here (`lane.doctor`'s `ok` or `warn`).
pub(super) fn usable_clis(doctor: &LaneDoctorReply) -> Vec<CliKind> {
    (doctor.clis.iter())
        .filter(|c| c.cli != CliKind::Exec && usable(c))
        .map(|c| c.cli)
        .collect()
}

fn usable(c: &CliCheck) -> bool {
    c.status == "ok" || c.status == "warn"
}

/// One check saying whether any agent CLI is usable (required), then one
/// per CLI (not required: a missing one is routed around).
pub(super) async fn cli_checks(doctor: &LaneDoctorReply) -> Vec<ReadyCheck> {
    let agents: Vec<&CliCheck> = doctor
        .clis
        .iter()
        .filter(|c| c.cli != CliKind::Exec)
        .collect();
    let names = |list: Vec<&CliCheck>| {
        list.iter()
            .map(|c| c.cli.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ok_ones: Vec<&CliCheck> = agents.iter().copied().filter(|c| usable(c)).collect();
    let any = !ok_ones.is_empty();
    let mut checks = vec![ReadyCheck {
        name: "agent CLIs".into(),
        ok: any,
        required: true,
        detail: if any {
            format!("usable: {}", names(ok_ones))
        } else {
            "none is usable".into()
        },
        routed_to: None,
        why: (!any).then(|| {
            format!(
                "install one of {} (`flotilla lane doctor` shows each)",
                names(agents.clone())
            )
        }),
    }];
    for c in agents {
        checks.push(cli_check(c).await);
    }
    checks
}

async fn cli_check(c: &CliCheck) -> ReadyCheck {
    let ok = usable(c);
    let version = c.version.clone().unwrap_or_else(|| "no version".into());
    let detail = match c.status.as_str() {
        "missing" => "not installed".to_owned(),
        "too_old" => format!("{version}: older than the oldest supported"),
        _ => format!("{version}; logged in: {}", logged_in(c).await),
    };
    ReadyCheck {
        name: format!("cli {}", c.cli),
        ok,
        required: false,
        detail,
        routed_to: None,
        why: c.hint.clone(),
    }
}

/// `yes`, `no`, or `not checkable` (the CLI has no way to say without
/// showing its credentials). Only the exit code of its status command is
/// read; what it prints is not.
async fn logged_in(c: &CliCheck) -> &'static str {
    let (Some(args), Some(path)) = (login_probe(c.cli), c.path.as_deref()) else {
        return "not checkable";
    };
    let status = tokio::process::Command::new(path)
        .args(args)
        .current_dir("/")
        .envs(NO_INSTALL.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .status();
    match tokio::time::timeout(DEADLINE, status).await {
        Ok(Ok(s)) if s.success() => "yes",
        Ok(Ok(_)) => "no",
        _ => "not checkable",
    }
}
