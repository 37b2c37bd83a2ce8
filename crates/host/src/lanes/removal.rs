//! Removing lanes for good (`lane.remove`, `lane.prune`): the lane's actor
//! stops, its record, events, owed notices and peer (with the peer's inbox)
//! go in one transaction, then its turn files. The name is free again.
//! Only the lane supervisor calls this, one request at a time; a running
//! lane is never removed (archiving it interrupts its turn first). What a
//! lane made in its working directory is the user's and stays.

use std::time::Duration;

use flotilla_actors::lane::LanePhase;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::{PeerId, PeerName};
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneKept, LanePruneArgs, LanePruneReply, LaneRemoveArgs,
    LaneRemoveReply, LaneView,
};
use flotilla_actors::store::StoreError;
use ractor::rpc::CallResult;

use super::{LaneMsg, LaneRef, LaneSupervisorState};
use crate::registry::RegistryMsg;

/// Schema id of `lane.remove`'s reply.
const REMOVE_SCHEMA: &str = "flotilla.lane-remove.v1";
/// Schema id of `lane.prune`'s reply.
const PRUNE_SCHEMA: &str = "flotilla.lane-prune.v1";

/// Why `view`'s lane may not be removed now, if it may not.
pub(crate) fn refusal(view: &LaneView, force: bool) -> Option<ControlError> {
    let name = &view.lane.name;
    if view.phase == LanePhase::Running {
        return Some(
            ControlError::new(
                ErrorCode::Conflict,
                format!("lane {name} is running turn {}", view.turns),
            )
            .with_hint(format!(
                "archive it first (`flotilla lane archive {name}` interrupts the turn), then remove it"
            )),
        );
    }
    if view.uncollected && !force {
        return Some(
            ControlError::new(
                ErrorCode::Conflict,
                format!("lane {name} has a result nobody collected"),
            )
            .with_hint(format!(
                "collect it with `flotilla lane wait {name}`, or pass --force to drop it"
            )),
        );
    }
    None
}

/// Whether an archived lane is old enough for `lane prune`.
pub(crate) fn prunable(view: &LaneView, older_than_secs: Option<u64>, now: Timestamp) -> bool {
    if view.phase != LanePhase::Archived {
        return false;
    }
    let since = view.finished_at.unwrap_or(view.created_at);
    older_than_secs.is_none_or(|secs| now.0.saturating_sub(since.0) >= secs.saturating_mul(1000))
}

impl LaneSupervisorState {
    /// `lane.remove`.
    pub(super) async fn remove(
        &mut self,
        args: LaneRemoveArgs,
    ) -> Result<LaneRemoveReply, ControlError> {
        let lane = self.actor_of(&args.name)?;
        let view = view_of(&lane).await?;
        if let Some(refused) = refusal(&view, args.force) {
            return Err(refused);
        }
        let dropped_unread = self.remove_now(&args.name, lane, args.force).await?;
        Ok(LaneRemoveReply {
            schema: REMOVE_SCHEMA.into(),
            lane: view.lane,
            dropped_unread,
        })
    }

    /// `lane.prune`: every archived lane old enough, except those holding
    /// an uncollected result or unread messages (kept, with the reason).
    pub(super) async fn prune(&mut self, args: LanePruneArgs) -> LanePruneReply {
        let now = Timestamp::now();
        let mut reply = LanePruneReply {
            schema: PRUNE_SCHEMA.into(),
            removed: Vec::new(),
            kept: Vec::new(),
        };
        let names: Vec<PeerName> = self.lanes.keys().cloned().collect();
        for name in names {
            let Ok(lane) = self.actor_of(&name) else {
                continue;
            };
            let view = match view_of(&lane).await {
                Ok(v) if prunable(&v, args.older_than_secs, now) => v,
                _ => continue,
            };
            let outcome = match refusal(&view, false) {
                Some(refused) => Err(refused),
                None => self.remove_now(&name, lane, false).await,
            };
            match outcome {
                Ok(_) => reply.removed.push(view.lane),
                Err(e) => reply.kept.push(LaneKept {
                    lane: view.lane,
                    reason: e.message,
                }),
            }
        }
        reply
    }

