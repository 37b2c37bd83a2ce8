//! Version 9: a turn's result gains `error_class` (why it failed, as one
//! class). Results are encoded with bincode, which has no defaults for new
//! fields, so the upgrade reads every lane record, owed notice and shelved
//! result as version 8 wrote it and writes it again as version 9 does,
//! with no class (version 8 did not classify). Only the upgrades use the
//! version 8 shapes kept here.

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::lanes::RECORD_LIMIT;
use super::schema::{LANE_NOTICES, LANE_SHELF, LANES};
use crate::codec;
use crate::lane::answers::OwedReply;
use crate::lane::{LanePhase, LaneRecord, LaneSpec, RunningTurn, TurnResult, TurnStatus, Usage};
use crate::model::Timestamp;
use crate::names::{MessageId, PeerId};

/// A turn's result as versions 6 to 8 encoded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct TurnResultV8 {
    pub lane: PeerId,
    pub status: TurnStatus,
    pub exit: Option<i32>,
    pub result: Option<String>,
    pub error: Option<String>,
    pub usage: Usage,
    pub context_window: Option<u64>,
    pub context_used_pct: Option<f64>,
    pub cost_usd: Option<f64>,
    pub native_session_id: Option<String>,
    pub duration_ms: u64,
    pub finished_at: Timestamp,
}

impl From<TurnResultV8> for TurnResult {
    fn from(o: TurnResultV8) -> Self {
        TurnResult {
            lane: o.lane,
            status: o.status,
            exit: o.exit,
            result: o.result,
            error: o.error,
            usage: o.usage,
            context_window: o.context_window,
            context_used_pct: o.context_used_pct,
            cost_usd: o.cost_usd,
            native_session_id: o.native_session_id,
            duration_ms: o.duration_ms,
            finished_at: o.finished_at,
            error_class: None,
        }
    }
}

/// A lane's record as versions 7 and 8 encoded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct LaneRecordV8 {
    pub spec: LaneSpec,
    pub phase: LanePhase,
    pub turns: u32,
    pub native_session: Option<String>,
    pub running: Option<RunningTurn>,
    pub uncollected: Option<TurnResultV8>,
    pub last_result: Option<TurnResultV8>,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub queued: Vec<String>,
    pub queued_from: Vec<MessageId>,
    pub answering: Vec<MessageId>,
    pub replies_owed: Vec<OwedReply>,
    pub asides: Vec<String>,
}

impl From<LaneRecordV8> for LaneRecord {
    fn from(o: LaneRecordV8) -> Self {
        LaneRecord {
            spec: o.spec,
            phase: o.phase,
            turns: o.turns,
            native_session: o.native_session,
            running: o.running,
            uncollected: o.uncollected.map(Into::into),
            last_result: o.last_result.map(Into::into),
            created_at: o.created_at,
            finished_at: o.finished_at,
            queued: o.queued,
            queued_from: o.queued_from,
            answering: o.answering,
            replies_owed: o.replies_owed,
            asides: o.asides,
        }
    }
}

/// Rewrites every lane record, owed notice and shelved result in version
/// 9's encoding.
pub(super) fn migrate(txn: &WriteTransaction) -> Result<(), StoreError> {
    let mut lanes = txn.open_table(LANES)?;
    let mut rewritten = Vec::new();
    for row in lanes.iter()? {
        let (name, bytes) = row?;
        let old: LaneRecordV8 = codec::decode(bytes.value(), RECORD_LIMIT)?;
        let new = codec::encode(&LaneRecord::from(old))?;
        rewritten.push((name.value().to_owned(), new));
    }
    for (name, bytes) in rewritten {
        lanes.insert(name.as_str(), bytes.as_slice())?;
    }
    results(txn, LANE_NOTICES)?;
    results(txn, LANE_SHELF)
}

/// Rewrites the results of one (lane, turn) table.
fn results(
    txn: &WriteTransaction,
    table: TableDefinition<(&str, u32), &[u8]>,
) -> Result<(), StoreError> {
    let mut table = txn.open_table(table)?;
    let mut rewritten = Vec::new();
    for row in table.iter()? {
        let (key, bytes) = row?;
        let old: TurnResultV8 = codec::decode(bytes.value(), RECORD_LIMIT)?;
        let (lane, turn) = key.value();
        rewritten.push((
            lane.to_owned(),
            turn,
            codec::encode(&TurnResult::from(old))?,
        ));
    }
    for (lane, turn, bytes) in rewritten {
        table.insert((lane.as_str(), turn), bytes.as_slice())?;
    }
    Ok(())
}
