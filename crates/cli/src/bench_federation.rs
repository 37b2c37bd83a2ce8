//! `flotilla bench federation`: what the hub costs. Each figure is set
//! against a floor measured in the same run: a bare QUIC echo over loopback
//! with the hub's TLS and transport settings ([`echo`]). Then, with real
//! processes (a `hub run` and two `host run` daemons of this executable on
//! throwaway homes), cross-host send-to-inbox latency and throughput
//! ([`cross`]); then a fresh hub with many simulated hosts linked from this
//! process: time to link them all, the hub's memory, `hub roster` time and
//! the time until every host is back after a hub restart ([`scale`]).
//!
//! Everything listens on 127.0.0.1 only. The homes live in one temporary
//! directory, removed at the end; every child is killed when its handle is
//! dropped, so an error half-way leaves nothing running.

mod cross;
mod echo;
mod scale;
mod sim;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use flotilla_actors::names::HostName;
use flotilla_actors::protocol::{HostStatusArgs, HubLinkState};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use flotilla_host::hub_server;
use flotilla_hub::setup::{self, CertPaths};
use serde::Serialize;
use tokio::process::Child;

use crate::args::BenchFederationArgs;
use crate::bench::machine;
use crate::output::{StdoutError, outln};

/// The hub's name in every home of the benchmark.
const HUB_NAME: &str = "hub.bench";
/// Longest wait for anything to come up.
const PATIENCE: Duration = Duration::from_secs(60);

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct FederationFigures {
    schema: &'static str,
    machine: String,
    echo: echo::EchoFigures,
    cross_host: cross::CrossFigures,
    scale: scale::ScaleFigures,
}

pub(crate) async fn federation(args: &BenchFederationArgs) -> Result<FederationFigures> {
    let dir = tempfile::Builder::new()
        .prefix("flotilla-bench-fed-")
        .tempdir()?;
    let (hub, addr) = hub_home(dir.path(), "hub")?;
    let host1 = host_home(dir.path(), &hub, "host1", addr)?;
    let host2 = host_home(dir.path(), &hub, "host2", addr)?;
    let mut phases = crate::progress::Phases::default();
    phases.next("floor: bare QUIC echo over loopback...");
    let hub_certs = CertPaths::new(&hub.certs_dir);
    let host_certs = CertPaths::new(&host1.certs_dir);
    let echo = echo::measure(&hub_certs, &host_certs, HUB_NAME, 1000, 20_000).await?;
    phases.end();
    let cross = cross::measure(&hub, [&host1, &host2], args.messages).await?;
    let scale = scale::measure(dir.path(), args.hosts, args.peers_per_host).await?;
    Ok(FederationFigures {
        schema: "flotilla.bench.federation.v1",
        machine: machine(),
        cross_host: cross.with_floor(&echo),
        echo,
        scale,
    })
}

/// A UDP port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16> {
    Ok(UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A home under `dir` that ran `hub init` for [`HUB_NAME`] on free
/// loopback ports; returns it and the hub's address.
fn hub_home(dir: &Path, name: &str) -> Result<(Home, SocketAddr)> {
    let home = Home::at(dir.join(name));
    let main = format!("127.0.0.1:{}", free_port()?);
    let enroll = format!("127.0.0.1:{}", free_port()?);
    let listen = hub_server::Listen {
        main: &main,
        enroll: Some(&enroll),
    };
    let done = hub_server::init(&home, HUB_NAME, listen, &[], SystemTime::now())?;
    Ok((home, done.listen))
}

/// A host home under `dir` named `name`, holding its certificate issued at
/// `hub`'s CA and set to link to `addr` with fast reconnects.
fn host_home(dir: &Path, hub: &Home, name: &str, addr: SocketAddr) -> Result<Home> {
    let home = Home::at(dir.join(name));
    std::fs::create_dir_all(dir.join(name))?;
    let ca = CertPaths::new(&hub.certs_dir);
    setup::issue_host(
        &ca,
        &HostName::new(name)?,
        &home.certs_dir,
        SystemTime::now(),
    )?;
    let config = format!(
        "hub = \"{addr}\"\nhub_name = \"{HUB_NAME}\"\nhub_reconnect_min_ms = 20\n\
         hub_reconnect_max_ms = 200\nhub_ping_interval_ms = 1000\nhub_connect_timeout_ms = 1000\n\
         hub_startup_retry_ms = [50, 100, 200]\n"
    );
    std::fs::write(&home.config_file, config)?;
    Ok(home)
}

/// This executable with `--home` set, output discarded (the log kept as
/// [`crate::bench_daemon::daemon_stderr`] says), killed on drop.
fn flotilla(home: &Home) -> Result<tokio::process::Command> {
    let mut cmd = tokio::process::Command::new(std::env::current_exe()?);
    cmd.arg("--home")
        .arg(home.root.as_deref().context("home")?)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(crate::bench_daemon::daemon_stderr())
        .kill_on_drop(true);
    Ok(cmd)
}

/// Starts `hub run` on `home` and waits until its control socket answers;
/// returns the process and its pid.
async fn start_hub(home: &Home) -> Result<(Child, u32)> {
    let child = flotilla(home)?.args(["hub", "run"]).spawn()?;
    let pid = child.id().context("the hub exited at once")?;
    let deadline = Instant::now() + PATIENCE;
    while hub_server::roster(home).await.is_err() {
        if Instant::now() > deadline {
            bail!("the hub did not answer on its control socket");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok((child, pid))
}

/// Stops a hub with SIGTERM, as an operator would, and waits for it.
async fn stop_hub(mut child: Child, pid: u32) -> Result<()> {
    let pid = rustix::process::Pid::from_raw(pid as i32).context("pid")?;
    rustix::process::kill_process(pid, rustix::process::Signal::TERM)?;
    if tokio::time::timeout(PATIENCE, child.wait()).await.is_err() {
        child.kill().await?;
        bail!("the hub did not stop within {PATIENCE:?} of SIGTERM");
    }
    Ok(())
}

/// Starts `host run --name NAME` on `home` and waits until it is linked to
/// the hub; returns the process and a client.
async fn start_host(home: &Home, name: &str) -> Result<(Child, ControlClient)> {
    let child = flotilla(home)?
        .args(["host", "run", "--name", name])
        .spawn()?;
    let mut client = ControlClient::connect_patiently(home, Duration::from_secs(20)).await?;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let status = client.call(&HostStatusArgs {}).await?;
        if status.hub_link.map(|l| l.state) == Some(HubLinkState::Connected) {
            return Ok((child, client));
        }
        if Instant::now() > deadline {
            bail!("{name} did not link to the hub");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn row(what: &str, value: String, ratio: String) -> Result<(), StdoutError> {
    outln!("{what:<44} {value:>14}  {ratio}")?;
    Ok(())
}

pub(crate) fn print(f: &FederationFigures) -> Result<(), StdoutError> {
    outln!("flotilla bench federation — {}", f.machine)?;
    let e = &f.echo;
    row(
        "floor: QUIC echo round trip p50",
        format!("{:.0} µs", e.rtt_p50_us),
        String::new(),
    )?;
    row(
        "floor: QUIC echo round trip p99",
        format!("{:.0} µs", e.rtt_p99_us),
        String::new(),
    )?;
    row(
        &format!("floor: QUIC echo, {} in flight", e.window),
        format!("{:.0} msg/s", e.per_sec),
        String::new(),
    )?;
    cross::print(&f.cross_host)?;
    scale::print(&f.scale)?;
    Ok(())
}
