//! `lane.doctor`: for each CLI, whether it is on the daemon's PATH (or at its
//! configured path), what version it reports, and whether that is the
//! version the project tests against. A missing CLI is reported, never
//! installed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{CliCheck, ControlError, ErrorCode, LaneDoctorReply};

use crate::config::HostConfig;

/// The versions the project's tests install (tests/clis/package.json).
pub const TESTED_VERSIONS: &[(CliKind, &str, &str)] = &[
    (CliKind::Claude, "claude", "2.1.332"),
    (CliKind::Codex, "codex", "0.171.0"),
    (CliKind::Qwen, "qwen", "0.24.4"),
    (CliKind::Gemini, "gemini", "0.61.0"),
    (CliKind::Pi, "pi", "0.73.1"),
    (CliKind::Opencode, "opencode", "1.18.33"),
    (CliKind::Grok, "grok", "0.0.34"),
];

/// What `--version` prints for the tested version: the package version,
/// except for grok 0.0.34, which prints a hard-coded `1.0.1`.
pub(super) fn printed_version(cli: CliKind, tested: &str) -> &str {
    match cli {
        CliKind::Grok => "1.0.1",
        _ => tested,
    }
}

/// How to see that a CLI's headless mode is there: arguments for its help,
/// and the flag the connector relies on that the help must list.
const HEADLESS: &[(CliKind, &[&str], &str)] = &[
    (CliKind::Claude, &["--help"], "--output-format"),
    (CliKind::Codex, &["exec", "--help"], "--json"),
    (CliKind::Qwen, &["--help"], "--output-format"),
    (CliKind::Gemini, &["--help"], "--output-format"),
    (CliKind::Pi, &["--help"], "--mode"),
    (CliKind::Opencode, &["run", "--help"], "--format"),
    (CliKind::Grok, &["--help"], "--prompt"),
];

async fn output_of(path: &Path, args: &[&str]) -> Option<String> {
    let run = tokio::process::Command::new(path)
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .ok()?
        .ok()?;
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

async fn headless(path: &Path, cli: CliKind) -> Option<bool> {
    let (_, args, needle) = HEADLESS.iter().find(|(k, _, _)| *k == cli)?;
    Some(
        output_of(path, args)
            .await
            .is_some_and(|help| help.contains(needle)),
    )
}

/// How a lane gives the CLI its prompt: `stdin` (a 0600 file fed to its
/// stdin, never in the process list) or `argument` (the CLI reads a prompt
/// from nowhere else, so it shows in the process list).
fn prompt_via(cli: CliKind) -> Option<String> {
    match cli {
        CliKind::Grok => Some("argument".into()),
        _ => Some("stdin".into()),
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

/// Why a lane of `cli` (with `args`, in `cwd`) cannot start here, if it
/// cannot: no command for exec, or a program that is not installed. Checked
/// before the lane exists, so a refused start leaves no lane behind.
pub fn unusable(
    config: &HostConfig,
    host: &str,
    cli: CliKind,
    args: &[String],
    cwd: &Path,
) -> Option<ControlError> {
    let program = if cli == CliKind::Exec {
        let Some(first) = args.first() else {
            return Some(
                ControlError::new(
                    ErrorCode::BadRequest,
                    "--cli exec needs the command after --",
                )
                .with_hint("for example: flotilla lane run --cli exec -- make test"),
            );
        };
        first.clone()
    } else {
        let default = super::cli::connector(cli).map_or(cli.as_str(), |c| c.program());
        config.cli_program(cli, default)
    };
    let found = if program.contains('/') {
        is_executable(&cwd.join(&program))
    } else {
        find_program(&program).is_some()
    };
    if found {
        return None;
    }
    let error = ControlError::new(
        ErrorCode::NotFound,
        format!(
            "{program} is not installed on {host} (not on the daemon's PATH, or not executable)"
        ),
    );
    Some(if cli == CliKind::Exec {
        error.with_hint(
            "give the command's full path after --, or install it where the daemon's PATH finds it",
        )
    } else {
        error.with_hint(format!(
            "install {cli}, or set its path in config.toml under [clis] ({cli} = \"/path/to/{program}\"); `flotilla lane doctor` checks every CLI"
        ))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

pub(super) async fn version_of(path: &Path) -> Option<String> {
    let text = output_of(path, &["--version"]).await?;
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
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
            headless: None,
            status: "missing".into(),
            hint: Some(format!(
                "install {program}, or set its path under [clis] in config.toml"
            )),
            prompt_via: prompt_via(cli),
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
    let headless = headless(&path, cli).await;
    let standing = super::version_floor::standing(cli, version.as_deref());
    let too_old = matches!(standing, super::version_floor::Standing::TooOld { .. });
    let ok = connector && supported.unwrap_or(true) && headless.unwrap_or(true);
    let hint = if let super::version_floor::Standing::TooOld { found, floor } = &standing {
        Some(format!(
            "{found} is older than the oldest supported version ({floor}): lanes refuse it; upgrade, or start a lane with --force to try it anyway"
        ))
    } else if let super::version_floor::Standing::Newer { tested, .. } = &standing {
        Some(format!(
            "newer than the newest version tested ({tested}); it may still work"
        ))
    } else if !connector {
        Some("this build has no connector for it yet".to_owned())
    } else if headless == Some(false) {
        Some(
            "its help does not list the headless flags flotilla uses; install the tested version"
                .to_owned(),
        )
    } else if supported == Some(false) {
        Some("this version is not the tested one; it may still work".to_owned())
    } else {
        None
    };
    CliCheck {
        cli,
        path: Some(path.display().to_string()),
        version,
        tested_version: tested.map(|t| t.2.to_owned()),
        supported,
        connector,
        headless,
        status: match (too_old, ok) {
            (true, _) => "too_old",
            (false, true) => "ok",
            (false, false) => "warn",
        }
        .into(),
        hint,
        prompt_via: prompt_via(cli),
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
