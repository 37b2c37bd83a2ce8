//! The real vendor CLIs, run directly (not through Flotilla) against the
//! scripted model server: each answers with the scripted text, and each whose
//! file-writing tool works headless writes the scripted file. These document
//! that the harness works for every CLI; Flotilla's lane tests build on it.
//!
//! A CLI that is not installed is skipped with a notice, except in CI
//! (`CI` set), where it fails (run `tests/clis/install.sh`).

use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, RunOutput, VendorEnv, run_bounded};

/// Upper bound on one headless turn (the slowest CLI takes ~15 s here).
const TURN: Duration = Duration::from_secs(150);

/// Runs `cli` on `prompt` in a fresh environment; `None` if not installed.
fn run(server: &ModelServer, env: &VendorEnv, cli: CliKind, prompt: &str) -> Option<RunOutput> {
    env.bin(cli)?;
    let out = run_bounded(env.direct_command(cli, prompt, None), TURN);
    let paths: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    eprintln!("{cli}: {:.1?}, requests {paths:?}", out.elapsed);
    Some(out)
}

fn answers_text(cli: CliKind) {
    let text = format!("hello from the model server to {cli}");
    let server = ModelServer::start(Script::new([Reply::text(&text)]));
    let env = VendorEnv::new(&server);
    let Some(out) = run(&server, &env, cli, "say hello") else {
        return;
    };
    assert!(out.success(), "{cli}: {}", out.describe());
    assert!(out.stdout.contains(&text), "{cli}: {}", out.describe());
    let turns = server.model_requests();
    assert_eq!(turns.len(), 1, "{cli} made one model request: {turns:#?}");
}

fn writes_a_file(cli: CliKind) {
    let server = ModelServer::start(Script::default());
    let env = VendorEnv::new(&server);
    let target = env.workdir().join("out.txt");
    server.push(Reply::WriteFile {
        path: target.clone(),
        content: "written by the model server\n".into(),
    });
    server.push(Reply::text("done writing"));
    let Some(out) = run(&server, &env, cli, "write out.txt") else {
        return;
    };
    assert!(out.success(), "{cli}: {}", out.describe());
    let written = std::fs::read_to_string(&target).unwrap_or_else(|e| {
        panic!(
            "{cli} wrote no {}: {e}\n{}",
            target.display(),
            out.describe()
        )
    });
    assert_eq!(written.trim_end(), "written by the model server");
    assert!(
        out.stdout.contains("done writing"),
        "{cli}: {}",
        out.describe()
    );
    let turns = server.model_requests();
    assert_eq!(
        turns.len(),
        2,
        "{cli}: the call, then its result: {turns:#?}"
    );
}

/// One module per CLI, so `model_server::claude` selects one CLI's tests.
macro_rules! direct_tests {
    ($($module:ident: $cli:expr;)*) => {$(
        mod $module {
            #[test]
            fn answers_text() {
                super::answers_text($cli);
            }

            #[test]
            fn writes_a_file() {
                super::writes_a_file($cli);
            }
        }
    )*};
}

direct_tests! {
    claude: super::CliKind::Claude;
    codex: super::CliKind::Codex;
    qwen: super::CliKind::Qwen;
    gemini: super::CliKind::Gemini;
    pi: super::CliKind::Pi;
    opencode: super::CliKind::Opencode;
    grok: super::CliKind::Grok;
}

#[test]
fn vendor_env_points_every_cli_at_loopback_only() {
    let server = ModelServer::start(Script::default());
    let env = VendorEnv::new(&server);
    for (key, value) in env.env() {
        if value.contains("://") {
            assert!(value.starts_with(&server.base_url()), "{key}={value}");
        }
    }
    for rel in [
        ".codex/config.toml",
        ".qwen/settings.json",
        ".gemini/settings.json",
        ".pi/agent/models.json",
        ".config/opencode/opencode.json",
    ] {
        let text = std::fs::read_to_string(env.home().join(rel)).expect(rel);
        for url in text.split('"').filter(|s| s.contains("://")) {
            assert!(url.starts_with("http://127.0.0.1:"), "{rel}: {url}");
        }
    }
}
