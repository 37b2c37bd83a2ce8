//! The hub at scale: a fresh `hub run` with many simulated hosts
//! ([`super::sim`]). Measures the time to link them all and until the hub's
//! roster holds every peer, the hub's resident memory idle and with all of
//! them linked, `flotilla hub roster --json` with one host and with all,
//! and, after a SIGTERM and a new `hub run`, the time until every host has
//! its `HelloAck` again and until the roster is whole again.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use flotilla_host::home::Home;
use flotilla_host::hub_server;
use flotilla_hub::setup::CertPaths;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::sim::{self, GROUPS, Linked};
use super::{flotilla, hub_home, row, start_hub, stop_hub};
use crate::bench::rss_kib;
use crate::output::{StdoutError, outln};

/// Runs of `hub roster --json` per figure (the median is kept).
const ROSTER_RUNS: usize = 5;
/// Longest wait for every host to link or for the roster to be whole
/// (the hub's roster work grows faster than the number of hosts).
const SCALE_PATIENCE: Duration = Duration::from_secs(600);

/// Hub-scale figures.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct ScaleFigures {
    pub(crate) hosts: usize,
    pub(crate) peers_per_host: usize,
    pub(crate) groups: usize,
    /// Issuing every simulated host's certificate (not in the link time).
    pub(crate) issue_ms: f64,
    /// From dialling the hosts other than the first (linked before, for
    /// the one-host roster) until every one has its `HelloAck`.
    pub(crate) link_all_ms: f64,
    /// From dialling until the hub's roster holds every peer, online.
    pub(crate) roster_whole_ms: f64,
    /// CPU time the hub process used over `roster_whole_ms`.
    pub(crate) hub_cpu_whole_ms: f64,
    pub(crate) hub_rss_idle_kib: u64,
    pub(crate) hub_rss_linked_kib: u64,
    pub(crate) hub_rss_linked_ratio: f64,
    /// Added resident memory per linked host.
    pub(crate) rss_per_host_kib: f64,
    /// `flotilla hub roster --json`, the whole command, with one host.
    pub(crate) roster_one_host_ms: f64,
    /// The same with every host linked.
    pub(crate) roster_all_ms: f64,
    pub(crate) roster_ratio: f64,
    /// Size of the roster's JSON with every host.
    pub(crate) roster_all_bytes: usize,
    /// From the new `hub run` until every host has its `HelloAck` again.
    pub(crate) reconnect_all_ms: f64,
    /// From the new `hub run` until the roster is whole again.
    pub(crate) reconnect_roster_whole_ms: f64,
    /// CPU time the new hub process used until then.
    pub(crate) hub_cpu_reconnect_ms: f64,
}

