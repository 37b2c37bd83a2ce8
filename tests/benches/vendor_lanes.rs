//! `cargo bench -p flotilla-tests --bench vendor_lanes`: for each installed
//! vendor CLI, the time of a one-turn lane (`flotilla lane run`) against the
//! scripted model server, over the same CLI run directly against the same
//! server, in the same run. Prints one line per CLI and a JSON document
//! (`flotilla.bench.vendor-lanes.v1`) at the end. Not a test: it asserts
//! nothing about time.

use std::time::{Duration, Instant};

use flotilla_tests::TestHome;
use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{
    CliKind, Permissions, VENDOR_CLIS, VendorEnv, default_model, run_bounded,
};

const RUNS: usize = 3;
const TURN: Duration = Duration::from_secs(150);

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn lane_model(cli: CliKind) -> String {
    match cli {
        CliKind::Pi | CliKind::Opencode => "fake/fake-model".into(),
        other => default_model(other).into(),
    }
}

fn measure(cli: CliKind) -> Option<(f64, f64)> {
    let server = ModelServer::start(Script::default().or_else(Reply::text("benchmark answer")));
    let env = VendorEnv::new(&server);
    env.bin(cli)?;
    let mut direct = Vec::new();
    for _ in 0..RUNS {
        let out = run_bounded(
            env.direct_command_with(cli, "answer briefly", None, Permissions::Default),
            TURN,
        );
        if !out.success() {
            eprintln!("{cli}: the direct run failed: {}", out.describe());
            return None;
        }
        direct.push(out.elapsed);
    }
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("bench");
    let (model, workdir) = (lane_model(cli), env.workdir().display().to_string());
    let mut lane = Vec::new();
    for i in 0..RUNS {
        let name = format!("b{i}");
        let cli_name = cli.to_string();
        let args = [
            "lane",
            "run",
            "--cli",
            &cli_name,
            "-n",
            &name,
            "-m",
            &model,
            "-C",
            &workdir,
            "--prompt",
            "answer briefly",
        ];
        let start = Instant::now();
        let out = home.run(&args);
        if !out.status.success() {
            eprintln!(
                "{cli}: the lane failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        lane.push(start.elapsed());
    }
    Some((median(direct), median(lane)))
}

fn main() {
    let mut rows = Vec::new();
    println!(
        "{:<9} {:>12} {:>12} {:>8}",
        "CLI", "direct p50", "lane p50", "ratio"
    );
    for cli in VENDOR_CLIS {
        if let Some((d, l)) = measure(cli) {
            println!(
                "{:<9} {:>9.0} ms {:>9.0} ms {:>7.2}×",
                cli.to_string(),
                d,
                l,
                l / d
            );
            rows.push(serde_json::json!({"cli": cli.to_string(), "direct_p50_ms": d, "lane_p50_ms": l, "ratio": l / d}));
        }
    }
    let doc =
        serde_json::json!({"schema": "flotilla.bench.vendor-lanes.v1", "runs": RUNS, "clis": rows});
    println!("{doc}");
}
