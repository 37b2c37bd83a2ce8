//! `cargo bench -p flotilla-tests --bench agents`: what the agents' paths
//! cost, each next to its baseline in the same run (issue 8):
//! - a `flotilla mcp` tool call (`list_peers`) round trip, next to the same
//!   operation (`peers`) over the control socket, p50 and p99 of 200;
//! - from `flotilla send` to the message in the model server's request for
//!   an idle interactive Claude Code session (live delivery), next to the
//!   same session's turn start when the prompt is typed with tmux
//!   `send-keys`, p50 of 20 each.
//!
//! Prints lines and a JSON document (`flotilla.bench.agents.v1`). Not a
//! test: it asserts nothing about time.

use std::time::{Duration, Instant};

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::session::{Tmux, claude_session_command, claude_state};
use flotilla_tests::vendor::{CliKind, VendorEnv};
use flotilla_tests::{TestHome, mcp, process_running, wait_until};
use serde_json::json;

const CALLS: usize = 200;
const DELIVERIES: usize = 20;
const PATIENCE: Duration = Duration::from_secs(60);

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e6
}

fn tool_round_trip(home: &TestHome) -> (Vec<Duration>, Vec<Duration>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let via_mcp = runtime.block_on(async {
        let client = mcp::connect(home, Some("lead")).await;
        let mut times = Vec::new();
        for _ in 0..CALLS {
            let start = Instant::now();
            mcp::ok(&client, "list_peers", json!({})).await;
            times.push(start.elapsed());
        }
        let _ = client.cancel().await;
        times
    });
    let mut raw = home.raw();
    let mut direct = Vec::new();
    for _ in 0..CALLS {
        let start = Instant::now();
        raw.call("peers", json!({"as": "lead"})).expect("peers");
        direct.push(start.elapsed());
    }
    (via_mcp, direct)
}

fn carried(server: &ModelServer, mark: &str) -> bool {
    server
        .model_requests()
        .iter()
        .any(|r| r.body.to_string().contains(mark))
}

/// (live delivery, typed prompt) times for an idle Claude Code session.
fn claude_delivery() -> Option<(Vec<Duration>, Vec<Duration>)> {
    let server = ModelServer::start(Script::default().or_else(Reply::text("noted")));
    let env = VendorEnv::new(&server);
    env.bin(CliKind::Claude)?;
    claude_state(&env);
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("bench");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    let command = claude_session_command(&env, home.path(), "s1", "team");
    let tmux = Tmux::start(env.path(), &env.workdir(), &command);
    let waiter = format!("{} hook wait", home.path().display());
    let mut live = Vec::new();
    for i in 0..DELIVERIES {
        wait_until("the session's waiter", PATIENCE, || {
            process_running(&waiter)
        });
        let mark = format!("LIVE-MARK-{i}");
        let start = Instant::now();
        home.ok(&["send", "--as", "lead", "--to", "s1", &mark]);
        wait_until("the message in a request", PATIENCE, || {
            carried(&server, &mark)
        });
        live.push(start.elapsed());
    }
    let mut typed = Vec::new();
    for i in 0..DELIVERIES {
        wait_until("the session's waiter", PATIENCE, || {
            process_running(&waiter)
        });
        let mark = format!("TYPED-MARK-{i}");
        let start = Instant::now();
        tmux.send_keys(&["-l", &mark]);
        tmux.send_keys(&["Enter"]);
        wait_until("the typed prompt in a request", PATIENCE, || {
            carried(&server, &mark)
        });
        typed.push(start.elapsed());
    }
    Some((live, typed))
}

fn main() {
    let mut home = TestHome::new();
    home.spawn_daemon("bench");
    home.ok(&["peer", "join", "lead", "-g", "team"]);
    home.ok(&["peer", "join", "other", "-g", "team"]);
    let (mut via_mcp, mut direct) = tool_round_trip(&home);
    let (m50, m99, d50, d99) = (
        pct(&mut via_mcp, 0.5),
        pct(&mut via_mcp, 0.99),
        pct(&mut direct, 0.5),
        pct(&mut direct, 0.99),
    );
    println!(
        "mcp list_peers: p50 {m50:.0} µs, p99 {m99:.0} µs; control socket peers: p50 {d50:.0} µs, p99 {d99:.0} µs; p50 ratio {:.2}",
        m50 / d50
    );
    let mut doc = json!({
        "schema": "flotilla.bench.agents.v1",
        "mcp_tool_us": {"p50": m50, "p99": m99},
        "control_socket_us": {"p50": d50, "p99": d99},
        "mcp_over_control_p50": m50 / d50,
    });
    match claude_delivery() {
        Some((mut live, mut typed)) => {
            let (l50, t50) = (pct(&mut live, 0.5) / 1000.0, pct(&mut typed, 0.5) / 1000.0);
            println!(
                "claude idle session: send -> model request p50 {l50:.0} ms; typed prompt -> model request p50 {t50:.0} ms; ratio {:.2}",
                l50 / t50
            );
            doc["claude_live_ms"] = json!({"p50": l50});
            doc["claude_typed_ms"] = json!({"p50": t50});
        }
        None => println!("claude is not installed: no delivery figures"),
    }
    println!("{doc:#}");
}
