//! Throwaway environments for the real vendor coding-agent CLIs (installed
//! by `tests/clis/install.sh`), each talking only to a [`ModelServer`].
//!
//! A [`VendorEnv`] owns one directory with a home (and XDG dirs inside it), a
//! TMPDIR and a workdir, and writes every CLI's config files there. Its
//! [`env`](VendorEnv::env) is the whole environment a CLI needs (to give to a
//! daemon, or to a direct run after `env_clear`): the server's address, fake
//! keys, and each CLI's own switches against telemetry, update checks,
//! auto-update, retries, trust prompts and onboarding. Dropping it removes
//! the directory.

mod files;
mod run;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use flotilla_actors::lane::{CliKind, Permissions};
pub use run::{RunOutput, run_bounded};

use crate::model_server::ModelServer;

/// The vendor CLIs, in documentation order (every [`CliKind`] but `exec`).
pub const VENDOR_CLIS: [CliKind; 7] = [
    CliKind::Claude,
    CliKind::Codex,
    CliKind::Qwen,
    CliKind::Gemini,
    CliKind::Pi,
    CliKind::Opencode,
    CliKind::Grok,
];

/// The env var naming the CLIs' bin directory (relative to the workspace
/// root, or absolute); default `tests/clis/node_modules/.bin`.
pub const CLIS_DIR_VAR: &str = "FLOTILLA_TEST_CLIS";

/// The directory holding the installed CLIs' binaries.
pub fn clis_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    match std::env::var_os(CLIS_DIR_VAR) {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("tests/clis/node_modules/.bin"),
    }
}

/// Whether this run is CI's (`CI` set and not `false` or `0`).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The installed binary of `cli`. If it is missing: in CI a panic (a
/// missing CLI fails there); elsewhere `None` and a notice on stderr, so the
/// test can skip.
pub fn cli_bin(cli: CliKind) -> Option<PathBuf> {
    let path = clis_dir().join(cli.as_str());
    if path.is_file() {
        return Some(path);
    }
    let msg = format!(
        "{cli} is not installed at {}: run tests/clis/install.sh",
        path.display()
    );
    assert!(!in_ci(), "{msg}");
    eprintln!("SKIPPED: {msg}");
    None
}

/// The model each CLI is configured for (and given by default).
pub fn default_model(cli: CliKind) -> &'static str {
    match cli {
        CliKind::Claude => "claude-opus-4-8",
        // A model Codex has metadata for; others work but warn.
        CliKind::Codex => "gpt-5.5",
        CliKind::Gemini => "gemini-2.5-flash",
        CliKind::Grok => "grok-code-fast-1",
        CliKind::Qwen | CliKind::Pi | CliKind::Opencode | CliKind::Exec => "fake-model",
    }
}

/// One test's environment for the vendor CLIs.
#[derive(Debug)]
pub struct VendorEnv {
    dir: tempfile::TempDir,
    /// The model server's base URL, without `/v1`.
    base_url: String,
}

/// Interactive Codex starts an app-server daemon of its own in
/// `$CODEX_HOME`, which outlives the CLI: stopped with the environment.
impl Drop for VendorEnv {
    fn drop(&mut self) {
        let dir = self.home().join(".codex/app-server-daemon");
        for file in ["daemon.pid", "daemon-updater.pid"] {
            let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
                continue;
            };
            let pid = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["pid"].as_u64());
            // The daemon may be gone and its pid taken by another test's
            // process: only a process that is still Codex is stopped.
            let still_codex = |pid: u64| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains("codex"))
            };
            if let Some(pid) = pid.filter(|pid| still_codex(*pid)) {
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        }
    }
}

