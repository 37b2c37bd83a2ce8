//! `flotilla bench lanes`: what a lane costs. It times `lane run --cli exec
//! -- true` (start, the shim, the process, the result) against running
//! `true` directly in the same run, and measures the daemon's memory idle
//! and with many idle lanes. Per-CLI figures against the scripted model
//! server live in the tests crate's `lanes` bench, which owns that server.

use std::time::{Duration, Instant};

use anyhow::Result;
use flotilla_actors::lane::{CliKind, Permissions};
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{LaneStartArgs, LaneWaitArgs, ShutdownArgs};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use serde::Serialize;

use crate::args::BenchLanesArgs;
use crate::output::{StdoutError, outln};

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct LaneFigures {
    schema: &'static str,
    direct_true_p50_ms: f64,
    lane_true_p50_ms: f64,
    added_ms: f64,
    ratio: f64,
    rss_idle_kib: u64,
    idle_lanes: usize,
    rss_lanes_kib: u64,
    rss_lanes_ratio: f64,
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn start_args(name: &str, dir: &std::path::Path) -> Result<LaneStartArgs> {
    Ok(LaneStartArgs {
        name: PeerName::new(name)?,
        cli: CliKind::Exec,
        cwd: Some(dir.display().to_string()),
        model: None,
        permissions: Permissions::Default,
        timeout_secs: None,
        persistent: false,
        auto_archive_secs: None,
        groups: vec![],
        inherit_groups: false,
        as_peer: None,
        owner: None,
        env: vec![],
        args: vec!["true".into()],
        restart_on_stall: false,
        force: false,
        claim: None,
        prompt: String::new(),
    })
}

pub(crate) async fn run_lane(
    c: &mut ControlClient,
    name: &str,
    dir: &std::path::Path,
) -> Result<()> {
    c.call(&start_args(name, dir)?).await?;
    c.call(&LaneWaitArgs {
        name: PeerName::new(name)?,
        timeout_ms: Some(60_000),
    })
    .await?;
    Ok(())
}

pub(crate) async fn lanes(args: &BenchLanesArgs, rss_kib: fn(u32) -> u64) -> Result<LaneFigures> {
    let dir = tempfile::Builder::new()
        .prefix("flotilla-bench-lanes-")
        .tempdir()?;
    let home = Home::at(dir.path().join("home"));
    let (mut daemon, mut c, pid) = crate::bench_daemon::start_daemon(&home).await?;
    let rss_idle = rss_kib(pid);
    let mut phases = crate::progress::Phases::default();
    phases.next(format!(
        "timing {} runs of `true`, directly and as a lane...",
        args.runs
    ));
    let mut direct = Vec::new();
    let mut lane = Vec::new();
    run_lane(&mut c, "warmup", dir.path()).await?;
    for i in 0..args.runs {
        let t = Instant::now();
        tokio::process::Command::new("true").status().await?;
        direct.push(t.elapsed());
        let t = Instant::now();
        run_lane(&mut c, &format!("t{i}"), dir.path()).await?;
        lane.push(t.elapsed());
    }
    phases.next(format!("memory: {} idle lanes...", args.idle_lanes));
    for i in 0..args.idle_lanes {
        run_lane(&mut c, &format!("idle{i}"), dir.path()).await?;
    }
    let rss_lanes = rss_kib(pid);
    phases.end();
    let _ = c.call(&ShutdownArgs {}).await;
    let _ = tokio::time::timeout(Duration::from_secs(60), daemon.wait()).await;
    let (d, l) = (median(direct), median(lane));
    Ok(LaneFigures {
        schema: "flotilla.bench.lanes.v1",
        direct_true_p50_ms: d,
        lane_true_p50_ms: l,
        added_ms: l - d,
        ratio: l / d.max(1e-6),
        rss_idle_kib: rss_idle,
        idle_lanes: args.idle_lanes,
        rss_lanes_kib: rss_lanes,
        rss_lanes_ratio: rss_lanes as f64 / rss_idle.max(1) as f64,
    })
}

pub(crate) fn print(f: &LaneFigures) -> Result<(), StdoutError> {
    outln!("flotilla bench lanes")?;
    outln!(
        "`true` run directly, p50                {:>8.2} ms",
        f.direct_true_p50_ms
    )?;
    outln!(
        "`lane run --cli exec -- true`, p50       {:>8.2} ms ({:.1}× direct, +{:.2} ms)",
        f.lane_true_p50_ms,
        f.ratio,
        f.added_ms
    )?;
    outln!(
        "daemon RSS idle                          {:>8} KiB",
        f.rss_idle_kib
    )?;
    outln!(
        "daemon RSS with {:>4} idle lanes          {:>8} KiB ({:.2}× idle)",
        f.idle_lanes,
        f.rss_lanes_kib,
        f.rss_lanes_ratio
    )?;
    Ok(())
}
