//! Lanes of the seven real vendor CLIs, through the real daemon, against the
//! scripted model server: a text answer, the CLI's own write tool, resume of
//! the same native session, interrupt mid-turn, a model error, and a
//! deadline. A CLI that is not installed is skipped with a notice, except in
//! CI, where it fails (`tests/clis/install.sh` installs them).

use std::path::Path;
use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

/// A daemon whose lanes run the CLI against `server`; `None` if the CLI is
/// not installed (outside CI).
struct Rig {
    server: ModelServer,
    env: VendorEnv,
    home: TestHome,
    cli: CliKind,
    model: Option<String>,
}

impl Rig {
    /// A rig whose lanes use `model` instead of the CLI's default.
    fn with_model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }

    fn new(cli: CliKind, script: Script) -> Option<Self> {
        let server = ModelServer::start(script);
        let env = VendorEnv::new(&server);
        env.bin(cli)?;
        let mut home = TestHome::new();
        home.env.extend(env.env());
        home.spawn_daemon("h");
        Some(Self {
            server,
            env,
            home,
            cli,
            model: None,
        })
    }

    fn model(&self) -> String {
        if let Some(m) = &self.model {
            return m.clone();
        }
        match self.cli {
            CliKind::Pi | CliKind::Opencode => "fake/fake-model".into(),
            other => default_model(other).into(),
        }
    }

    fn permissions(&self) -> &'static str {
        // grok cannot restrict its tools; it runs with bypass.
        if self.cli == CliKind::Grok {
            "bypass"
        } else {
            "workspace"
        }
    }

    /// `lane ARGS` with the CLI's options; returns (exit code, JSON, stderr).
    fn lane(&self, verb: &str, name: &str, extra: &[&str]) -> (i32, Value, String) {
        let cli = self.cli.to_string();
        let model = self.model();
        let workdir = self.env.workdir().display().to_string();
        let mut args = vec![
            "--json", "lane", verb, "--cli", &cli, "-n", name, "-m", &model, "-C", &workdir,
        ];
        args.extend(["--permissions", self.permissions()]);
        args.extend_from_slice(extra);
        self.run(&args)
    }

    fn run(&self, args: &[&str]) -> (i32, Value, String) {
        let out = self.home.run(args);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            out.status.code().unwrap_or(-1),
            v,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn running_under(dir: &Path) -> bool {
    flotilla_tests::process_running(&dir.display().to_string())
}

fn answers_text(cli: CliKind) {
    let text = format!("LANE-ANSWER from the model to {cli}");
    let Some(rig) = Rig::new(cli, Script::new([Reply::text(&text)])) else {
        return;
    };
    let (code, v, err) = rig.lane("run", "a", &["--prompt", "say hello"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    assert_eq!(v["status"], "completed");
    assert!(
        v["result"].as_str().unwrap_or("").contains(&text),
        "{cli}: {v}"
    );
    if cli != CliKind::Grok {
        assert!(
            v["native_session_id"].is_string(),
            "{cli} reports its session: {v}"
        );
    }
}

fn writes_with_its_own_tool(cli: CliKind) {
    let Some(rig) = Rig::new(cli, Script::default()) else {
        return;
    };
    let target = rig.env.workdir().join("lane-out.txt");
    rig.server.push(Reply::WriteFile {
        path: target.clone(),
        content: "written by a lane\n".into(),
    });
    rig.server.push(Reply::text("done"));
    let (code, v, err) = rig.lane("run", "w", &["--prompt", "write the file"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let written = std::fs::read_to_string(&target).unwrap_or_default();
    assert_eq!(written.trim_end(), "written by a lane", "{cli}: {v}");
}

fn resumes_the_native_session(cli: CliKind) {
    let script = Script::new([Reply::text("first answer"), Reply::text("second answer")]);
    let Some(rig) = Rig::new(cli, script) else {
        return;
    };
    let (code, v, err) = rig.lane(
        "run",
        "r",
        &["--prompt", "FIRST-PROMPT-MARK", "--no-auto-archive"],
    );
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let (code, v, err) = rig.run(&[
        "--json",
        "lane",
        "resume",
        "r",
        "--prompt",
        "and now the second",
        "--wait",
    ]);
    if cli == CliKind::Grok {
        assert_eq!(code, 2, "{v} {err}");
        assert!(err.contains("not supported by this CLI"), "{err}");
        return;
    }
    assert_eq!(code, 0, "{cli}: {v} {err}");
    assert!(
        v["result"].as_str().unwrap_or("").contains("second answer"),
        "{cli}: {v}"
    );
    let last = rig.server.model_requests().pop().expect("a model request");
    assert!(
        last.body.to_string().contains("FIRST-PROMPT-MARK"),
        "{cli}: the second turn carries the first"
    );
}

fn slow() -> Reply {
    let text = (0..400)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    Reply::Slow {
        text,
        chunk_delay: Duration::from_millis(150),
    }
}

fn interrupts_mid_turn(cli: CliKind) {
    let Some(rig) = Rig::new(cli, Script::new([slow()])) else {
        return;
    };
    let (code, v, err) = rig.lane("start", "i", &["--prompt", "talk slowly"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    rig.server
        .wait_for_model_requests(1, Duration::from_secs(120));
    let (code, v, err) = rig.run(&["--json", "lane", "interrupt", "i"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let (code, v, _) = rig.run(&["--json", "lane", "wait", "i"]);
    assert_eq!(
        (code, v["status"].as_str()),
        (130, Some("interrupted")),
        "{cli}: {v}"
    );
    assert_eq!(v["error_class"], "interrupted", "{cli}: {v}");
    let lane_dir = rig.home.path().join("state/lanes/i");
    wait_until("no leftover process", Duration::from_secs(20), || {
        !running_under(&lane_dir)
    });
}

fn reports_a_model_error(cli: CliKind) {
    let error = Reply::HttpError {
        status: 400,
        message: "MODEL-ERROR-MARK: bad request".into(),
    };
    let Some(rig) = Rig::new(cli, Script::new([error.clone()]).or_else(error)) else {
        return;
    };
    let (code, v, err) = rig.lane("run", "e", &["--prompt", "fail please"]);
    assert_eq!(
        (code, v["status"].as_str()),
        (1, Some("failed")),
        "{cli}: {v} {err}"
    );
    assert!(
        v.to_string().contains("MODEL-ERROR-MARK"),
        "{cli}: the error's text is reported: {v}"
    );
    assert_eq!(v["error_class"], "model_error", "{cli}: {v}");
}

/// Issue 9: the failure's class comes from what the CLI printed. A 401 is
/// `auth` everywhere; a 429 is `rate_limited` where the CLI gives up on it
/// (opencode and qwen retry it themselves until the turn's deadline).
fn classifies_its_errors(cli: CliKind) {
    let mut cases = vec![(401, "auth")];
    if !matches!(cli, CliKind::Opencode | CliKind::Qwen) {
        cases.push((429, "rate_limited"));
    }
    for (status, class) in cases {
        let error = Reply::HttpError {
            status,
            message: "CLASS-MARK: scripted".into(),
        };
        let Some(rig) = Rig::new(cli, Script::new([error.clone()]).or_else(error)) else {
            return;
        };
        let (code, v, err) = rig.lane("run", "e", &["--prompt", "fail please", "--timeout", "120"]);
        assert_eq!(code, 1, "{cli} {status}: {v} {err}");
        assert_eq!(v["error_class"], class, "{cli} {status}: {v}");
    }
}

/// Issue 9: a turn's usage is that turn's own, not the session's so far:
/// a resumed turn reports the tokens of its own model requests (the
/// scripted server reports the same counts for every request).
fn reports_each_turns_own_usage(cli: CliKind) {
    use flotilla_tests::model_server::{USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS};
    if cli == CliKind::Grok {
        return; // grok cannot resume a session
    }
    let script = Script::new([Reply::text("first answer"), Reply::text("second answer")]);
    let Some(rig) = Rig::new(cli, script) else {
        return;
    };
    let (code, v, err) = rig.lane("run", "u", &["--prompt", "one", "--no-auto-archive"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let first = rig.server.model_requests().len() as u64;
    let (code, v, err) = rig.run(&["--json", "lane", "resume", "u", "--prompt", "two", "--wait"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let second = rig.server.model_requests().len() as u64 - first;
    assert_eq!(
        v["usage"]["output"],
        USAGE_OUTPUT_TOKENS * second,
        "{cli}: {v}"
    );
    assert_eq!(
        v["usage"]["input"],
        USAGE_INPUT_TOKENS * second,
        "{cli}: {v}"
    );
}

fn meets_its_deadline(cli: CliKind) {
    let Some(rig) = Rig::new(cli, Script::new([slow()])) else {
        return;
    };
    let (code, v, err) = rig.lane("run", "d", &["--prompt", "talk slowly", "--timeout", "3"]);
    assert_eq!(
        (code, v["status"].as_str()),
        (124, Some("timed_out")),
        "{cli}: {v} {err}"
    );
    assert_eq!(v["error_class"], "timed_out", "{cli}: {v}");
}

/// Issue 8, point 2: the lane's CLI calls Flotilla's `send` tool (MCP,
/// registered for this run only; pi and grok, which take no MCP server
/// per run, run `flotilla send` with the lane's identity instead) and the
/// owner's inbox gets the message from the lane itself.
fn messages_its_owner_as_itself(cli: CliKind) {
    let Some(mut rig) = Rig::new(cli, Script::default()) else {
        return;
    };
    if cli == CliKind::Codex {
        // gpt-5.5 finds MCP tools through the hosted tool search, which the
        // scripted model does not play; this model is offered them directly.
        rig = rig.with_model("gpt-4.1");
    }
    rig.home.ok(&["peer", "join", "lead"]);
    let body = format!("MCP-MARK from the {cli} lane");
    let call = match cli {
        CliKind::Pi | CliKind::Grok => Reply::Shell {
            command: format!(
                "{} send --to lead '{body}'",
                flotilla_tests::flotilla_bin().display()
            ),
        },
        _ => Reply::McpTool {
            server: "flotilla".into(),
            name: "send".into(),
            args: serde_json::json!({"to": "lead", "body": body}),
        },
    };
    // Claude Code and Qwen Code hide MCP tools until their tool search has
    // found them, as a model would ask it to; Qwen then calls a hidden tool
    // through its `tool_call`.
    let call = match cli {
        CliKind::Claude => {
            rig.server.push(Reply::Tool {
                name: "ToolSearch".into(),
                args: serde_json::json!({"query": "select:mcp__flotilla__send", "max_results": 1}),
            });
            call
        }
        CliKind::Qwen => {
            rig.server.push(Reply::Tool {
                name: "tool_search".into(),
                args: serde_json::json!({"query": "select:mcp__flotilla__send"}),
            });
            Reply::Tool {
                name: "tool_call".into(),
                args: serde_json::json!({
                    "name": "mcp__flotilla__send",
                    "arguments": {"to": "lead", "body": body},
                }),
            }
        }
        _ => call,
    };
    rig.server.push(call);
    rig.server.push(Reply::text("sent it"));
    let (code, v, err) = if cli == CliKind::Pi {
        // pi offers its shell only outside the workspace mode.
        let model = rig.model();
        let workdir = rig.env.workdir().display().to_string();
        rig.run(&[
            "--json",
            "lane",
            "run",
            "--cli",
            "pi",
            "-n",
            "m",
            "-m",
            &model,
            "-C",
            &workdir,
            "--prompt",
            "tell lead",
            "--as",
            "lead",
            "--permissions",
            "default",
        ])
    } else {
        rig.lane("run", "m", &["--prompt", "tell lead", "--as", "lead"])
    };
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let inbox = rig.home.json(&["inbox", "--as", "lead"]);
    let from_lane: Vec<&Value> = inbox["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["from"] == "h/m" && m["body"] == body.as_str())
        .collect();
    let stderr = std::fs::read_to_string(rig.home.path().join("state/lanes/m/turn-1/stderr"));
    let events = rig.home.ok(&["lane", "events", "m"]);
    assert_eq!(
        from_lane.len(),
        1,
        "{cli}: {inbox} (lane: {v}; its stderr: {stderr:?}; events: {events})"
    );
}

#[test]
fn lane_doctor_sees_every_installed_cli_and_its_headless_mode() {
    let server = ModelServer::start(Script::default());
    let env = VendorEnv::new(&server);
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    let report = home.json(&["lane", "doctor"]);
    assert_eq!(report["schema"], "flotilla.lane-doctor.v1");
    for cli in flotilla_tests::vendor::VENDOR_CLIS {
        if env.bin(cli).is_none() {
            continue;
        }
        let row = report["clis"]
            .as_array()
            .expect("clis")
            .iter()
            .find(|c| c["cli"] == cli.to_string())
            .expect("row");
        assert_eq!(row["status"], "ok", "{cli}: {row}");
        assert_eq!(row["supported"], Value::Bool(true), "{cli}: {row}");
        assert_eq!(row["headless"], Value::Bool(true), "{cli}: {row}");
    }
}

/// Every file under `dir` whose name or text holds `id`.
fn files_holding(dir: &std::path::Path, id: &str, found: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files_holding(&path, id, found);
        } else if kind.is_file()
            && (entry.file_name().to_string_lossy().contains(id)
                || std::fs::read_to_string(&path).is_ok_and(|t| t.contains(id)))
        {
            found.push(path);
        }
    }
}

/// Issue 9: a native session that no longer exists (the CLI's own files
/// of it deleted) is reported as `session_not_found`, and the next resume
/// starts a new session instead of failing the same way again.
fn a_session_that_is_gone_is_said_so_and_not_resumed_again(cli: CliKind) {
    let script = Script::new([Reply::text("first answer"), Reply::text("fresh answer")]);
    let Some(rig) = Rig::new(cli, script) else {
        return;
    };
    let (code, v, err) = rig.lane("run", "g", &["--prompt", "one", "--no-auto-archive"]);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    let session = v["native_session_id"]
        .as_str()
        .expect("a session")
        .to_owned();
    let mut files = Vec::new();
    for dir in [rig.env.home(), rig.home.path().join("state/lanes")] {
        files_holding(&dir, &session, &mut files);
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "turn-1"));
    assert!(!files.is_empty(), "{cli} keeps session {session} somewhere");
    for file in files {
        std::fs::remove_file(file).expect("remove the session");
    }
    let resume = ["--json", "lane", "resume", "g", "--prompt", "two", "--wait"];
    let (code, v, err) = rig.run(&resume);
    // What the CLI itself said, for a failure's message.
    let said = std::fs::read_to_string(rig.home.path().join("state/lanes/g/turn-2/stderr"))
        .unwrap_or_default();
    assert_eq!(code, 1, "{cli}: {v} {err}\nthe CLI's stderr:\n{said}");
    assert_eq!(
        v["error_class"], "session_not_found",
        "{cli}: {v}\nthe CLI's stderr:\n{said}"
    );
    let (code, v, err) = rig.run(&resume);
    assert_eq!(code, 0, "{cli}: {v} {err}");
    assert!(v.to_string().contains("fresh answer"), "{cli}: {v}");
    let events = rig.home.ok(&["lane", "events", "g"]);
    assert!(events.contains("no longer exists"), "{cli}: {events}");
}

#[test]
fn a_claude_session_that_is_gone_is_said_so_and_not_resumed_again() {
    a_session_that_is_gone_is_said_so_and_not_resumed_again(CliKind::Claude);
}

#[test]
fn a_gemini_session_that_is_gone_is_said_so_and_not_resumed_again() {
    a_session_that_is_gone_is_said_so_and_not_resumed_again(CliKind::Gemini);
}

macro_rules! vendor_lane_tests {
    ($($name:ident: $cli:expr;)*) => {$(
        mod $name {
            #[test]
            fn answers_text() {
                super::answers_text($cli);
            }
            #[test]
            fn writes_with_its_own_tool() {
                super::writes_with_its_own_tool($cli);
            }
            #[test]
            fn resumes_the_native_session() {
                super::resumes_the_native_session($cli);
            }
            #[test]
            fn interrupts_mid_turn() {
                super::interrupts_mid_turn($cli);
            }
            #[test]
            fn reports_a_model_error() {
                super::reports_a_model_error($cli);
            }
            #[test]
            fn reports_each_turns_own_usage() {
                super::reports_each_turns_own_usage($cli);
            }
            #[test]
            fn classifies_its_errors() {
                super::classifies_its_errors($cli);
            }
            #[test]
            fn meets_its_deadline() {
                super::meets_its_deadline($cli);
            }
            #[test]
            fn messages_its_owner_as_itself() {
                super::messages_its_owner_as_itself($cli);
            }
        }
    )*};
}

vendor_lane_tests! {
    claude: super::CliKind::Claude;
    codex: super::CliKind::Codex;
    qwen: super::CliKind::Qwen;
    gemini: super::CliKind::Gemini;
    pi: super::CliKind::Pi;
    opencode: super::CliKind::Opencode;
    grok: super::CliKind::Grok;
}