impl VendorEnv {
    /// A fresh directory whose CLIs all talk to `server`.
    pub fn new(server: &ModelServer) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fl-vendor-")
            .tempdir()
            .expect("tempdir");
        let env = Self {
            dir,
            base_url: server.base_url(),
        };
        for sub in [
            "home/.config",
            "home/.local/share",
            "home/.local/state",
            "home/.cache",
            "tmp",
            "work",
        ] {
            std::fs::create_dir_all(env.path().join(sub)).expect("create dir");
        }
        files::write_all(&env.home(), &env.base_url);
        env
    }

    /// The whole directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// HOME of every CLI.
    pub fn home(&self) -> PathBuf {
        self.path().join("home")
    }

    /// The working directory to run CLIs in (empty, not a git repository).
    pub fn workdir(&self) -> PathBuf {
        self.path().join("work")
    }

    /// The installed binary of `cli` (see [`cli_bin`]).
    pub fn bin(&self, cli: CliKind) -> Option<PathBuf> {
        cli_bin(cli)
    }

    /// The complete environment for the CLIs (use after `env_clear`).
    pub fn env(&self) -> Vec<(String, String)> {
        let home = self.home();
        let at = |rel: &str| home.join(rel).display().to_string();
        let base = &self.base_url;
        let path = match std::env::var("PATH") {
            Ok(p) if !p.is_empty() => format!("{}:{p}", clis_dir().display()),
            _ => format!("{}:/usr/local/bin:/usr/bin:/bin", clis_dir().display()),
        };
        let pairs: Vec<(&str, String)> = vec![
            ("HOME", home.display().to_string()),
            ("TMPDIR", self.path().join("tmp").display().to_string()),
            ("XDG_CONFIG_HOME", at(".config")),
            ("XDG_DATA_HOME", at(".local/share")),
            ("XDG_STATE_HOME", at(".local/state")),
            ("XDG_CACHE_HOME", at(".cache")),
            ("PATH", path),
            ("TERM", "dumb".into()),
            ("LANG", "C.UTF-8".into()),
            ("NO_COLOR", "1".into()),
            // Claude Code: endpoint, key, no nonessential traffic, telemetry,
            // auto-updater, error reports or retries; root may bypass.
            ("ANTHROPIC_BASE_URL", base.clone()),
            ("ANTHROPIC_API_KEY", "sk-ant-fake".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
            ("IS_SANDBOX", "1".into()),
            // Codex: config in CODEX_HOME, key in the provider's env_key.
            ("CODEX_HOME", at(".codex")),
            (files::CODEX_KEY_VAR, "sk-fake".into()),
            // Qwen Code: OpenAI-compatible endpoint (settings pick openai auth).
            ("OPENAI_API_KEY", "sk-fake".into()),
            ("OPENAI_BASE_URL", format!("{base}/v1")),
            ("OPENAI_MODEL", default_model(CliKind::Qwen).into()),
            // Gemini CLI: endpoint, key, and no self-relaunch (so the pid
            // spawned is the one working and signals reach it).
            ("GEMINI_API_KEY", "fake-key".into()),
            ("GOOGLE_GEMINI_BASE_URL", base.clone()),
            ("GEMINI_CLI_NO_RELAUNCH", "true".into()),
            // pi: offline start, no version check, no telemetry.
            ("PI_CODING_AGENT_DIR", at(".pi/agent")),
            ("PI_OFFLINE", "1".into()),
            ("PI_SKIP_VERSION_CHECK", "1".into()),
            ("PI_TELEMETRY", "0".into()),
            // opencode: no models fetch, auto-update, LSP downloads, default
            // plugins or sharing.
            ("OPENCODE_DISABLE_MODELS_FETCH", "true".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "true".into()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "true".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "true".into()),
            ("OPENCODE_DISABLE_SHARE", "true".into()),
            // Grok CLI: endpoint, key, model.
            ("GROK_API_KEY", "xai-fake".into()),
            ("GROK_BASE_URL", format!("{base}/v1")),
            ("GROK_MODEL", default_model(CliKind::Grok).into()),
        ];
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }

    /// `cli` run headless and directly (not through Flotilla) on `prompt` in
    /// the workdir, with workspace permissions (its write tool works): the
    /// baseline for benchmarks and a sanity check. Panics if `cli` is not
    /// installed; check [`VendorEnv::bin`] first.
    pub fn direct_command(&self, cli: CliKind, prompt: &str, model: Option<&str>) -> Command {
        self.direct_command_with(cli, prompt, model, Permissions::Workspace)
    }

    /// [`VendorEnv::direct_command`] with the given permissions.
    pub fn direct_command_with(
        &self,
        cli: CliKind,
        prompt: &str,
        model: Option<&str>,
        permissions: Permissions,
    ) -> Command {
        let bin = self
            .bin(cli)
            .unwrap_or_else(|| panic!("{cli} is not installed"));
        let model = model.unwrap_or(default_model(cli));
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .envs(self.env())
            .current_dir(self.workdir())
            .args(headless_args(cli, prompt, model, permissions));
        if cli == CliKind::Opencode {
            cmd.env("OPENCODE_PERMISSION", opencode_permission(permissions));
        }
        cmd
    }
}

