//! `flotilla bench local`: measures one host on this machine and prints
//! each figure next to a floor measured in the same run on the same disk (a
//! bare redb commit), so figures compare across machines as ratios.
//!
//! It starts a real daemon (this executable, `host run`) on a throwaway
//! home, talks to it over its socket as any client does, and removes
//! everything afterwards.

use std::time::{Duration, Instant};

use anyhow::Result;
use flotilla_actors::names::{GroupName, PeerName};
use flotilla_actors::protocol::{PeerJoinArgs, ShutdownArgs};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use serde::Serialize;

use crate::args::{BenchCommand, BenchLocalArgs};
use crate::bench_daemon::{send_args, start_daemon, timed_sends};
use crate::bench_pipelined::{
    PIPELINED_SCALE, PIPELINED_WINDOW, Stages, pipelined, writer_counters,
};
use crate::commands::Env;
use crate::exit::OK;
use crate::output::{self, StdoutError, outln};

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Figures {
    schema: &'static str,
    machine: String,
    redb_commit_p50_us: f64,
    latency_p50_us: f64,
    latency_p99_us: f64,
    latency_p50_ratio: f64,
    latency_p99_ratio: f64,
    throughput: Vec<Throughput>,
    /// Where one sender's message spends its time (the one-sender run).
    stages: Stages,
    rss_idle_kib: u64,
    rss_queued_kib: u64,
    queued_messages: usize,
    rss_queued_ratio: f64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Throughput {
    senders: usize,
    /// Requests each sender keeps in flight on its one connection
    /// (pipelined mode); null: one at a time.
    in_flight: Option<usize>,
    messages: usize,
    per_sec: f64,
    /// Messages per second over bare redb commits per second.
    ratio_to_commit_rate: f64,
}

/// The JSON Schema of `bench local --json` (`flotilla schemas`).
pub(crate) fn local_schema() -> schemars::Schema {
    crate::schemas::derived::<Figures>()
}

pub(crate) async fn run(env: &Env, cmd: BenchCommand) -> Result<u8> {
    let args = match cmd {
        BenchCommand::Local(args) => args,
        BenchCommand::Lanes(args) => {
            let figures = crate::bench_lanes::lanes(&args, rss_kib).await?;
            if env.json {
                output::json(&figures)?;
            } else {
                crate::bench_lanes::print(&figures)?;
            }
            return Ok(OK);
        }
        BenchCommand::Fleet(args) => {
            let figures = crate::bench_fleet::fleet(&args).await?;
            if env.json {
                output::json(&figures)?;
            } else {
                crate::bench_fleet::print(&figures)?;
            }
            return Ok(OK);
        }
        BenchCommand::Federation(args) => {
            let figures = crate::bench_federation::federation(&args).await?;
            if env.json {
                output::json(&figures)?;
            } else {
                crate::bench_federation::print(&figures)?;
            }
            return Ok(OK);
        }
    };
    let figures = local(&args).await?;
    if env.json {
        output::json(&figures)?;
    } else {
        print_figures(&figures)?;
    }
    Ok(OK)
}

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e6
}

/// The floor: one small durable redb commit, on the same disk.
fn redb_commit_p50(dir: &std::path::Path) -> Result<f64> {
    let db = redb::Database::create(dir.join("floor.redb"))?;
    let table: redb::TableDefinition<u64, u64> = redb::TableDefinition::new("t");
    let mut times = Vec::with_capacity(200);
    for i in 0..200u64 {
        let start = Instant::now();
        let txn = db.begin_write()?;
        txn.open_table(table)?.insert(i, i)?;
        txn.commit()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(percentile(&times, 0.5))
}

pub(crate) fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmRSS:")) {
        return line
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
    }
    let ps = std::process::Command::new("ps")
        .args(["-o", "rss=", "-p", &pid.to_string()])
        .output();
    ps.ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}

pub(crate) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cpu}, {cores} cores, {}", std::env::consts::OS)
}

