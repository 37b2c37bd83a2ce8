//! Issue 9: every vendor CLI's lane reports `context_used_pct`, the last
//! model request's context over the model's window, through the real
//! daemon against the scripted model server (which reports the same
//! tokens for every request, so a sum over the turn's two requests would
//! be twice the right share). The window comes from the model table:
//! `[context_windows]` in the daemon's config for the fake model, the
//! built-in figures for gemini and grok models.

use std::time::Duration;

use flotilla_tests::model_server::{
    ModelServer, Reply, Script, USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS,
};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

/// The window config gives the scripted server's fake model.
const FAKE_WINDOW: u64 = 32_000;

/// A daemon whose config knows the fake model's window, its lanes running
/// `cli` against `server`; `None` when the CLI is not installed (outside
/// CI).
struct Rig {
    server: ModelServer,
    env: VendorEnv,
    home: TestHome,
    cli: CliKind,
}

impl Rig {
    fn new(cli: CliKind) -> Option<Self> {
        let server = ModelServer::start(Script::default());
        let env = VendorEnv::new(&server);
        env.bin(cli)?;
        let mut home = TestHome::new();
        home.env.extend(env.env());
        home.write_config(&format!(
            "[context_windows]\n\"fake-model\" = {FAKE_WINDOW}\n"
        ));
        home.spawn_daemon("h");
        Some(Self {
            server,
            env,
            home,
            cli,
        })
    }

    /// The lane's model, and the window the model table gives it.
    fn model(&self) -> (&'static str, u64) {
        match self.cli {
            CliKind::Pi | CliKind::Opencode => ("fake/fake-model", FAKE_WINDOW),
            CliKind::Gemini => (default_model(self.cli), 1_048_576),
            CliKind::Grok => (default_model(self.cli), 256_000),
            _ => ("fake-model", FAKE_WINDOW),
        }
    }

    /// One turn of two model requests: the CLI's write tool, then text.
    fn run_two_requests(&self, name: &str) -> Value {
        self.server.push(Reply::WriteFile {
            path: self.env.workdir().join("ctx.txt"),
            content: "context\n".into(),
        });
        self.server.push(Reply::text("done"));
        let cli = self.cli.to_string();
        let workdir = self.env.workdir().display().to_string();
        let (model, _) = self.model();
        // grok cannot restrict its tools; it runs with bypass.
        let permissions = if self.cli == CliKind::Grok {
            "bypass"
        } else {
            "workspace"
        };
        let args = [
            "--json",
            "lane",
            "run",
            "--cli",
            &cli,
            "-n",
            name,
            "-m",
            model,
            "-C",
            &workdir,
            "--permissions",
            permissions,
            "--no-auto-archive",
            "--prompt",
            "write the file",
        ];
        let out = self.home.run(&args);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(
            (out.status.code(), v["status"].as_str()),
            (Some(0), Some("completed")),
            "{cli}: {v} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        v
    }

    /// The tokens of the turn's last request as Flotilla can know them:
    /// the scripted counts, or for grok (which reports none) the estimate
    /// from its printed messages.
    fn last_request_tokens(&self, name: &str) -> u64 {
        if self.cli != CliKind::Grok {
            return USAGE_INPUT_TOKENS + USAGE_OUTPUT_TOKENS;
        }
        let stdout = self
            .home
            .path()
            .join(format!("state/lanes/{name}/turn-1/stdout"));
        let text = std::fs::read_to_string(&stdout).expect("grok's stdout");
        let chars: usize = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|m| {
                let content = m["content"].as_str().map_or(0, |t| t.chars().count());
                let calls = m
                    .get("tool_calls")
                    .map_or(0, |c| c.to_string().chars().count());
                content + calls
            })
            .sum();
        (chars as u64).div_ceil(4)
    }
}

/// Percent with four decimals, as lanes report it.
fn pct(tokens: u64, window: u64) -> f64 {
    (tokens as f64 * 1_000_000.0 / window as f64).round() / 10_000.0
}

fn reports_the_last_requests_share(cli: CliKind) {
    let Some(rig) = Rig::new(cli) else {
        return;
    };
    let v = rig.run_two_requests("c");
    assert!(
        rig.server.model_requests().len() >= 2,
        "{cli}: the turn made two requests"
    );
    let (_, window) = rig.model();
    let expected = pct(rig.last_request_tokens("c"), window);
    assert_eq!(v["context_window"], window, "{cli}: {v}");
    assert_eq!(v["context_used_pct"].as_f64(), Some(expected), "{cli}: {v}");
    if cli != CliKind::Grok {
        let sum = pct(2 * (USAGE_INPUT_TOKENS + USAGE_OUTPUT_TOKENS), window);
        assert_ne!(
            Some(sum),
            v["context_used_pct"].as_f64(),
            "{cli}: not the sum"
        );
    }
    let roster = rig.home.json(&["roster"]);
    let lane = roster["lanes"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["id"] == "h/c"));
    assert_eq!(
        lane.and_then(|l| l["context_used_pct"].as_f64()),
        Some(expected),
        "{cli}: the roster's lane: {roster}"
    );
    let status = rig.home.json(&["lane", "status", "c"]);
    assert_eq!(
        status["context_used_pct"].as_f64(),
        Some(expected),
        "{cli}: lane status: {status}"
    );
    let events = events(&rig.home, "c");
    let last_usage = events.iter().rev().find(|e| e["type"] == "usage");
    assert_eq!(
        last_usage.and_then(|e| e["context_used_pct"].as_f64()),
        Some(expected),
        "{cli}: the turn's last usage event carries the share"
    );
    if matches!(cli, CliKind::Qwen | CliKind::Pi | CliKind::Opencode) {
        // These stream each request's usage: the first request's share is
        // sent before the answer's message.
        let seq = |e: &Value| e["seq"].as_u64().unwrap_or(0);
        let first_usage = events
            .iter()
            .find(|e| e["type"] == "usage" && e["context_used_pct"].is_f64());
        let last_message = events.iter().rev().find(|e| e["type"] == "message");
        assert!(
            first_usage.map(seq) < last_message.map(seq) && first_usage.is_some(),
            "{cli}: a usage event mid-turn: {events:?}"
        );
    }
}

/// The lane's events, once the turn's end is among them.
fn events(home: &TestHome, lane: &str) -> Vec<Value> {
    let mut all = Vec::new();
    wait_until("the turn's events", Duration::from_secs(10), || {
        let out = home.run(&["--json", "lane", "events", lane]);
        all = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        all.iter().any(|e: &Value| e["type"] == "turn.completed")
    });
    all
}

macro_rules! context_tests {
    ($($name:ident: $cli:expr;)*) => {$(
        #[test]
        fn $name() {
            reports_the_last_requests_share($cli);
        }
    )*};
}

context_tests! {
    qwen_reports_the_last_requests_share: CliKind::Qwen;
    gemini_reports_the_last_requests_share: CliKind::Gemini;
    pi_reports_the_last_requests_share: CliKind::Pi;
    opencode_reports_the_last_requests_share: CliKind::Opencode;
    grok_reports_the_last_requests_share: CliKind::Grok;
}
