//! Lanes in the store: their records, their event logs, the notices owed
//! to their owners and the results a message's turn put aside.

use redb::{ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};

use super::commit::{CommitQueue, unexpected};
use super::schema::{LANE_EVENTS, LANE_NOTICES, LANE_SHELF, LANES, PEERS};
use super::write_op::{WriteDone, WriteOp};
use super::{Store, StoreError};
use crate::codec;
use crate::lane::events::{EventKind, LaneEvent};
use crate::lane::{LaneRecord, TurnResult};
use crate::model::{PeerRecord, Timestamp};
use crate::names::PeerId;

pub(super) const RECORD_LIMIT: usize = 16 * 1024 * 1024;

/// Inserts or replaces a lane.
pub(crate) fn put_lane(txn: &WriteTransaction, lane: &LaneRecord) -> Result<(), StoreError> {
    let bytes = codec::encode(lane)?;
    txn.open_table(LANES)?
        .insert(lane.spec.name.as_str(), bytes.as_slice())?;
    Ok(())
}

/// A lane's record and what changed with it, written in one transaction:
/// a crash keeps all of it or none.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LaneWrite {
    /// The record.
    pub record: LaneRecord,
    /// The turn the events belong to.
    pub turn: u32,
    /// Events to append.
    #[serde(with = "events_json")]
    pub events: Vec<EventKind>,
    /// A turn's end the owner must be told of: `(turn, result)`.
    pub owe_notice: Option<(u32, TurnResult)>,
    /// A result put aside, still to be handed out: `(turn, result)`.
    pub shelve: Option<(u32, TurnResult)>,
    /// A put-aside result that was handed out.
    pub unshelve: Option<u32>,
    /// The lane's peer, when new: stored with the lane's first turn.
    pub peer: Option<PeerRecord>,
}