async fn local(args: &BenchLocalArgs) -> Result<Figures> {
    let dir = tempfile::Builder::new()
        .prefix("flotilla-bench-")
        .tempdir()?;
    let mut phases = crate::progress::Phases::default();
    phases.next("measuring the floor (bare redb commits)...");
    let floor = redb_commit_p50(dir.path())?;
    let home = Home::at(dir.path().join("home"));
    let (mut daemon, mut admin, pid) = start_daemon(&home).await?;
    let rss_idle = rss_kib(pid);
    let group = GroupName::explicit("bench")?;
    for name in ["reader", "sink"]
        .into_iter()
        .map(String::from)
        .chain((0..16).map(|i| format!("s{i}")))
    {
        admin
            .call(&PeerJoinArgs {
                name: PeerName::new(&name)?,
                groups: vec![group.clone()],
                product: None,
                session: None,
            })
            .await?;
    }
    phases.next(format!(
        "latency: {} messages, one sender, one reader...",
        args.latency_messages
    ));
    let (p50, p99) = latency(&home, args.latency_messages).await?;
    let mut throughput = Vec::new();
    let mut stages = Stages::default();
    for senders in [1usize, 4, 16] {
        phases.next(format!(
            "throughput: {} messages from {senders} sender(s)...",
            args.throughput_messages
        ));
        let before = writer_counters(&mut admin).await?;
        let per_sec = flood(&home, senders, args.throughput_messages, "reader").await?;
        if senders == 1 {
            let after = writer_counters(&mut admin).await?;
            let per = |i: usize| (after[i] - before[i]) as f64 / args.throughput_messages as f64;
            let per_message_us = 1e6 / per_sec;
            stages = Stages {
                per_message_us,
                commits_per_message: per(0),
                writes_per_message: per(1),
                apply_us: per(2),
                sync_us: per(3),
                other_us: per_message_us - per(2) - per(3),
            };
        }
        throughput.push(Throughput {
            senders,
            in_flight: None,
            messages: args.throughput_messages,
            per_sec,
            ratio_to_commit_rate: per_sec * floor / 1e6,
        });
    }
    let messages = args.throughput_messages * PIPELINED_SCALE;
    phases.next(format!(
        "throughput: {messages} messages from 1 pipelining sender, {PIPELINED_WINDOW} in flight..."
    ));
    let per_sec = pipelined(&home, messages, "reader").await?;
    throughput.push(Throughput {
        senders: 1,
        in_flight: Some(PIPELINED_WINDOW),
        messages,
        per_sec,
        ratio_to_commit_rate: per_sec * floor / 1e6,
    });
    phases.next(format!(
        "memory: queueing {} messages...",
        args.queued_messages
    ));
    flood(&home, 16, args.queued_messages, "sink").await?;
    let rss_queued = rss_kib(pid);
    phases.end();
    let _ = admin.call(&ShutdownArgs {}).await;
    let _ = tokio::time::timeout(Duration::from_secs(30), daemon.wait()).await;
    Ok(Figures {
        schema: "flotilla.bench.local.v1",
        machine: machine(),
        redb_commit_p50_us: floor,
        latency_p50_us: p50,
        latency_p99_us: p99,
        latency_p50_ratio: p50 / floor,
        latency_p99_ratio: p99 / floor,
        throughput,
        stages,
        rss_idle_kib: rss_idle,
        rss_queued_kib: rss_queued,
        queued_messages: args.queued_messages,
        rss_queued_ratio: rss_queued as f64 / rss_idle.max(1) as f64,
    })
}

/// Send-to-inbox latency: one message at a time, timed from the send call
/// to the reader's inbox read returning it.
async fn latency(home: &Home, n: usize) -> Result<(f64, f64)> {
    let times = timed_sends(home, "s0", home, "reader", "reader", n).await?;
    Ok((
        percentile(&times.inbox, 0.5),
        percentile(&times.inbox, 0.99),
    ))
}

/// Messages per second with `senders` concurrent connections.
async fn flood(home: &Home, senders: usize, total: usize, to: &'static str) -> Result<f64> {
    let per = total / senders;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for s in 0..senders {
        let home = home.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = ControlClient::connect(&home).await?;
            let from = format!("s{s}");
            for i in 0..per {
                c.call(&send_args(&from, to, i)?).await?;
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok((per * senders) as f64 / start.elapsed().as_secs_f64())
}

fn print_figures(f: &Figures) -> Result<(), StdoutError> {
    outln!("flotilla bench local — {}", f.machine)?;
    outln!(
        "floor: bare redb commit p50            {:>10.0} µs",
        f.redb_commit_p50_us
    )?;
    outln!(
        "send→inbox latency p50                 {:>10.0} µs  ({:.2}× floor)",
        f.latency_p50_us,
        f.latency_p50_ratio
    )?;
    outln!(
        "send→inbox latency p99                 {:>10.0} µs  ({:.2}× floor)",
        f.latency_p99_us,
        f.latency_p99_ratio
    )?;
    for t in &f.throughput {
        let who = match t.in_flight {
            Some(n) => format!("1 sender, {n} in flight"),
            None => format!("{:>2} sender(s)", t.senders),
        };
        outln!(
            "throughput, {who:<25}  {:>10.0} msg/s ({:.2}× the bare commit rate)",
            t.per_sec,
            t.ratio_to_commit_rate
        )?;
    }
    let st = &f.stages;
    outln!(
        "one sender, per message: {:.0} µs = writer applying {:.0} + committing {:.0} + the rest {:.0} ({:.2} commits, {:.1} writes)",
        st.per_message_us,
        st.apply_us,
        st.sync_us,
        st.other_us,
        st.commits_per_message,
        st.writes_per_message
    )?;
    outln!(
        "daemon RSS idle                        {:>10} KiB",
        f.rss_idle_kib
    )?;
    outln!(
        "daemon RSS with {:>6} queued          {:>10} KiB ({:.2}× idle)",
        f.queued_messages,
        f.rss_queued_kib,
        f.rss_queued_ratio
    )?;
    Ok(())
}
