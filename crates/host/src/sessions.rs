//! Interactive session peers (`flotilla peer claude`...): the evidence of
//! each one's process, kept in `state/sessions/NAME.json` (0600) so a
//! daemon restart keeps watching it, and the rule that a session whose
//! process ended (or whose pid now belongs to another process) has left.
//!
//! The registry owns the peers; this module only stores evidence and
//! decides liveness. It must not touch inboxes or the store.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, PeerJoinArgs, PeerLeaveArgs, PeerView, SessionEvidence,
};

use crate::lanes::process::is_same_process;
use crate::registry::RegistryState;

/// How often session processes are checked: a session that ends leaves the
/// roster within this (plus a commit).
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);

/// The delivery modes a session may declare.
const DELIVERY: &[&str] = &["live", "next-turn", "poll"];

fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("sessions")
}

fn file(state_dir: &Path, name: &PeerName) -> PathBuf {
    dir(state_dir).join(format!("{name}.json"))
}

/// Records a session's evidence.
pub(crate) fn save(
    state_dir: &Path,
    name: &PeerName,
    evidence: &SessionEvidence,
) -> std::io::Result<()> {
    crate::home::create_private(&dir(state_dir)).map_err(std::io::Error::other)?;
    let text = serde_json::to_string(evidence).map_err(std::io::Error::other)?;
    crate::lanes::connector::write_private(&file(state_dir, name), &text)
}

/// Forgets a session's evidence (nothing to do if there is none).
pub(crate) fn forget(state_dir: &Path, name: &PeerName) {
    let _ = std::fs::remove_file(file(state_dir, name));
}

/// Every recorded session; unreadable records are skipped.
pub(crate) fn load(state_dir: &Path) -> BTreeMap<PeerName, SessionEvidence> {
    let Ok(entries) = std::fs::read_dir(dir(state_dir)) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            let name = PeerName::new(path.file_stem()?.to_str()?).ok()?;
            let text = std::fs::read_to_string(&path).ok()?;
            Some((name, serde_json::from_str(&text).ok()?))
        })
        .collect()
}

/// Whether the session's process still runs.
pub(crate) fn alive(evidence: &SessionEvidence) -> bool {
    is_same_process(evidence.pid, evidence.start_time)
}

impl RegistryState {
    /// Registers an interactive session peer: a new name, or the name of a
    /// session whose process has ended.
    pub(crate) async fn join_session(
        &mut self,
        args: PeerJoinArgs,
        evidence: SessionEvidence,
    ) -> Result<PeerView, ControlError> {
        if !DELIVERY.contains(&evidence.delivery.as_str()) {
            let why = format!("unknown delivery mode {:?}", evidence.delivery);
            return Err(ControlError::new(ErrorCode::BadRequest, why)
                .with_hint("use live, next-turn or poll"));
        }
        let id = self.local_id(&args.name);
        if let Some(existing) = self.ctx.directory().get(&id).cloned() {
            let ended = self.sessions.get(&args.name).is_some_and(|e| !alive(e));
            if existing.kind != PeerKind::Session || !ended {
                return Err(ControlError::new(
                    ErrorCode::AlreadyExists,
                    format!("{id} is already registered as a {}", existing.kind),
                )
                .with_hint("pick another name with -n NAME"));
            }
        }
        save(&self.ctx.home.state_dir, &args.name, &evidence)
            .map_err(|e| ControlError::internal(format!("cannot record the session: {e}")))?;
        self.sessions.insert(args.name.clone(), evidence);
        let record = PeerRecord {
            id,
            kind: PeerKind::Session,
            product: args.product,
            groups: args.groups.into_iter().collect(),
            joined_at: Timestamp::now(),
        };
        self.put_peer(record).await
    }

    /// Every session whose process has ended leaves (its unread messages
    /// go with it, as after `peer leave --force`).
    pub(crate) async fn check_sessions(&mut self) {
        let ended: Vec<PeerName> = self
            .sessions
            .iter()
            .filter(|(_, e)| !alive(e))
            .map(|(n, _)| n.clone())
            .collect();
        for name in ended {
            tracing::info!(peer = %name, "the session's process ended; it leaves");
            let leave = PeerLeaveArgs {
                name: name.clone(),
                force: true,
            };
            if let Err(e) = self.leave(leave).await
                && e.code == ErrorCode::NotFound
            {
                self.sessions.remove(&name);
                forget(&self.ctx.home.state_dir, &name);
            }
        }
    }

    /// A renamed session keeps its evidence under its new name.
    pub(crate) fn move_session(&mut self, old: &PeerName, new: &PeerName) {
        if let Some(evidence) = self.sessions.remove(old) {
            forget(&self.ctx.home.state_dir, old);
            if let Err(e) = save(&self.ctx.home.state_dir, new, &evidence) {
                tracing::warn!("cannot record the renamed session {new}: {e}");
            }
            self.sessions.insert(new.clone(), evidence);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_round_trips_and_a_dead_process_is_not_alive() {
        let tmp = tempfile::tempdir().expect("tmp");
        let name = PeerName::new("s1").expect("name");
        let me = std::process::id();
        let live = SessionEvidence {
            pid: me,
            start_time: crate::lanes::process::start_time(me),
            delivery: "live".into(),
        };
        save(tmp.path(), &name, &live).expect("save");
        assert_eq!(load(tmp.path()).get(&name), Some(&live));
        assert!(alive(&live));
        let reused = SessionEvidence {
            start_time: live.start_time.map(|t| t + 1),
            ..live.clone()
        };
        assert!(!alive(&reused), "a reused pid is not the session");
        forget(tmp.path(), &name);
        assert!(load(tmp.path()).is_empty());
    }
}
