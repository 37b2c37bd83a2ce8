//! The real vendor CLIs, run directly (not through Flotilla) against the
//! scripted model server: each answers with the scripted text, and each whose
//! file-writing tool works headless writes the scripted file. These document
//! that the harness works for every CLI; Flotilla's lane tests build on it.
//!
//! A CLI that is not installed is skipped with a notice, except in CI
//! (`CI` set), where it fails (run `tests/clis/install.sh`).

use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, Permissions, RunOutput, VendorEnv, run_bounded};

/// Upper bound on one headless turn (the slowest CLI takes ~15 s here).
const TURN: Duration = Duration::from_secs(150);

/// Runs `cli` on `prompt` with workspace permissions; `None` if not
/// installed.
fn run(server: &ModelServer, env: &VendorEnv, cli: CliKind, prompt: &str) -> Option<RunOutput> {
    run_with(server, env, cli, prompt, Permissions::Workspace)
}

fn run_with(
    server: &ModelServer,
    env: &VendorEnv,
    cli: CliKind,
    prompt: &str,
    permissions: Permissions,
) -> Option<RunOutput> {
    env.bin(cli)?;
    let cmd = env.direct_command_with(cli, prompt, None, permissions);
    let out = run_bounded(cmd, TURN);
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

fn runs_a_shell_command(cli: CliKind) {
    let server = ModelServer::start(Script::default());
    let env = VendorEnv::new(&server);
    let target = env.workdir().join("sh.txt");
    server.push(Reply::Shell {
        command: format!("echo shell-ran > {}", target.display()),
    });
    server.push(Reply::text("done running"));
    let Some(out) = run_with(&server, &env, cli, "run it", Permissions::Bypass) else {
        return;
    };
    assert!(out.success(), "{cli}: {}", out.describe());
    let written = std::fs::read_to_string(&target)
        .unwrap_or_else(|e| panic!("{cli} ran no command: {e}\n{}", out.describe()));
    assert_eq!(written.trim_end(), "shell-ran");
    assert!(
        out.stdout.contains("done running"),
        "{cli}: {}",
        out.describe()
    );
}

/// What each CLI does when the server answers every request with an HTTP
/// 400 (Claude Code retries it a few times): its exit code, and the
/// server's message somewhere in its output.
fn reports_an_http_error(cli: CliKind) {
    let message = format!("model-server refuses {cli}");
    let server = ModelServer::start(Script::default().or_else(Reply::HttpError {
        status: 400,
        message: message.clone(),
    }));
    let env = VendorEnv::new(&server);
    let Some(out) = run(&server, &env, cli, "fail please") else {
        return;
    };
    let expected = match cli {
        // These report the error in their output and still exit 0.
        CliKind::Pi | CliKind::Grok => 0,
        // Gemini exits with the HTTP status & 0xFF.
        CliKind::Gemini => 400 & 0xFF,
        _ => 1,
    };
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(expected),
        "{cli}: {}",
        out.describe()
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains(&message), "{cli}: {}", out.describe());
    // Claude Code 2.1.332 tries a 400 three times, then three more with a
    // wider tool list; the others never retry it.
    let tries = if cli == CliKind::Claude { 6 } else { 1 };
    assert_eq!(
        server.model_requests().len(),
        tries,
        "{cli}: how often a 400 is tried"
    );
}

/// A slow answer arrives word by word and whole, and takes its time.
fn streams_slow_text(cli: CliKind) {
    let words = ["slowly", "streamed", "words", "from", "the", "server"];
    let chunk_delay = Duration::from_millis(100);
    let server = ModelServer::start(Script::new([Reply::Slow {
        text: words.join(" "),
        chunk_delay,
    }]));
    let env = VendorEnv::new(&server);
    let Some(out) = run(&server, &env, cli, "take your time") else {
        return;
    };
    assert!(out.success(), "{cli}: {}", out.describe());
    for word in words {
        assert!(
            out.stdout.contains(word),
            "{cli} lost {word:?}: {}",
            out.describe()
        );
    }
    assert!(
        out.elapsed >= chunk_delay * 6,
        "{cli} took {:?}",
        out.elapsed
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

            #[test]
            fn runs_a_shell_command() {
                super::runs_a_shell_command($cli);
            }

            #[test]
            fn streams_slow_text() {
                super::streams_slow_text($cli);
            }

            #[test]
            fn reports_an_http_error() {
                super::reports_an_http_error($cli);
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
