//! `lane.doctor`: for each CLI, whether it is on the daemon's PATH (or at its
//! configured path), what version it reports, and whether that is the
//! version the project tests against. A missing CLI is reported, never
//! installed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{CliCheck, LaneDoctorReply};

use crate::config::HostConfig;

/// The versions the project's tests install (tests/clis/package.json).
pub const TESTED_VERSIONS: &[(CliKind, &str, &str)] = &[
    (CliKind::Claude, "claude", "2.1.197"),
    (CliKind::Codex, "codex", "0.171.0"),
    (CliKind::Qwen, "qwen", "0.15.10"),
    (CliKind::Gemini, "gemini", "0.61.0"),
    (CliKind::Pi, "pi", "0.73.1"),
    (CliKind::Opencode, "opencode", "1.18.33"),
    (CliKind::Grok, "grok", "0.0.34"),
];

/// What `--version` prints for the tested version: the package version,
/// except for grok 0.0.34, which prints a hard-coded `1.0.1`.
fn printed_version(cli: CliKind, tested: &str) -> &str {
    match cli {
        CliKind::Grok => "1.0.1",
        _ => tested,
    }
}

/// Finds a program on PATH (or takes a path as is).
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

async fn version_of(path: &Path) -> Option<String> {
    let run = tokio::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let text = if text.is_empty() {
        String::from_utf8_lossy(&out.stderr).trim().to_owned()
    } else {
        text
    };
    text.lines().next().map(str::to_owned)
}

async fn check(config: &HostConfig, cli: CliKind) -> CliCheck {
    let tested = TESTED_VERSIONS.iter().find(|(k, _, _)| *k == cli);
    let program = config.cli_program(cli, tested.map_or("sh", |t| t.1));
    let connector = super::cli::connector(cli).is_some();
    let Some(path) = find_program(&program) else {
        return CliCheck {
            cli,
            path: None,
            version: None,
            tested_version: tested.map(|t| t.2.to_owned()),
            supported: None,
            connector,
            status: "missing".into(),
            hint: Some(format!(
                "install {program}, or set its path under [clis] in config.toml"
            )),
        };
    };
    let version = if cli == CliKind::Exec {
        None
    } else {
        version_of(&path).await
    };
    let supported = tested.map(|t| {
        version
            .as_deref()
            .is_some_and(|v| v.contains(printed_version(cli, t.2)))
    });
    let ok = connector && supported.unwrap_or(true);
    CliCheck {
        cli,
        path: Some(path.display().to_string()),
        version,
        tested_version: tested.map(|t| t.2.to_owned()),
        supported,
        connector,
        status: if ok { "ok" } else { "warn" }.into(),
        hint: (!ok).then(|| {
            if connector {
                "this version is not the tested one; it may still work".into()
            } else {
                "this build has no connector for it yet".into()
            }
        }),
    }
}

/// Checks one CLI or all.
pub async fn run(config: &HostConfig, only: Option<CliKind>) -> LaneDoctorReply {
    let mut clis = Vec::new();
    for cli in CliKind::ALL
        .into_iter()
        .filter(|c| only.is_none_or(|o| o == *c))
    {
        clis.push(check(config, cli).await);
    }
    LaneDoctorReply {
        schema: "flotilla.lane-doctor.v1".into(),
        clis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grok_prints_a_version_of_its_own() {
        assert_eq!(printed_version(CliKind::Grok, "0.0.34"), "1.0.1");
        assert_eq!(printed_version(CliKind::Codex, "0.171.0"), "0.171.0");
    }
}
