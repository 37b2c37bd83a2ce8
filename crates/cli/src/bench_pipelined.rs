//! The parts of `bench local` about the hot path (issue 11): one sender
//! in pipelined mode (`send --batch`), and where one sender's message
//! spends its time, from the store writer's counters in `host.status`.
//! Must not start or stop daemons (`bench local` does).

use std::time::{Duration, Instant};

use anyhow::Result;
use flotilla_actors::protocol::HostStatusArgs;
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use serde::Serialize;

use crate::bench_daemon::send_args;

/// Where a message's time goes with one sender, one at a time: the
/// store's writer measures how long it applies writes and commits them.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub(crate) struct Stages {
    /// Wall time per message (1 / throughput).
    pub(crate) per_message_us: f64,
    /// Store commits per message (each holds every write waiting).
    pub(crate) commits_per_message: f64,
    /// Writes applied per message.
    pub(crate) writes_per_message: f64,
    /// Time per message applying writes in the store's writer.
    pub(crate) apply_us: f64,
    /// Time per message committing (pages and fsync).
    pub(crate) sync_us: f64,
    /// The rest: the socket both ways, JSON, the router, the hand-offs
    /// between tasks and threads.
    pub(crate) other_us: f64,
}

/// The store writer's counters from `host.status`.
pub(crate) async fn writer_counters(admin: &mut ControlClient) -> Result<[u64; 4]> {
    let m = admin.call(&HostStatusArgs {}).await?.messages;
    Ok([
        m.commits_since_start,
        m.writes_since_start,
        m.commit_apply_us,
        m.commit_sync_us,
    ])
}

/// Requests in flight for the pipelined throughput run.
pub(crate) const PIPELINED_WINDOW: usize = 256;
/// The pipelined run sends this many times the other runs' messages (it
/// is that much faster).
pub(crate) const PIPELINED_SCALE: usize = 5;

/// Messages per second from one sender on one connection in pipelined
/// mode (`send --batch`), each acknowledged once on disk.
pub(crate) async fn pipelined(home: &Home, total: usize, to: &str) -> Result<f64> {
    let ops = (0..total)
        .map(|i| send_args("s0", to, i))
        .collect::<Result<Vec<_>>>()?;
    let start = Instant::now();
    let answers = flotilla_host::client::call_pipelined(
        home,
        &ops,
        PIPELINED_WINDOW,
        Duration::from_secs(30),
        |_| {},
    )
    .await
    .map_err(|unfinished| unfinished.error)?;
    let elapsed = start.elapsed();
    if let Some(Err(e)) = answers.iter().find(|a| a.is_err()) {
        anyhow::bail!("a pipelined send was refused: {e}");
    }
    Ok(total as f64 / elapsed.as_secs_f64())
}
