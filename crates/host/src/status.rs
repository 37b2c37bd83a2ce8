//! `host.status`: the daemon's version, uptime, actors and counters, read
//! from the shared context without calling any actor (so it answers even
//! while one is restarting).

use std::sync::atomic::Ordering;

use flotilla_actors::protocol::{HostStatusReply, MessageCounts, PROTOCOL_VERSION};

use crate::context::HostContext;

/// The daemon's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Builds the status reply.
pub fn host_status(ctx: &HostContext) -> HostStatusReply {
    let actors = ctx.actors.read().map(|a| a.clone()).unwrap_or_default();
    HostStatusReply {
        schema: "flotilla.host-status.v1".into(),
        version: VERSION.into(),
        protocol: PROTOCOL_VERSION,
        host: ctx.host.clone(),
        pid: std::process::id(),
        started_at: ctx.started_at,
        uptime_secs: ctx.started.elapsed().as_secs(),
        actors,
        peers: ctx.directory().len() as u64,
        messages: MessageCounts {
            queued: ctx.store.queued().unwrap_or(0),
            accepted_since_start: ctx.commit.stats().accepted.load(Ordering::Relaxed),
        },
    }
}
