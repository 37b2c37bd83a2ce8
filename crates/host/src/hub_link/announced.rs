//! What the hub announces about the peers of other hosts, as the link
//! hears it: applied to this host's view of them, saved for a restart,
//! and passed on to those who follow it (lanes placed by a peer that left,
//! the registry's published view). Must not write to the hub (the session
//! does) or decide who sees whom (the hub does).

use flotilla_actors::federation::RosterDelta;

use super::roster::apply_remote;
use crate::context::HostContext;
use crate::registry::RegistryMsg;

/// The hub announced `delta`.
pub(super) fn received(ctx: &HostContext, delta: RosterDelta) {
    keep_for_restart(ctx, &delta);
    let gone = match ctx.remote.write() {
        Ok(mut remote) => apply_remote(&ctx.host, &mut remote, delta),
        Err(_) => Vec::new(),
    };
    // A lane placed from another host follows its owner as a local one
    // does (a non-persistent lane is archived).
    if let Some(lanes) = ctx.children.lanes() {
        for owner in gone {
            let _ = lanes.cast(crate::lanes::LaneSupervisorMsg::OwnerLeft(owner));
        }
    }
    if let Some(registry) = ctx.children.registry() {
        let _ = registry.cast(RegistryMsg::Republish);
    }
}

/// Saves the hub's announcement of remote peers for a restart (small, not
/// waiting for the disk; here in the link's loop, so saves keep the
/// announcements' order). This host's own peers are not kept, as
/// [`apply_remote`] does not take them.
fn keep_for_restart(ctx: &HostContext, delta: &RosterDelta) {
    let upserts = delta
        .upserts
        .iter()
        .filter(|p| p.record.id.host != ctx.host);
    let save = || {
        ctx.store
            .save_remote_changes(delta.reset, upserts, &delta.removed)
    };
    let multi = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    let saved = if multi {
        tokio::task::block_in_place(save)
    } else {
        save()
    };
    if let Err(e) = saved {
        tracing::warn!("cannot save the remote peers: {e}");
    }
}
