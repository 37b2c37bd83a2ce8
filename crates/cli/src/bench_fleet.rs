//! `flotilla bench fleet`: what the daemon adds to a fleet's work. In one
//! run, against a throwaway daemon: a bare exec lane turn (the baseline),
//! the daemon's acceptance of one artifact (`fleet.check`), a one-step
//! task of an exec supervisor and an exec worker (three turns, two
//! judgements) from the fleet's own decision times, and the dispatch
//! throughput of one supervisor and eight workers. The models are scripts:
//! the figures are the daemon's, not a model's.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use flotilla_actors::fleet::{FleetSpec, Lifecycle, MemberSpec, Task};
use flotilla_actors::lane::CliKind;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    FleetCheckArgs, FleetStartArgs, FleetState, FleetStatusArgs, FleetTaskArgs, FleetView,
    ShutdownArgs,
};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use serde::Serialize;

use crate::args::BenchFleetArgs;
use crate::output::{StdoutError, outln};

/// The figures (`flotilla.bench.fleet.v1`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct FleetFigures {
    schema: &'static str,
    /// A bare exec lane turn, p50 (the baseline).
    lane_turn_p50_ms: f64,
    /// One `fleet.check` of one artifact, p50.
    acceptance_p50_ms: f64,
    /// A one-step task: given to completed, p50.
    task_p50_ms: f64,
    /// The task's time beyond its three lane turns and two judgements,
    /// per dispatch.
    overhead_per_dispatch_ms: f64,
    /// Workers in the throughput fleet.
    workers: usize,
    /// Worker steps dispatched and accepted in the throughput run.
    steps: usize,
    /// Steps per second, one supervisor and `workers` workers.
    steps_per_sec: f64,
    /// Steps per second over what bare lane turns one after another allow.
    ratio_to_serial_turns: f64,
}

