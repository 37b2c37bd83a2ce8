//! Cross-host messaging through a real hub: `hub run` and two `host run`
//! daemons, peer `a` (and a few senders) on the first host, `b` on the
//! second, all in group `bench`. Latency is one message at a time, from the
//! send call on the first host to `b`'s waiting inbox read on the second
//! returning it; throughput is many sends from concurrent senders, timed
//! until the last one is in `b`'s inbox.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use flotilla_actors::names::{GroupName, PeerName};
use flotilla_actors::protocol::{
    InboxAckArgs, InboxFetchArgs, PeerJoinArgs, PeersArgs, ShutdownArgs,
};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use serde::Serialize;

use super::echo::EchoFigures;
use super::{PATIENCE, start_host, start_hub, stop_hub};
use crate::bench::percentile;
use crate::bench_daemon::{send_args, timed_sends};
use crate::output::StdoutError;

/// Concurrent senders in the throughput run (fewer if fewer messages).
const SENDERS: usize = 4;
/// At most this many messages are timed one at a time.
const MAX_LATENCY_MESSAGES: usize = 300;

/// Cross-host figures, with ratios to the echo floor.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct CrossFigures {
    pub(crate) latency_messages: usize,
    pub(crate) latency_p50_us: f64,
    pub(crate) latency_p99_us: f64,
    /// From the send call until the sender was answered (after its host's
    /// sync and the hub's verdict), p50.
    pub(crate) answered_p50_us: f64,
    /// Over the echo's round trip p50.
    pub(crate) latency_p50_ratio: f64,
    /// Over the echo's round trip p99.
    pub(crate) latency_p99_ratio: f64,
    pub(crate) messages: usize,
    pub(crate) senders: usize,
    pub(crate) per_sec: f64,
    /// CPU time per message of each process during the run with
    /// `senders` senders.
    pub(crate) senders_cpu_us: CpuPerMessage,
    /// The most messages per second this machine's cores could carry at
    /// that CPU time per message, every core busy with nothing else: what
    /// the senders' run can reach at best here.
    pub(crate) senders_cpu_ceiling_per_sec: f64,
    /// Messages per second over the echo's frames per second.
    pub(crate) throughput_ratio: f64,
    /// Messages per second from one sender in pipelined mode
    /// (`send --batch`), until the last is in `b`'s inbox.
    pub(crate) pipelined_messages: usize,
    pub(crate) pipelined_per_sec: f64,
    /// CPU time per message of each process during the pipelined run.
    pub(crate) pipelined_cpu_us: CpuPerMessage,
}

/// CPU time (user and system) per message, by process: where a message's
/// work is done.
#[derive(Debug, Default, Clone, Copy, Serialize, schemars::JsonSchema)]
pub(crate) struct CpuPerMessage {
    /// The sending host's daemon.
    pub(crate) sender_host: f64,
    /// The hub.
    pub(crate) hub: f64,
    /// The receiving host's daemon.
    pub(crate) receiver_host: f64,
    /// This benchmark (the sending client and the reader).
    pub(crate) clients: f64,
}

impl std::fmt::Display for CpuPerMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.0} + {:.0} + {:.0} + {:.0} µs",
            self.sender_host, self.hub, self.receiver_host, self.clients
        )
    }
}

impl CpuPerMessage {
    fn total(&self) -> f64 {
        self.sender_host + self.hub + self.receiver_host + self.clients
    }

    /// Messages per second the machine's cores could carry at this CPU
    /// time per message.
    fn ceiling_per_sec(&self) -> f64 {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        cores as f64 * 1e6 / self.total().max(1e-3)
    }
}

/// The CPU time the benchmark's processes (the sending host, the hub, the
/// receiving host, this process) used since it started.
struct CpuMeter {
    pids: [u32; 4],
    before: [f64; 4],
}

impl CpuMeter {
    fn start(pids: [u32; 4]) -> Self {
        Self {
            pids,
            before: pids.map(super::scale::cpu_ms),
        }
    }