pub(crate) async fn measure(dir: &Path, hosts: usize, peers: usize) -> Result<ScaleFigures> {
    let hosts = hosts.max(1);
    let (hub, addr) = hub_home(dir, "hub-scale")?;
    let (process, pid) = start_hub(&hub).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_idle = rss_kib(pid);
    let mut phases = crate::progress::Phases::default();
    phases.next(format!("hub scale: issuing {hosts} host certificates..."));
    let started = Instant::now();
    let mut sims = sim::issue(
        &CertPaths::new(&hub.certs_dir),
        &dir.join("sims"),
        addr,
        hosts,
        peers,
    )?;
    let issue_ms = ms(started.elapsed());
    let mut tasks = JoinSet::new();
    let (tx, mut links) = mpsc::unbounded_channel();
    let rest = sims.split_off(1);
    for sim in sims {
        tasks.spawn(sim.run(tx.clone()));
    }
    wait_links(&mut links, 1, Instant::now()).await?;
    wait_whole(&hub, 1, peers).await?;
    let (roster_one, _) = roster_cli(&hub).await?;
    phases.next(format!(
        "hub scale: linking {hosts} simulated hosts with {peers} peers each..."
    ));
    let started = Instant::now();
    let cpu_before = cpu_ms(pid);
    for sim in rest {
        tasks.spawn(sim.run(tx.clone()));
    }
    let link_all = wait_links(&mut links, hosts - 1, started).await? - started;
    let whole = wait_whole(&hub, hosts, peers).await? - started;
    let cpu_whole = cpu_ms(pid) - cpu_before;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_linked = rss_kib(pid);
    let (roster_all, roster_bytes) = roster_cli(&hub).await?;
    phases.next("hub scale: restarting the hub...");
    stop_hub(process, pid).await?;
    let restarted = Instant::now();
    let (process, pid) = start_hub(&hub).await?;
    let back = wait_links(&mut links, hosts, restarted).await? - restarted;
    let whole_again = wait_whole(&hub, hosts, peers).await? - restarted;
    let cpu_again = cpu_ms(pid);
    phases.end();
    tasks.abort_all();
    stop_hub(process, pid).await?;
    Ok(ScaleFigures {
        hosts,
        peers_per_host: peers,
        groups: GROUPS.min(hosts * peers),
        issue_ms,
        link_all_ms: ms(link_all),
        roster_whole_ms: ms(whole),
        hub_cpu_whole_ms: cpu_whole,
        hub_rss_idle_kib: rss_idle,
        hub_rss_linked_kib: rss_linked,
        hub_rss_linked_ratio: rss_linked as f64 / rss_idle.max(1) as f64,
        rss_per_host_kib: rss_linked.saturating_sub(rss_idle) as f64 / hosts as f64,
        roster_one_host_ms: roster_one,
        roster_all_ms: roster_all,
        roster_ratio: roster_all / roster_one.max(1e-3),
        roster_all_bytes: roster_bytes,
        reconnect_all_ms: ms(back),
        reconnect_roster_whole_ms: ms(whole_again),
        hub_cpu_reconnect_ms: cpu_again,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// User and system CPU time of `pid` so far, in milliseconds (0 where
/// `/proc` is missing). Assumes 100 clock ticks a second, as on Linux.
pub(super) fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of stat(5); 11 and 12 after `)`.
    (ticks(11) + ticks(12)) as f64 * 10.0
}

/// Waits until `hosts` distinct hosts have linked since `since`; returns
/// the instant of the last one's `HelloAck` (`since` if none was awaited).
async fn wait_links(
    links: &mut mpsc::UnboundedReceiver<Linked>,
    hosts: usize,
    since: Instant,
) -> Result<Instant> {
    let mut latest: HashMap<usize, Instant> = HashMap::new();
    let deadline = tokio::time::Instant::now() + SCALE_PATIENCE;
    while latest.len() < hosts {
        let link = tokio::time::timeout_at(deadline, links.recv())
            .await
            .with_context(|| format!("only {} of {hosts} hosts linked", latest.len()))?
            .context("every simulated host stopped")?;
        if link.at >= since {
            latest.insert(link.host, link.at);
        }
    }
    Ok(latest.into_values().max().unwrap_or(since))
}

/// Waits until the hub's roster shows `hosts` hosts online with `peers`
/// peers each; returns when it first did. Polls every 100 ms: each
/// look costs the hub a whole roster view, and this process (which runs
/// the simulated hosts too) only reads what it counts.
async fn wait_whole(hub: &Home, hosts: usize, peers: usize) -> Result<Instant> {
    let deadline = Instant::now() + SCALE_PATIENCE;
    loop {
        if let Ok(roster) = hub_server::roster_as::<Wholeness>(hub).await {
            let whole = roster
                .hosts
                .iter()
                .filter(|h| h.state == "online" && h.peers.len() == peers)
                .count();
            if whole >= hosts {
                return Ok(Instant::now());
            }
        }
        if Instant::now() > deadline {
            bail!("the hub's roster never held all {hosts} hosts");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Of the hub's roster, what tells whether it is whole.
#[derive(serde::Deserialize)]
struct Wholeness {
    hosts: Vec<HostWholeness>,
}

/// Of a host in the roster, its state and how many peers it has (counted,
/// not read: `IgnoredAny` takes no room).
#[derive(serde::Deserialize)]
struct HostWholeness {
    state: String,
    peers: Vec<serde::de::IgnoredAny>,
}

/// Median time of `flotilla hub roster --json` (the whole command, as an
/// operator runs it) and the size of its output.
async fn roster_cli(hub: &Home) -> Result<(f64, usize)> {
    let mut times = Vec::with_capacity(ROSTER_RUNS);
    let mut bytes = 0;
    for _ in 0..ROSTER_RUNS {
        let started = Instant::now();
        let out = flotilla(hub)?
            .args(["--json", "hub", "roster"])
            .stdout(std::process::Stdio::piped())
            .output()
            .await?;
        times.push(started.elapsed());
        if !out.status.success() {
            bail!("`flotilla hub roster --json` failed");
        }
        bytes = out.stdout.len();
    }
    times.sort();
    Ok((ms(times[times.len() / 2]), bytes))
}

pub(crate) fn print(f: &ScaleFigures) -> Result<(), StdoutError> {
    let hosts = f.hosts;
    outln!(
        "hub scale: {hosts} simulated hosts × {} peers, {} groups",
        f.peers_per_host,
        f.groups
    )?;
    row(
        &format!("link all {hosts} hosts"),
        format!("{:.0} ms", f.link_all_ms),
        String::new(),
    )?;
    row(
        "… until the hub's roster is whole",
        format!("{:.0} ms", f.roster_whole_ms),
        String::new(),
    )?;
    row(
        "hub RSS idle",
        format!("{} KiB", f.hub_rss_idle_kib),
        String::new(),
    )?;
    row(
        &format!("hub RSS with {hosts} hosts"),
        format!("{} KiB", f.hub_rss_linked_kib),
        format!(
            "({:.2}× idle, {:.0} KiB/host)",
            f.hub_rss_linked_ratio, f.rss_per_host_kib
        ),
    )?;
    row(
        "`hub roster --json`, one host",
        format!("{:.1} ms", f.roster_one_host_ms),
        String::new(),
    )?;
    row(
        &format!("`hub roster --json`, {hosts} hosts"),
        format!("{:.1} ms", f.roster_all_ms),
        format!(
            "({:.2}× one host, {} KiB)",
            f.roster_ratio,
            f.roster_all_bytes / 1024
        ),
    )?;
    row(
        "hub restart: every host linked again",
        format!("{:.0} ms", f.reconnect_all_ms),
        String::new(),
    )?;
    row(
        "hub restart: roster whole again",
        format!("{:.0} ms", f.reconnect_roster_whole_ms),
        format!("(hub CPU {:.0} ms)", f.hub_cpu_reconnect_ms),
    )?;
    Ok(())
}
