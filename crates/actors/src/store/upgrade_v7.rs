//! Version 7: a lane's spec gains `restart_on_stall`, and its record what
//! it owes the senders of the messages it answers (`queued_from`,
//! `answering`, `replies_owed`) and the notices held for its next turn
//! (`asides`). Lane records are
//! encoded with bincode, which has no defaults for new fields, so the
//! upgrade reads each record as version 6 wrote it and writes it again as
//! version 7 does, with `restart_on_stall` off (as version 6 behaved for
//! agent CLIs; an exec lane's command is no longer run again on a stall
//! unless asked). Only the upgrade uses the version 6 shapes kept here.

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::schema::LANES;
use super::upgrade_v9::{LaneRecordV8, TurnResultV8};
use crate::codec;
use crate::lane::{CliKind, LanePhase, LaneSpec, Permissions, RunningTurn};
use crate::model::Timestamp;
use crate::names::{GroupName, PeerId, PeerName};

/// A lane's spec as version 6 encoded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct LaneSpecV6 {
    pub name: PeerName,
    pub cli: CliKind,
    pub cwd: String,
    pub model: Option<String>,
    pub permissions: Permissions,
    pub timeout_secs: Option<u64>,
    pub persistent: bool,
    pub auto_archive_secs: Option<u64>,
    pub groups: Vec<GroupName>,
    pub inherit_groups: bool,
    pub owner: PeerId,
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
}

/// A lane's record as version 6 encoded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct LaneRecordV6 {
    pub spec: LaneSpecV6,
    pub phase: LanePhase,
    pub turns: u32,
    pub native_session: Option<String>,
    pub running: Option<RunningTurn>,
    pub uncollected: Option<TurnResultV8>,
    pub last_result: Option<TurnResultV8>,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub queued: Vec<String>,
}

impl From<LaneRecordV6> for LaneRecordV8 {
    fn from(old: LaneRecordV6) -> Self {
        let s = old.spec;
        LaneRecordV8 {
            spec: LaneSpec {
                name: s.name,
                cli: s.cli,
                cwd: s.cwd,
                model: s.model,
                permissions: s.permissions,
                timeout_secs: s.timeout_secs,
                persistent: s.persistent,
                auto_archive_secs: s.auto_archive_secs,
                groups: s.groups,
                inherit_groups: s.inherit_groups,
                owner: s.owner,
                env: s.env,
                args: s.args,
                restart_on_stall: false,
            },
            phase: old.phase,
            turns: old.turns,
            native_session: old.native_session,
            running: old.running,
            uncollected: old.uncollected,
            last_result: old.last_result,
            created_at: old.created_at,
            finished_at: old.finished_at,
            queued: old.queued,
            queued_from: Vec::new(),
            answering: Vec::new(),
            replies_owed: Vec::new(),
            asides: Vec::new(),
        }
    }
}

/// Rewrites every lane record in version 7's encoding (which version 8
/// kept; version 9 rewrites it again).
pub(super) fn migrate(txn: &WriteTransaction) -> Result<(), StoreError> {
    let mut lanes = txn.open_table(LANES)?;
    let mut rewritten = Vec::new();
    for row in lanes.iter()? {
        let (name, bytes) = row?;
        let old: LaneRecordV6 = codec::decode(bytes.value(), super::lanes::RECORD_LIMIT)?;
        rewritten.push((
            name.value().to_owned(),
            codec::encode(&LaneRecordV8::from(old))?,
        ));
    }
    for (name, bytes) in rewritten {
        lanes.insert(name.as_str(), bytes.as_slice())?;
    }
    Ok(())
}