/// Events as they travel in the store's log: as JSON text, as the event
/// table keeps them (their kinds are tagged enums, which the binary codec
/// cannot read back).
pub(super) mod events_json {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _, ser::Error as _};

    use crate::lane::events::EventKind;

    pub(crate) fn serialize<S: Serializer>(kinds: &[EventKind], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&serde_json::to_string(kinds).map_err(S::Error::custom)?)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<EventKind>, D::Error> {
        serde_json::from_str(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

impl LaneWrite {
    /// The record alone.
    pub fn record(record: LaneRecord) -> Self {
        Self {
            turn: record.turns,
            record,
            events: Vec::new(),
            owe_notice: None,
            shelve: None,
            unshelve: None,
            peer: None,
        }
    }
}

/// Applies a [`LaneWrite`]; returns the appended events.
pub(crate) fn write_lane(
    txn: &WriteTransaction,
    w: LaneWrite,
    at: Timestamp,
) -> Result<Vec<LaneEvent>, StoreError> {
    if let Some(peer) = &w.peer {
        super::peers::put_peer(txn, peer)?;
    }
    put_lane(txn, &w.record)?;
    let name = w.record.spec.name.as_str();
    if let Some((turn, result)) = &w.owe_notice {
        txn.open_table(LANE_NOTICES)?
            .insert((name, *turn), codec::encode(result)?.as_slice())?;
    }
    if let Some((turn, result)) = &w.shelve {
        txn.open_table(LANE_SHELF)?
            .insert((name, *turn), codec::encode(result)?.as_slice())?;
    }
    if let Some(turn) = w.unshelve {
        txn.open_table(LANE_SHELF)?.remove((name, turn))?;
    }
    append_events(txn, name, w.turn, at, w.events)
}

/// The owner was told of `turn`: its notice is no longer owed.
pub(crate) fn notice_sent(txn: &WriteTransaction, lane: &str, turn: u32) -> Result<(), StoreError> {
    txn.open_table(LANE_NOTICES)?.remove((lane, turn))?;
    Ok(())
}

/// Removes a lane: its record, events, owed notices, put-aside results and
/// its peer (with the peer's inbox); returns the unread messages dropped.
/// Refused before anything changes when the peer has unread messages and
/// `force` is false.
pub(crate) fn remove_lane(
    txn: &WriteTransaction,
    name: &str,
    peer: &PeerId,
    force: bool,
) -> Result<u64, StoreError> {
    let known = txn
        .open_table(PEERS)?
        .get(peer.to_string().as_str())?
        .is_some();
    let dropped = if known {
        super::peers::remove_peer(txn, peer, force)?
    } else {
        0
    };
    txn.open_table(LANES)?.remove(name)?;
    txn.open_table(LANE_EVENTS)?
        .retain_in((name, 0)..=(name, u64::MAX), |_, _| false)?;
    for table in [LANE_NOTICES, LANE_SHELF] {
        txn.open_table(table)?
            .retain_in((name, 0)..=(name, u32::MAX), |_, _| false)?;
    }
    Ok(dropped)
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

    /// The notices a lane owes its owner, oldest turn first.
    pub fn lane_notices(&self, lane: &str) -> Result<Vec<(u32, TurnResult)>, StoreError> {
        self.lane_results(LANE_NOTICES, lane)
    }

    /// The results a lane put aside, oldest turn first.
    pub fn lane_shelf(&self, lane: &str) -> Result<Vec<(u32, TurnResult)>, StoreError> {
        self.lane_results(LANE_SHELF, lane)
    }

    fn lane_results(
        &self,
        table: TableDefinition<(&str, u32), &[u8]>,
        lane: &str,
    ) -> Result<Vec<(u32, TurnResult)>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(table)?;
        let mut out = Vec::new();
        for row in table.range((lane, 0)..=(lane, u32::MAX))? {
            let (k, v) = row?;
            out.push((k.value().1, codec::decode(v.value(), RECORD_LIMIT)?));
        }
        Ok(out)
    }

    /// A lane's last event, if it has one.
    pub fn last_lane_event(&self, lane: &str) -> Result<Option<LaneEvent>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(LANE_EVENTS)?;
        let Some(row) = table.range((lane, 0)..=(lane, u64::MAX))?.next_back() else {
            return Ok(None);
        };
        let (_, v) = row?;
        serde_json::from_slice(v.value())
            .map(Some)
            .map_err(|e| StoreError::Rejected(format!("lane event of {lane} unreadable: {e}")))
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

/// The lane writes of the commit queue.
impl CommitQueue {
    /// Stores a lane's record.
    pub async fn put_lane(&self, lane: LaneRecord) -> Result<(), StoreError> {
        self.write(WriteOp::PutLane(Box::new(lane))).await.map(drop)
    }

    /// Stores a lane's record with what changed with it, in one
    /// transaction; returns the appended events with their numbers.
    pub async fn write_lane(&self, w: LaneWrite) -> Result<Vec<LaneEvent>, StoreError> {
        match self
            .write(WriteOp::WriteLane(Box::new(w), Timestamp::now()))
            .await?
        {
            WriteDone::Events(e) => Ok(e),
            other => Err(unexpected(other)),
        }
    }

    /// Removes a lane and its peer (see [`remove_lane`]); returns how many
    /// unread messages were dropped.
    pub async fn remove_lane(
        &self,
        name: &str,
        peer: PeerId,
        force: bool,
    ) -> Result<u64, StoreError> {
        let op = WriteOp::RemoveLane {
            name: name.to_owned(),
            peer,
            force,
        };
        match self.write(op).await? {
            WriteDone::Count(n) => Ok(n),
            other => Err(unexpected(other)),
        }
    }

    /// Records that a lane's owner was told of `turn` (committed without
    /// waiting for the disk: losing it in a crash only sends the notice
    /// again, which its fixed id stores once).
    pub async fn notice_sent(&self, lane: &str, turn: u32) -> Result<(), StoreError> {
        let op = WriteOp::NoticeSent {
            lane: lane.to_owned(),
            turn,
        };
        self.write(op).await.map(drop)
    }

    /// Appends events to a lane's log; returns them with their numbers.
    pub async fn append_events(
        &self,
        lane: &str,
        turn: u32,
        kinds: Vec<EventKind>,
    ) -> Result<Vec<LaneEvent>, StoreError> {
        let op = WriteOp::AppendEvents {
            lane: lane.to_owned(),
            turn,
            at: Timestamp::now(),
            kinds,
        };
        match self.write(op).await? {
            WriteDone::Events(e) => Ok(e),
            other => Err(unexpected(other)),
        }
    }
}
