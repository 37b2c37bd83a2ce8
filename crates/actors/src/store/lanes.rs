//! Lanes in the store: their records and their event logs.

use redb::{ReadableDatabase, ReadableTable, WriteTransaction};

use super::schema::{LANE_EVENTS, LANES};
use super::{Store, StoreError};
use crate::codec;
use crate::lane::LaneRecord;
use crate::lane::events::{EventKind, LaneEvent};
use crate::model::Timestamp;

const RECORD_LIMIT: usize = 16 * 1024 * 1024;

/// Inserts or replaces a lane.
pub(crate) fn put_lane(txn: &WriteTransaction, lane: &LaneRecord) -> Result<(), StoreError> {
    let bytes = codec::encode(lane)?;
    txn.open_table(LANES)?
        .insert(lane.spec.name.as_str(), bytes.as_slice())?;
    Ok(())
}

/// Appends events to a lane's log, numbering them; returns them.
pub(crate) fn append_events(
    txn: &WriteTransaction,
    lane: &str,
    turn: u32,
    at: Timestamp,
    kinds: Vec<EventKind>,
) -> Result<Vec<LaneEvent>, StoreError> {
    let mut table = txn.open_table(LANE_EVENTS)?;
    let mut seq = match table.range((lane, 0)..=(lane, u64::MAX))?.next_back() {
        Some(row) => row?.0.value().1,
        None => 0,
    };
    let mut out = Vec::with_capacity(kinds.len());
    for kind in kinds {
        seq += 1;
        let event = LaneEvent {
            seq,
            at,
            turn,
            kind,
        };
        table.insert((lane, seq), event.to_json().as_slice())?;
        out.push(event);
    }
    Ok(out)
}

impl Store {
    /// Every lane.
    pub fn load_lanes(&self) -> Result<Vec<LaneRecord>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(LANES)?;
        let mut lanes = Vec::new();
        for row in table.iter()? {
            lanes.push(codec::decode(row?.1.value(), RECORD_LIMIT)?);
        }
        Ok(lanes)
    }

    /// A lane's events after `after`, at most `limit`.
    pub fn lane_events(
        &self,
        lane: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LaneEvent>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(LANE_EVENTS)?;
        let mut out = Vec::new();
        for row in table.range((lane, after.saturating_add(1))..=(lane, u64::MAX))? {
            if out.len() >= limit {
                break;
            }
            let (_, v) = row?;
            let event: LaneEvent = serde_json::from_slice(v.value()).map_err(|e| {
                StoreError::Rejected(format!("lane event of {lane} unreadable: {e}"))
            })?;
            out.push(event);
        }
        Ok(out)
    }
}
