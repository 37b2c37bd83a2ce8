//! The `Registry` actor: the peers of this host and their groups.
//!
//! It owns registration (join, leave, rename), the views of peers (`peers`,
//! `roster`) and last-seen times. After every change it publishes a fresh
//! [`Directory`] into the shared context, rebuilt from the store, so the
//! router always decides with what is on disk. On (re)start it reloads
//! everything from the store. It must not touch inboxes (the router's).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::directory::Directory;
use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{NameError, PeerId, PeerName};
use flotilla_actors::protocol::{
    ControlError, ErrorCode, PeerJoinArgs, PeerLeaveArgs, PeerLeaveReply, PeerRenameArgs, PeerView,
    PeersArgs, PeersReply, RosterReply, SessionEvidence,
};
use flotilla_actors::store::StoreError;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::context::HostContext;

mod views;

/// A peer counts as `active` when seen this recently.
const ACTIVE_WINDOW: Duration = Duration::from_secs(300);

type Reply<T> = RpcReplyPort<Result<T, ControlError>>;

/// Messages of the registry.
#[derive(Debug)]
pub enum RegistryMsg {
    /// Register or extend a mailbox peer.
    Join(PeerJoinArgs, Reply<PeerView>),
    /// Remove a peer.
    Leave(PeerLeaveArgs, Reply<PeerLeaveReply>),
    /// Rename a peer.
    Rename(PeerRenameArgs, Reply<PeerView>),
    /// The peers one peer can see.
    Peers(PeersArgs, Reply<PeersReply>),
    /// Every peer of this host, for the operator; with `true`, also the
    /// remote peers it may see.
    Roster(bool, Reply<RosterReply>),
    /// A peer made a request.
    Touch(PeerId),
    /// Write last-seen times to the store.
    Flush,
    /// A new lane's peer was stored with its first turn: publish the
    /// directory again (before its command runs) and mark it seen.
    LanePeerStored(PeerId, RpcReplyPort<()>),
    /// The remote peers changed: publish the directory again.
    Republish,
    /// A lane's peer was removed from the store with its lane: forget it
    /// and publish the directory again.
    Forget(PeerId, RpcReplyPort<()>),
    /// Check that every session peer's process still runs.
    CheckSessions,
    /// Liveness check from the watchdog.
    Ping(RpcReplyPort<()>),
    /// Test hook: fail now.
    Fail,
}

/// A handle on the registry.
pub type RegistryRef = ActorRef<RegistryMsg>;

/// The registry actor.
#[derive(Debug)]
pub struct Registry;

/// The registry's state.
#[derive(Debug)]
pub struct RegistryState {
    pub(crate) ctx: Arc<HostContext>,
    last_seen: BTreeMap<PeerId, Timestamp>,
    dirty: bool,
    /// The processes of session peers ([`crate::sessions`]).
    pub(crate) sessions: BTreeMap<PeerName, SessionEvidence>,
}

impl Actor for Registry {
    type Msg = RegistryMsg;
    type State = RegistryState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        myself: RegistryRef,
        ctx: Arc<HostContext>,
    ) -> Result<RegistryState, ActorProcessingErr> {
        let last_seen = ctx.store.load_last_seen()?;
        let sessions = crate::sessions::load(&ctx.home.state_dir);
        let state = RegistryState {
            ctx,
            last_seen,
            dirty: false,
            sessions,
        };
        state.publish()?;
        myself.send_interval(crate::sessions::CHECK_EVERY, || RegistryMsg::CheckSessions);
        Ok(state)
    }

    async fn post_stop(
        &self,
        _: RegistryRef,
        state: &mut RegistryState,
    ) -> Result<(), ActorProcessingErr> {
        state.flush().await;
        Ok(())
    }

    async fn handle(
        &self,
        _myself: RegistryRef,
        msg: RegistryMsg,
        state: &mut RegistryState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RegistryMsg::Join(args, reply) => send(reply, state.join(args).await),
            RegistryMsg::Leave(args, reply) => send(reply, state.leave(args).await),
            RegistryMsg::Rename(args, reply) => send(reply, state.rename(args).await),
            RegistryMsg::Peers(args, reply) => send(reply, state.peers(args)),
            RegistryMsg::Roster(all, reply) => send(reply, state.roster(all)),
            RegistryMsg::Touch(id) => state.touch(id),
            RegistryMsg::Flush => state.flush().await,
            RegistryMsg::LanePeerStored(id, reply) => {
                if let Err(e) = state.publish() {
                    tracing::warn!(error = %e, "could not publish the directory");
                }
                state.touch(id);
                send(reply, ());
            }
            RegistryMsg::Republish => {
                if let Err(e) = state.publish() {
                    tracing::warn!(error = %e, "could not publish the directory");
                }
            }
            RegistryMsg::Forget(id, reply) => {
                state.last_seen.remove(&id);
                if let Err(e) = state.publish() {
                    tracing::warn!(error = %e, "could not publish the directory");
                }
                send(reply, ());
            }
            RegistryMsg::CheckSessions => state.check_sessions().await,
            RegistryMsg::Ping(reply) => send(reply, ()),
            RegistryMsg::Fail => panic!("registry failed on request (test hook)"),
        }
        Ok(())
    }
}

fn send<T>(reply: RpcReplyPort<T>, value: T) {
    // The caller may have gone; nothing to do then.
    let _ = reply.send(value);
}

