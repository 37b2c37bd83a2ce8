//! Interactive sessions for tests and benches: Claude Code's own state for
//! a run with no questions, and a tmux server of the caller's own (a real
//! terminal), killed when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::vendor::{CliKind, VendorEnv};

/// Claude Code's own state for an interactive run with no questions:
/// onboarding done, the folder trusted, the API key approved, bypass mode
/// accepted.
pub fn claude_state(env: &VendorEnv) {
    let key = "sk-ant-fake";
    let workdir = env.workdir().display().to_string();
    let state = json!({
        "hasCompletedOnboarding": true,
        "bypassPermissionsModeAccepted": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [&key[key.len().saturating_sub(20)..]], "rejected": []},
        "projects": {workdir: {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
    });
    std::fs::write(env.home().join(".claude.json"), state.to_string()).expect("claude state");
}

/// A tmux server of the caller's own, on a socket in `dir`.
#[derive(Debug)]
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// Starts `command` in a detached session in `cwd`. The pane stays when
    /// the command ends, so a capture after a crash still shows its last
    /// words (and tmux's "Pane is dead" line with the exit status).
    pub fn start(dir: &Path, cwd: &Path, command: &[String]) -> Self {
        let tmux = Self {
            socket: dir.join("tmux.sock"),
        };
        let config = dir.join("tmux.conf");
        std::fs::write(&config, "set -g remain-on-exit on\n").expect("tmux.conf");
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&tmux.socket)
            .arg("-f")
            .arg(&config)
            .args([
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "160",
                "-y",
                "48",
                "-c",
            ])
            .arg(cwd)
            .args(command)
            .status()
            .expect("tmux");
        assert!(status.success(), "tmux new-session");
        tmux
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .status();
    }
}

impl Tmux {
    /// What the terminal shows now.
    pub fn capture(&self) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `keys` (tmux key names, such as `Enter`) into the session.
    pub fn send_keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["send-keys", "-t", "t"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success(), "tmux send-keys");
    }
}

/// The command (for [`Tmux::start`]) that runs `flotilla peer claude -n NAME
/// -g GROUP` on `home`'s daemon with `env`'s CLI environment and a real
/// terminal type.
pub fn claude_session_command(
    env: &VendorEnv,
    home: &Path,
    name: &str,
    group: &str,
) -> Vec<String> {
    let model = crate::vendor::default_model(CliKind::Claude);
    session_command(env, home, CliKind::Claude, name, group, &["--model", model])
}

/// The command (for [`Tmux::start`]) that runs `flotilla peer CLI -n NAME
/// -g GROUP -- ARGS` on `home`'s daemon with `env`'s CLI environment and a
/// real terminal type.
pub fn session_command(
    env: &VendorEnv,
    home: &Path,
    cli: CliKind,
    name: &str,
    group: &str,
    args: &[&str],
) -> Vec<String> {
    let mut command = vec!["env".to_owned()];
    command.extend(env.env().into_iter().map(|(k, v)| format!("{k}={v}")));
    command.push("TERM=xterm-256color".into());
    command.extend([
        crate::flotilla_bin().display().to_string(),
        "--home".into(),
        home.display().to_string(),
        "peer".into(),
        cli.as_str().into(),
        "-n".into(),
        name.into(),
        "-g".into(),
        group.into(),
        "--".into(),
    ]);
    command.extend(args.iter().map(|a| (*a).to_owned()));
    command
}

/// A tmux server that tmux itself places, for a command under test that
/// runs `tmux` on its own: every command given [`Self::apply`] finds its
/// sockets under this directory (`TMUX_TMPDIR`, never the user's server,
/// `TMUX` unset), and the server is killed when this is dropped, also
/// when a test fails.
#[derive(Debug)]
pub struct PrivateTmux {
    dir: PathBuf,
}

impl PrivateTmux {
    /// The server's directory: `dir/tmux` (kept short: a socket's path
    /// is limited to about 100 bytes).
    pub fn new(dir: &Path) -> Self {
        let dir = dir.join("tmux");
        std::fs::create_dir_all(&dir).expect("the tmux directory");
        Self { dir }
    }

    /// Points `command`'s tmux at this server.
    pub fn apply<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        command.env("TMUX_TMPDIR", &self.dir).env_remove("TMUX")
    }

    /// The directory the sockets are under.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `tmux ARGS` on this server; its stdout (empty when it fails).
    pub fn run(&self, args: &[&str]) -> String {
        let out = self
            .apply(&mut Command::new("tmux"))
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for PrivateTmux {
    fn drop(&mut self) {
        let _ = self
            .apply(&mut Command::new("tmux"))
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
    }
}
