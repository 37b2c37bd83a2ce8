//! The arguments of `bench local|lanes|federation`.

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub(crate) enum BenchCommand {
    /// One host: send-to-inbox latency, throughput, memory, against a bare redb commit.
    Local(BenchLocalArgs),
    /// Lanes: the cost of `lane run --cli exec -- true` over `true`, and memory with idle lanes.
    Lanes(BenchLanesArgs),
    /// Federation: cross-host messaging through a real hub and the hub with many simulated hosts, against a bare QUIC echo.
    Federation(BenchFederationArgs),
    /// Fleets: the daemon's overhead per dispatch and per acceptance next to a bare lane turn, and a 1 + 8 exec fleet's dispatch throughput.
    Fleet(BenchFleetArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BenchFleetArgs {
    /// Runs for the timing figures.
    #[arg(long, default_value_t = 20)]
    pub(crate) runs: usize,
    /// Workers in the throughput fleet.
    #[arg(long, default_value_t = 8)]
    pub(crate) workers: usize,
    /// Rounds in the throughput fleet (each dispatches one step per worker).
    #[arg(long, default_value_t = 10)]
    pub(crate) rounds: usize,
}

#[derive(Debug, Args)]
pub(crate) struct BenchFederationArgs {
    /// Messages for the cross-host throughput run (at most 300 of them also time the latency).
    #[arg(long, default_value_t = 2000)]
    pub(crate) messages: usize,
    /// Simulated hosts linked to the hub.
    #[arg(long, default_value_t = 200)]
    pub(crate) hosts: usize,
    /// Peers on each simulated host.
    #[arg(long, default_value_t = 10)]
    pub(crate) peers_per_host: usize,
}

#[derive(Debug, Args)]
pub(crate) struct BenchLanesArgs {
    /// Runs for the timing figures.
    #[arg(long, default_value_t = 30)]
    pub(crate) runs: usize,
    /// Idle lanes for the memory figure.
    #[arg(long, default_value_t = 100)]
    pub(crate) idle_lanes: usize,
}

#[derive(Debug, Args)]
pub(crate) struct BenchLocalArgs {
    /// Messages for the latency run.
    #[arg(long, default_value_t = 500)]
    pub(crate) latency_messages: usize,
    /// Messages per throughput run.
    #[arg(long, default_value_t = 4000)]
    pub(crate) throughput_messages: usize,
    /// Messages queued for the memory figure.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) queued_messages: usize,
}