/// Plans one step per worker for `rounds` rounds, then says done.
fn supervisor_script(workers: usize, rounds: usize) -> String {
    let items: Vec<String> = (1..=workers)
        .map(|i| {
            format!(r#"{{"to": "worker-{i}", "step": "r'$n'-w{i}", "prompt": "p", "artifacts": [{{"path": "out.txt"}}]}}"#)
        })
        .collect();
    format!(
        "#!/bin/sh\ncat >/dev/null\nn=$(cat rounds 2>/dev/null || echo 0); n=$((n+1)); echo $n > rounds\n\
         if [ $n -gt {rounds} ]; then echo 0 > rounds; echo '{{\"done\": true}}'; exit 0; fi\n\
         echo '{{\"dispatch\": [{}]}}'\n",
        items.join(", ")
    )
}

fn member(cmd: &Path) -> MemberSpec {
    MemberSpec {
        cli: CliKind::Exec,
        model: None,
        command: Some(cmd.display().to_string()),
        fallback_models: Vec::new(),
        permissions: Default::default(),
        host: None,
        claim: None,
    }
}

fn script(dir: &Path, name: &str, text: &str) -> Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

fn task() -> Result<Task> {
    Ok(Task::parse(
        r#"{"goal": "bench", "artifacts": [{"path": "out.txt"}]}"#,
    )?)
}

async fn start_fleet(
    c: &mut ControlClient,
    name: &str,
    dir: &Path,
    workers: usize,
    rounds: usize,
) -> Result<()> {
    let sup = script(
        dir,
        &format!("{name}-sup.sh"),
        &supervisor_script(workers, rounds),
    )?;
    let work = script(
        dir,
        &format!("{name}-work.sh"),
        "#!/bin/sh\ncat >/dev/null\n",
    )?;
    let spec = FleetSpec {
        name: PeerName::new(name)?,
        supervisor: member(&sup),
        workers: (0..workers).map(|_| member(&work)).collect(),
        lifecycle: Lifecycle::Task,
        dir: dir.display().to_string(),
        max_busy: None,
        budget: Default::default(),
        turn_timeout_secs: None,
        check_timeout_secs: 60,
        rotate_at_pct: 60.0,
        rotate_now_at_pct: None,
        wall_wait_secs: 300,
        matrix: Vec::new(),
        as_peer: None,
    };
    c.call(&FleetStartArgs { spec, task: None }).await?;
    Ok(())
}

/// Gives `name` a task and waits for it; its wall time from the fleet's
/// own decisions.
async fn one_task(c: &mut ControlClient, name: &str) -> Result<Duration> {
    let name = PeerName::new(name)?;
    let view = c
        .call(&FleetTaskArgs {
            name: name.clone(),
            task: task()?,
        })
        .await?;
    let given = view.recent.last().map(|d| d.at_ms).context("no decision")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let v: FleetView = c.call(&FleetStatusArgs { name: name.clone() }).await?;
        match v.state {
            FleetState::Completed => {
                let done = v.recent.last().map(|d| d.at_ms).context("no decision")?;
                return Ok(Duration::from_millis(done.saturating_sub(given)));
            }
            FleetState::Running => {}
            other => bail!("the bench fleet ended {other:?}: {:?}", v.recent.last()),
        }
        if Instant::now() > deadline {
            bail!("the bench fleet took over two minutes");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn median_ms(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

pub(crate) async fn fleet(args: &BenchFleetArgs) -> Result<FleetFigures> {
    let tmp = tempfile::Builder::new()
        .prefix("flotilla-bench-fleet-")
        .tempdir()?;
    let dir = tmp.path().join("work");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("out.txt"), "done\n")?;
    let home = Home::at(tmp.path().join("home"));
    let (mut daemon, mut c, _) = crate::bench_daemon::start_daemon(&home).await?;
    let mut phases = crate::progress::Phases::default();
    phases.next(format!("{} bare lane turns and acceptances...", args.runs));
    let mut turns = Vec::new();
    let mut checks = Vec::new();
    for i in 0..args.runs {
        let t = Instant::now();
        crate::bench_lanes::run_lane(&mut c, &format!("base{i}"), &dir).await?;
        turns.push(t.elapsed());
        let t = Instant::now();
        c.call(&FleetCheckArgs {
            task: task()?,
            dir: dir.display().to_string(),
            timeout_ms: 60_000,
        })
        .await?;
        checks.push(t.elapsed());
    }
    phases.next(format!("{} one-step tasks...", args.runs));
    start_fleet(&mut c, "one", &dir, 1, 1).await?;
    let mut tasks = Vec::new();
    for _ in 0..args.runs {
        tasks.push(one_task(&mut c, "one").await?);
    }
    phases.next(format!(
        "1 supervisor, {} workers, {} rounds...",
        args.workers, args.rounds
    ));
    start_fleet(&mut c, "wide", &dir, args.workers, args.rounds).await?;
    let wide = one_task(&mut c, "wide").await?;
    phases.end();
    let _ = c.call(&ShutdownArgs {}).await;
    let _ = tokio::time::timeout(Duration::from_secs(60), daemon.wait()).await;
    let (turn, check, task) = (median_ms(turns), median_ms(checks), median_ms(tasks));
    let steps = args.workers * args.rounds;
    let per_sec = steps as f64 / wide.as_secs_f64().max(1e-6);
    Ok(FleetFigures {
        schema: "flotilla.bench.fleet.v1",
        lane_turn_p50_ms: turn,
        acceptance_p50_ms: check,
        task_p50_ms: task,
        overhead_per_dispatch_ms: (task - 3.0 * turn - 2.0 * check) / 3.0,
        workers: args.workers,
        steps,
        steps_per_sec: per_sec,
        ratio_to_serial_turns: per_sec * turn / 1000.0,
    })
}

pub(crate) fn print(f: &FleetFigures) -> Result<(), StdoutError> {
    outln!("flotilla bench fleet")?;
    outln!(
        "bare exec lane turn, p50                 {:>8.2} ms",
        f.lane_turn_p50_ms
    )?;
    outln!(
        "acceptance of one artifact, p50          {:>8.2} ms",
        f.acceptance_p50_ms
    )?;
    outln!(
        "one-step task (3 turns, 2 judgements)    {:>8.2} ms",
        f.task_p50_ms
    )?;
    outln!(
        "daemon overhead per dispatch             {:>8.2} ms ({:.2}× a lane turn)",
        f.overhead_per_dispatch_ms,
        f.overhead_per_dispatch_ms / f.lane_turn_p50_ms.max(1e-6)
    )?;
    outln!(
        "1 supervisor + {} workers: {} steps      {:>8.1} steps/s ({:.1}× serial lane turns)",
        f.workers,
        f.steps,
        f.steps_per_sec,
        f.ratio_to_serial_turns
    )?;
    Ok(())
}
