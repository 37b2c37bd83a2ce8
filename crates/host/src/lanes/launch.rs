//! Starting a turn's process: the shim is spawned gated (it runs nothing
//! yet), its pid is stored with the turn's record and first events in one
//! commit, and only then does the connector give it its go. A daemon that
//! crashes before that commit leaves nothing running (the shim's go pipe
//! closes and it exits) and nothing on disk about the turn's process.
//! Only the lane actor calls this; it must not touch the turn's output.

use flotilla_actors::lane::events::EventKind;
use flotilla_actors::model::PeerRecord;
use flotilla_actors::store::StoreError;
use ractor::Actor;

use super::cli::{self, Outcome};
use super::connector::{Connector, ConnectorArgs, Launch, spawn_shim};
use super::lane::{LaneRef, LaneState};
use super::process::{TurnFiles, start_time};
use super::turn::finish;
use crate::registry::RegistryMsg;

/// Starts the process that runs `plan`, saving `first` (the turn's first
/// events, none for a watchdog restart) with its pid. A process that
/// cannot start ends the turn (failed); a save that fails is returned,
/// with nothing run.
pub(super) async fn launch(
    state: &mut LaneState,
    myself: &LaneRef,
    files: TurnFiles,
    plan: cli::CommandPlan,
    connector: &'static dyn cli::CliConnector,
    mut first: Vec<EventKind>,
) -> Result<(), StoreError> {
    let spec = &state.record.spec;
    let identity = super::identity_of(&state.ctx, spec);
    let mut env = spec.env.clone();
    env.extend(identity.env());
    let cwd = std::path::PathBuf::from(&spec.cwd);
    let parser = connector.parser(spec, &state.ctx.config.context_windows);
    let turn = state.record.turns;
    let peer = state.unstored_peer.take();
    let child = match spawn_shim(&files, &plan, &cwd, &env, &identity.env_removed()) {
        Ok(child) => child,
        Err(e) => {
            state
                .try_save_with(turn, first, |w| w.peer = peer.clone())
                .await?;
            publish_peer(state, peer.as_ref()).await;
            return cannot_start(state, e.to_string()).await;
        }
    };
    if let Some(pid) = child.id() {
        if let Some(t) = state.record.running.as_mut() {
            t.pid = Some(pid);
            t.pid_start = start_time(pid);
        }
        first.push(EventKind::Note {
            text: format!("process started (pid {pid})"),
        });
    }
    // Dropped on failure, the shim never gets its go and exits.
    state
        .try_save_with(turn, first, |w| w.peer = peer.clone())
        .await?;
    publish_peer(state, peer.as_ref()).await;
    let args = ConnectorArgs {
        files,
        launch: Launch::Spawned(child),
        parser,
        lane: myself.clone(),
    };
    match Actor::spawn_linked(None, Connector, args, myself.get_cell()).await {
        Ok((c, _)) => state.connector = Some(c),
        Err(e) => return cannot_start(state, e.to_string()).await,
    }
    Ok(())
}

/// How long a lane's start waits for the registry to show its peer.
const PUBLISH_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A new lane's peer is on disk: the directory shows it before the
/// lane's command runs (it may send as the lane at once).
async fn publish_peer(state: &LaneState, peer: Option<&PeerRecord>) {
    let (Some(peer), Some(registry)) = (peer, state.ctx.children.registry()) else {
        return;
    };
    let id = peer.id.clone();
    let shown = registry
        .call(|r| RegistryMsg::LanePeerStored(id, r), Some(PUBLISH_WAIT))
        .await;
    if !matches!(shown, Ok(ractor::rpc::CallResult::Success(()))) {
        tracing::warn!(lane = %state.record.spec.name, "the registry did not show the lane's peer");
    }
}

async fn cannot_start(state: &mut LaneState, why: String) -> Result<(), StoreError> {
    let outcome = Outcome {
        failed: true,
        error: Some(format!("cannot start the process: {why}")),
        ..Outcome::default()
    };
    finish(state, outcome, None).await;
    Ok(())
}