/// The headless command line of `cli` (after the binary).
pub fn headless_args(
    cli: CliKind,
    prompt: &str,
    model: &str,
    permissions: Permissions,
) -> Vec<String> {
    let level = |default: &str, workspace: &str, bypass: &str| match permissions {
        Permissions::Default => default.to_owned(),
        Permissions::Workspace => workspace.to_owned(),
        Permissions::Bypass => bypass.to_owned(),
    };
    let args: Vec<String> = match cli {
        CliKind::Claude => vec![
            "-p".into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--model".into(),
            model.into(),
            "--permission-mode".into(),
            level("default", "acceptEdits", "bypassPermissions"),
            prompt.into(),
        ],
        CliKind::Codex => {
            let mut a: Vec<String> = ["exec", "--json", "--skip-git-repo-check", "-m", model]
                .map(String::from)
                .to_vec();
            match permissions {
                Permissions::Default => a.extend(["-s".into(), "read-only".into()]),
                Permissions::Workspace => a.extend(["-s".into(), "workspace-write".into()]),
                Permissions::Bypass => {
                    a.push("--dangerously-bypass-approvals-and-sandbox".into());
                }
            }
            a.push(prompt.into());
            a
        }
        CliKind::Qwen => vec![
            "-o".into(),
            "stream-json".into(),
            "--model".into(),
            model.into(),
            "--approval-mode".into(),
            level("default", "auto-edit", "yolo"),
            prompt.into(),
        ],
        CliKind::Gemini => vec![
            "-m".into(),
            model.into(),
            "-o".into(),
            "stream-json".into(),
            "--approval-mode".into(),
            level("default", "auto_edit", "yolo"),
            "-p".into(),
            prompt.into(),
        ],
        CliKind::Pi => {
            let mut a: Vec<String> = ["-p", "--mode", "json", "--provider", pi_provider(model)]
                .map(String::from)
                .to_vec();
            a.extend(["--model".into(), model.into()]);
            // pi has no approvals: restrict its tools instead.
            match permissions {
                Permissions::Default => a.extend(["--tools".into(), "read,grep,find,ls".into()]),
                Permissions::Workspace => {
                    a.extend(["--tools".into(), "read,edit,write,grep,find,ls".into()]);
                }
                Permissions::Bypass => {}
            }
            a.push(prompt.into());
            a
        }
        CliKind::Opencode => {
            let model = if model.contains('/') {
                model.to_owned()
            } else {
                format!("fake/{model}")
            };
            [
                "run", "--format", "json", "--title", "flotilla", "-m", &model, prompt,
            ]
            .map(String::from)
            .to_vec()
        }
        // Grok has no permission modes: headless approves everything.
        CliKind::Grok => ["-p", prompt, "-m", model].map(String::from).to_vec(),
        CliKind::Exec => panic!("exec is not a vendor CLI"),
    };
    args
}

/// pi's provider for `model`: `fakeant` (Anthropic Messages) for Claude
/// models, else `fake` (Chat Completions).
fn pi_provider(model: &str) -> &'static str {
    if model.starts_with("claude") {
        "fakeant"
    } else {
        "fake"
    }
}

/// opencode's `permission` config for `permissions` (`ask` is refused in
/// `run`).
fn opencode_permission(permissions: Permissions) -> &'static str {
    match permissions {
        Permissions::Default => r#"{"edit":"ask","bash":"ask"}"#,
        Permissions::Workspace => r#"{"edit":"allow","bash":"ask"}"#,
        Permissions::Bypass => r#"{"edit":"allow","bash":"allow"}"#,
    }
}