/// Maps a store failure to a control error.
pub(crate) fn store_error(e: StoreError) -> ControlError {
    match e {
        StoreError::Rejected(m) => ControlError::new(ErrorCode::Conflict, m),
        StoreError::OutboxFull(m) => ControlError::new(ErrorCode::Unavailable, m),
        StoreError::WriteFailed(m) => ControlError::internal(m),
        other => ControlError::internal(other.to_string()),
    }
}

impl RegistryState {
    /// Publishes this host's peers (from the store) with the remote peers
    /// the hub announced.
    fn publish(&self) -> Result<(), StoreError> {
        let peers = self.ctx.store.load_peers()?;
        let remote = self.ctx.remote_peers().into_values().map(|p| p.record);
        self.ctx
            .directory
            .send_replace(Arc::new(Directory::new(peers.into_iter().chain(remote))));
        Ok(())
    }

    fn republish(&self) -> Result<(), ControlError> {
        self.publish().map_err(store_error)
    }

    pub(crate) fn local_id(&self, name: &PeerName) -> PeerId {
        PeerId::new(self.ctx.host.clone(), name.clone())
    }

    fn lookup(&self, name: &PeerName) -> Result<PeerRecord, ControlError> {
        let id = self.local_id(name);
        self.ctx
            .directory()
            .get(&id)
            .cloned()
            .ok_or_else(|| not_registered(&id))
    }

    async fn join(&mut self, args: PeerJoinArgs) -> Result<PeerView, ControlError> {
        if let Some(g) = args.groups.iter().find(|g| g.is_session()) {
            return Err(NameError::ReservedGroup(g.to_string()).into());
        }
        let id = self.local_id(&args.name);
        if let Some(evidence) = args.session.clone() {
            return self.join_session(args, evidence).await;
        }
        let record = match self.ctx.directory().get(&id).cloned() {
            Some(mut existing) if existing.kind == PeerKind::Mailbox => {
                existing.groups.extend(args.groups);
                existing.product = args.product.or(existing.product);
                existing
            }
            Some(existing) => {
                return Err(ControlError::new(
                    ErrorCode::AlreadyExists,
                    format!("{id} is already registered as a {}", existing.kind),
                )
                .with_hint("pick another name"));
            }
            None => PeerRecord {
                id: id.clone(),
                kind: PeerKind::Mailbox,
                product: args.product,
                groups: args.groups.into_iter().collect(),
                joined_at: Timestamp::now(),
            },
        };
        self.put_peer(record).await
    }

    /// Stores a peer and publishes the directory.
    pub(crate) async fn put_peer(&mut self, record: PeerRecord) -> Result<PeerView, ControlError> {
        let id = record.id.clone();
        self.ctx
            .commit
            .put_peer(record.clone())
            .await
            .map_err(store_error)?;
        self.republish()?;
        self.touch(id);
        Ok(self.view(&record, None))
    }

    pub(crate) async fn leave(
        &mut self,
        args: PeerLeaveArgs,
    ) -> Result<PeerLeaveReply, ControlError> {
        let record = self.lookup(&args.name)?;
        let dropped = self
            .ctx
            .commit
            .remove_peer(record.id.clone(), args.force)
            .await
            .map_err(|e| match e {
                StoreError::Rejected(m) if m.contains("unread") => {
                    ControlError::new(ErrorCode::Conflict, m).with_hint(format!(
                        "read them with `flotilla inbox --as {}`, or pass --force to drop them",
                        args.name
                    ))
                }
                other => store_error(other),
            })?;
        self.last_seen.remove(&record.id);
        if self.sessions.remove(&args.name).is_some() {
            crate::sessions::forget(&self.ctx.home.state_dir, &args.name);
        }
        self.republish()?;
        if let Some(lanes) = self.ctx.children.lanes() {
            let _ = lanes.cast(crate::lanes::LaneSupervisorMsg::OwnerLeft(
                record.id.clone(),
            ));
        }
        Ok(PeerLeaveReply {
            id: record.id,
            dropped_unread: dropped,
        })
    }

    async fn rename(&mut self, args: PeerRenameArgs) -> Result<PeerView, ControlError> {
        let record = self.lookup(&args.old)?;
        let new_id = self.local_id(&args.new);
        if self.ctx.directory().get(&new_id).is_some() {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("{new_id} already exists"),
            )
            .with_hint("pick another name, or make the other peer leave first"));
        }
        let renamed = self
            .ctx
            .commit
            .rename_peer(record.id.clone(), new_id.clone())
            .await
            .map_err(store_error)?;
        if let Some(seen) = self.last_seen.remove(&record.id) {
            self.last_seen.insert(new_id, seen);
        }
        self.move_session(&args.old, &args.new);
        self.republish()?;
        Ok(self.view(&renamed, None))
    }

    pub(crate) fn touch(&mut self, id: PeerId) {
        self.last_seen.insert(id, Timestamp::now());
        self.dirty = true;
    }

    async fn flush(&mut self) {
        if !self.dirty {
            return;
        }
        let seen: Vec<_> = self
            .last_seen
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        match self.ctx.commit.touch(seen).await {
            Ok(()) => self.dirty = false,
            Err(e) => tracing::warn!(error = %e, "could not record last-seen times"),
        }
    }
}

/// The error for a name that is not a peer of this host.
pub(crate) fn not_registered(id: &PeerId) -> ControlError {
    ControlError::new(
        ErrorCode::NotFound,
        format!("{id} is not a peer of this host"),
    )
    .with_hint(format!("register it first: flotilla peer join {}", id.name))
}