    fn per_message(&self, messages: usize) -> CpuPerMessage {
        let used = |i: usize| {
            (super::scale::cpu_ms(self.pids[i]) - self.before[i]) * 1e3 / messages.max(1) as f64
        };
        CpuPerMessage {
            sender_host: used(0),
            hub: used(1),
            receiver_host: used(2),
            clients: used(3),
        }
    }
}

impl CrossFigures {
    pub(crate) fn with_floor(mut self, echo: &EchoFigures) -> Self {
        self.latency_p50_ratio = self.latency_p50_us / echo.rtt_p50_us.max(1e-3);
        self.latency_p99_ratio = self.latency_p99_us / echo.rtt_p99_us.max(1e-3);
        self.throughput_ratio = self.per_sec / echo.per_sec.max(1e-3);
        self
    }
}

pub(crate) async fn measure(
    hub: &Home,
    hosts: [&Home; 2],
    messages: usize,
) -> Result<CrossFigures> {
    let [first, second] = hosts;
    let (hub_process, hub_pid) = start_hub(hub).await?;
    let (mut d1, mut c1) = start_host(first, "host1").await?;
    let (mut d2, mut c2) = start_host(second, "host2").await?;
    let senders = SENDERS.min(messages).max(1);
    let group = GroupName::explicit("bench")?;
    let names = (0..senders).map(|i| format!("s{i}"));
    for name in std::iter::once("a".to_owned()).chain(names) {
        join(&mut c1, &name, &group).await?;
    }
    join(&mut c2, "b", &group).await?;
    wait_visible(&mut c1, "a", "host2/b").await?;
    let latency_messages = messages.min(MAX_LATENCY_MESSAGES);
    let mut phases = crate::progress::Phases::default();
    phases.next(format!(
        "cross-host latency: {latency_messages} messages, one at a time..."
    ));
    let times = timed_sends(first, "a", second, "b", "host2/b", latency_messages).await?;
    phases.next(format!(
        "cross-host throughput: {messages} messages from {senders} sender(s)..."
    ));
    let pids = [d1.id(), Some(hub_pid), d2.id(), Some(std::process::id())].map(|p| p.unwrap_or(0));
    let cpu = CpuMeter::start(pids);
    let per_sec = flood(first, second, Sending::Senders(senders), messages).await?;
    let senders_cpu_us = cpu.per_message(messages / senders * senders);
    let pipelined_messages = messages * PIPELINED_SCALE;
    phases.next(format!(
        "cross-host throughput: {pipelined_messages} messages from 1 pipelining sender..."
    ));
    let cpu = CpuMeter::start(pids);
    let pipelined_per_sec = flood(first, second, Sending::Pipelined, pipelined_messages).await?;
    let pipelined_cpu_us = cpu.per_message(pipelined_messages);
    phases.end();
    for (c, d) in [(&mut c1, &mut d1), (&mut c2, &mut d2)] {
        let _ = c.call(&ShutdownArgs {}).await;
        let _ = tokio::time::timeout(PATIENCE, d.wait()).await;
    }
    stop_hub(hub_process, hub_pid).await?;
    Ok(CrossFigures {
        latency_messages,
        latency_p50_us: percentile(&times.inbox, 0.5),
        latency_p99_us: percentile(&times.inbox, 0.99),
        answered_p50_us: percentile(&times.answered, 0.5),
        latency_p50_ratio: 0.0,
        latency_p99_ratio: 0.0,
        messages: messages / senders * senders,
        senders,
        per_sec,
        senders_cpu_us,
        senders_cpu_ceiling_per_sec: senders_cpu_us.ceiling_per_sec(),
        throughput_ratio: 0.0,
        pipelined_messages,
        pipelined_per_sec,
        pipelined_cpu_us,
    })
}

async fn join(c: &mut ControlClient, name: &str, group: &GroupName) -> Result<()> {
    c.call(&PeerJoinArgs {
        name: PeerName::new(name)?,
        groups: vec![group.clone()],
        product: None,
        session: None,
    })
    .await?;
    Ok(())
}

