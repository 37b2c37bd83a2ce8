//! `host.status`: the daemon's version, uptime, actors and counters, read
//! from the shared context without calling any actor (so it answers even
//! while one is restarting).

use std::sync::atomic::Ordering;

use flotilla_actors::model::Timestamp;
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
        peers: ctx
            .directory()
            .iter()
            .filter(|p| ctx.is_local(&p.id))
            .count() as u64,
        messages: MessageCounts {
            queued: ctx.store.queued().unwrap_or(0),
            accepted_since_start: ctx.commit.stats().accepted.load(Ordering::Relaxed),
            commits_since_start: ctx.commit.stats().commits.load(Ordering::Relaxed),
            writes_since_start: ctx.commit.stats().writes.load(Ordering::Relaxed),
            commit_apply_us: ctx.commit.stats().apply_us.load(Ordering::Relaxed),
            commit_sync_us: ctx.commit.stats().sync_us.load(Ordering::Relaxed),
        },
        hub_link: hub_link(ctx),
    }
}

/// The hub link's state: `None` without a hub, `disconnected` until the
/// link's actor has first reported.
fn hub_link(ctx: &HostContext) -> Option<flotilla_actors::protocol::HubLinkStatus> {
    let now = Timestamp::now();
    if let Some(tracker) = ctx.hub_link.read().ok().and_then(|t| t.clone()) {
        return Some(tracker.status(now));
    }
    let target = ctx.config.hub_target().ok().flatten()?;
    let (min, max) = ctx.config.hub_reconnect();
    let policy = crate::hub_link::ReconnectPolicy {
        min,
        max,
        startup: Vec::new(),
    };
    Some(crate::hub_link::LinkTracker::new(target.addr, target.name, policy, now).status(now))
}
