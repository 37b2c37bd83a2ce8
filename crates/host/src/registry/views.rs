//! The registry's views of peers: `peers` (what one peer may see of the
//! others, with the groups they share) and `roster` (every peer with its
//! state, for the operator). Reads only; registration is the registry's.

use flotilla_actors::model::{PeerRecord, Timestamp};
use flotilla_actors::protocol::{
    ControlError, PeerView, PeersArgs, PeersReply, RosterPeer, RosterReply,
};

use super::{ACTIVE_WINDOW, RegistryState, store_error};

impl RegistryState {
    pub(super) fn peers(&mut self, args: PeersArgs) -> Result<PeersReply, ControlError> {
        let viewer = self.lookup(&args.as_peer)?;
        self.touch(viewer.id.clone());
        let directory = self.ctx.directory();
        let peers = directory
            .visible_to(&viewer)
            .map(|p| self.view(p, Some(&viewer)))
            .collect();
        Ok(PeersReply {
            schema: "flotilla.peers.v1".into(),
            viewer: viewer.id,
            peers,
        })
    }

    pub(super) fn roster(&self, all: bool) -> Result<RosterReply, ControlError> {
        let depths = self.ctx.store.inbox_depths().map_err(store_error)?;
        let directory = self.ctx.directory();
        let peers = directory
            .iter()
            .filter(|p| all || self.ctx.is_local(&p.id))
            .map(|p| {
                let view = self.view(p, None);
                RosterPeer {
                    inbox_depth: depths.get(&p.id.to_string()).copied().unwrap_or(0),
                    id: view.id,
                    product: view.product,
                    kind: view.kind,
                    groups: view.groups,
                    state: view.state,
                    last_seen: view.last_seen,
                    delivery: view.delivery,
                }
            })
            .collect();
        Ok(RosterReply {
            schema: "flotilla.roster.v1".into(),
            host: self.ctx.host.clone(),
            generated_at: Timestamp::now(),
            peers,
            lanes: Vec::new(),
        })
    }

    /// A peer as shown; with a viewer, only the groups they share.
    pub(crate) fn view(&self, p: &PeerRecord, viewer: Option<&PeerRecord>) -> PeerView {
        let last_seen = self.last_seen.get(&p.id).copied();
        let active = last_seen.is_some_and(|t| t.until(Timestamp::now()) < ACTIVE_WINDOW);
        PeerView {
            id: p.id.clone(),
            kind: p.kind,
            product: p.product.clone(),
            groups: p
                .memberships()
                .filter(|g| viewer.is_none_or(|v| v.is_member(g)))
                .collect(),
            state: if !self.ctx.is_local(&p.id) {
                let online = self
                    .ctx
                    .remote
                    .read()
                    .is_ok_and(|r| r.get(&p.id).is_some_and(|r| r.online));
                if online { "online" } else { "offline" }
            } else if self.ctx.is_waiting(&p.id) {
                "waiting"
            } else if active {
                "active"
            } else {
                "idle"
            }
            .into(),
            last_seen,
            delivery: self
                .ctx
                .is_local(&p.id)
                .then(|| self.sessions.get(&p.id.name))
                .flatten()
                .map(|s| s.delivery.clone()),
        }
    }
}