/// Waits until `viewer` sees `peer` (the hub has passed the roster on).
async fn wait_visible(c: &mut ControlClient, viewer: &str, peer: &str) -> Result<()> {
    let deadline = Instant::now() + PATIENCE;
    let as_peer = PeerName::new(viewer)?;
    loop {
        let seen = c
            .call(&PeersArgs {
                as_peer: as_peer.clone(),
            })
            .await?;
        if seen.peers.iter().any(|p| p.id.to_string() == peer) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{viewer} never saw {peer}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How the flood sends.
#[derive(Debug, Clone, Copy)]
enum Sending {
    /// This many connections, one message at a time each.
    Senders(usize),
    /// One connection in pipelined mode.
    Pipelined,
}

/// The pipelined run sends this many times the other run's messages.
const PIPELINED_SCALE: usize = 5;

/// Messages per second from the first host until the last is in `b`'s
/// inbox on the second.
async fn flood(first: &Home, second: &Home, sending: Sending, total: usize) -> Result<f64> {
    let senders = match sending {
        Sending::Senders(n) => n,
        Sending::Pipelined => 1,
    };
    let per = total / senders;
    let expected = per * senders;
    let mut reader = ControlClient::connect(second).await?;
    let start = Instant::now();
    let reading = tokio::spawn(async move {
        let b = PeerName::new("b")?;
        let mut got = 0;
        while got < expected {
            let fetch = InboxFetchArgs {
                as_peer: b.clone(),
                wait_ms: 10_000,
                limit: Some(500),
            };
            let batch = reader.call(&fetch).await?;
            if batch.messages.is_empty() {
                bail!("only {got} of {expected} messages reached host2/b");
            }
            got += batch.messages.len();
            let ids = batch.messages.iter().map(|m| m.id.clone()).collect();
            reader
                .call(&InboxAckArgs {
                    as_peer: b.clone(),
                    ids,
                })
                .await?;
        }
        anyhow::Ok(())
    });
    match sending {
        Sending::Pipelined => {
            crate::bench_pipelined::pipelined(first, expected, "host2/b").await?;
        }
        Sending::Senders(senders) => {
            let mut tasks = Vec::new();
            for s in 0..senders {
                let first = first.clone();
                tasks.push(tokio::spawn(async move {
                    let mut c = ControlClient::connect(&first).await?;
                    let from = format!("s{s}");
                    for i in 0..per {
                        c.call(&send_args(&from, "host2/b", i)?).await?;
                    }
                    anyhow::Ok(())
                }));
            }
            for task in tasks {
                task.await??;
            }
        }
    }
    reading.await??;
    Ok(expected as f64 / start.elapsed().as_secs_f64())
}

pub(crate) fn print(f: &CrossFigures) -> Result<(), StdoutError> {
    use super::row;
    row(
        "cross-host send→inbox latency p50",
        format!("{:.0} µs", f.latency_p50_us),
        format!("({:.1}× echo p50)", f.latency_p50_ratio),
    )?;
    row(
        "cross-host send→inbox latency p99",
        format!("{:.0} µs", f.latency_p99_us),
        format!("({:.1}× echo p99)", f.latency_p99_ratio),
    )?;
    row(
        "cross-host send answered (hub's verdict) p50",
        format!("{:.0} µs", f.answered_p50_us),
        String::new(),
    )?;
    row(
        &format!("cross-host throughput, {} senders", f.senders),
        format!("{:.0} msg/s", f.per_sec),
        format!("({:.3}× echo rate)", f.throughput_ratio),
    )?;
    row(
        "… CPU per message: sender, hub, receiver, clients",
        f.senders_cpu_us.to_string(),
        format!(
            "(at most {:.0} msg/s on these cores)",
            f.senders_cpu_ceiling_per_sec
        ),
    )?;
    row(
        "cross-host throughput, 1 pipelining sender",
        format!("{:.0} msg/s", f.pipelined_per_sec),
        String::new(),
    )?;
    row(
        "… CPU per message: sender, hub, receiver, clients",
        f.pipelined_cpu_us.to_string(),
        String::new(),
    )?;
    Ok(())
}