    fn actor_of(&self, name: &PeerName) -> Result<LaneRef, ControlError> {
        self.lanes.get(name).map(|(l, _)| l.clone()).ok_or_else(|| {
            ControlError::new(ErrorCode::NotFound, format!("no lane {name}"))
                .with_hint("see `flotilla lane list --all`")
        })
    }

    /// Stops the lane's actor, then removes it from the store; if the store
    /// refuses, the lane is loaded again as it was.
    pub(super) async fn remove_now(
        &mut self,
        name: &PeerName,
        lane: LaneRef,
        force: bool,
    ) -> Result<u64, ControlError> {
        // Out of the map first: its exit is then not taken for a failure.
        self.lanes.remove(name);
        lane.stop_and_wait(Some("lane removed".into()), Some(Duration::from_secs(10)))
            .await
            .ok();
        let peer = PeerId::new(self.ctx.host.clone(), name.clone());
        match self
            .ctx
            .commit
            .remove_lane(name.as_str(), peer.clone(), force)
            .await
        {
            Ok(dropped) => {
                if let Some(registry) = self.ctx.children.registry() {
                    let _ = registry
                        .call(
                            |r| RegistryMsg::Forget(peer, r),
                            Some(Duration::from_secs(5)),
                        )
                        .await;
                }
                let files = self.ctx.home.state_dir.join("lanes").join(name.as_str());
                if let Err(e) = std::fs::remove_dir_all(&files)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!(lane = %name, error = %e, "could not remove the lane's files");
                }
                Ok(dropped)
            }
            Err(e) => {
                self.reload(name).await;
                Err(match e {
                    StoreError::Rejected(m) if m.contains("unread") => ControlError::new(
                        ErrorCode::Conflict,
                        m,
                    )
                    .with_hint(format!(
                        "read them with `flotilla inbox --as {name}`, or pass --force to drop them"
                    )),
                    other => crate::registry::store_error(other),
                })
            }
        }
    }
}

async fn view_of(lane: &LaneRef) -> Result<LaneView, ControlError> {
    match lane
        .call(LaneMsg::Status, Some(Duration::from_secs(5)))
        .await
    {
        Ok(CallResult::Success(view)) => Ok(view),
        _ => Err(ControlError::unavailable("a lane actor")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::lane::{CliKind, Permissions};

    fn view(phase: LanePhase, uncollected: bool, finished: Option<u64>) -> LaneView {
        LaneView {
            lane: PeerId::parse("h/l").expect("id"),
            cli: CliKind::Exec,
            phase,
            turns: 1,
            owner: PeerId::parse("h/operator").expect("id"),
            cwd: "/".into(),
            model: None,
            permissions: Permissions::Default,
            persistent: false,
            pid: None,
            native_session_id: None,
            last_status: None,
            uncollected,
            created_at: Timestamp(1_000),
            finished_at: finished.map(Timestamp),
            held_by: None,
            context_used_pct: None,
        }
    }

    #[test]
    fn a_running_lane_is_never_removed_and_a_result_needs_force() {
        let running = view(LanePhase::Running, false, None);
        assert!(refusal(&running, true).is_some_and(|e| e.message.contains("running")));
        let unread = view(LanePhase::Idle, true, Some(2_000));
        assert!(refusal(&unread, false).is_some_and(|e| e.message.contains("collected")));
        assert!(refusal(&unread, true).is_none());
        assert!(refusal(&view(LanePhase::Archived, false, None), false).is_none());
    }

    #[test]
    fn prune_takes_archived_lanes_old_enough() {
        let archived = view(LanePhase::Archived, false, Some(10_000));
        assert!(prunable(&archived, None, Timestamp(10_000)));
        assert!(!prunable(&archived, Some(60), Timestamp(69_999)));
        assert!(prunable(&archived, Some(60), Timestamp(70_000)));
        let never_ran = view(LanePhase::Archived, false, None);
        assert!(prunable(&never_ran, Some(60), Timestamp(61_000)));
        assert!(!prunable(
            &view(LanePhase::Idle, false, Some(0)),
            None,
            Timestamp(1 << 40)
        ));
    }
}
