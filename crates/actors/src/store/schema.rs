//! The store's tables, its schema version and the migrations between
//! versions. A migration runs inside one write transaction.

use std::path::Path;

use redb::{ReadTransaction, TableDefinition, TableHandle, WriteTransaction};

use super::StoreError;

/// The schema this build writes.
pub const SCHEMA_VERSION: u64 = 11;

/// Key `schema_version`, `host_seq` (the last inbox sequence number),
/// `wal_id` and `wal_seq` (the write-ahead log's id and position).
pub(crate) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// Peer id to encoded `PeerRecord`.
pub(crate) const PEERS: TableDefinition<&str, &[u8]> = TableDefinition::new("peers");
/// Peer id to when it last made a request (milliseconds).
pub(crate) const LAST_SEEN: TableDefinition<&str, u64> = TableDefinition::new("last_seen");
/// Message key to encoded `StoredMessage` (the message and how many inboxes
/// hold it). The key is the bare id for a message of a local sender, and
/// `HOST/NAME/ID` for one from another host (since version 4; see `received`).
pub(crate) const MESSAGES: TableDefinition<&str, &[u8]> = TableDefinition::new("messages");
/// (recipient id, host sequence number) to message key: each peer's inbox, in order.
pub(crate) const INBOX: TableDefinition<(&str, u64), &str> = TableDefinition::new("inbox");
/// Sender id to its last sequence number.
pub(crate) const SENDER_SEQ: TableDefinition<&str, u64> = TableDefinition::new("sender_seq");
/// Message id to encoded `SeenRecord`: every id a local sender used, for
/// dedupe and replies (before version 4, also the ids delivered from other hosts).
pub(crate) const SEEN: TableDefinition<&str, &[u8]> = TableDefinition::new("seen");

/// Lane name to encoded `LaneRecord` (since version 2).
pub(crate) const LANES: TableDefinition<&str, &[u8]> = TableDefinition::new("lanes");
/// (lane name, event sequence number) to the event as JSON (since version 2).
pub(crate) const LANE_EVENTS: TableDefinition<(&str, u64), &[u8]> =
    TableDefinition::new("lane_events");

/// Position in the queue to the hub to message id (since version 3).
pub(crate) const OUTBOX: TableDefinition<u64, &str> = TableDefinition::new("outbox");
/// Message id to encoded `OutboxEntry`: what became of a sent message (since version 3).
pub(crate) const OUTGOING: TableDefinition<&str, &[u8]> = TableDefinition::new("outgoing");
/// (sender id, sequence number) to message id: each sender's outbox (since version 3).
pub(crate) const SENT_BY: TableDefinition<(&str, u64), &str> = TableDefinition::new("sent_by");

/// (message id, sender id) to encoded `SeenRecord`: every message delivered
/// from another host, for dedupe and replies (since version 4).
pub(crate) const RECEIVED: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("received");

/// Peer id to how many entries its inbox holds (since version 5).
pub(crate) const INBOX_DEPTH: TableDefinition<&str, u64> = TableDefinition::new("inbox_depth");
/// Order of remembering to (message id, sender id; empty for a local
/// sender's id in `seen`): the oldest are forgotten first (since version 5).
pub(crate) const ID_ORDER: TableDefinition<u64, (&str, &str)> = TableDefinition::new("id_order");
/// (lane name, turn) to encoded `TurnResult`: a finished turn whose owner
/// was not told yet, written with the turn's end and removed once the
/// owner's message is stored (since version 6).
pub(crate) const LANE_NOTICES: TableDefinition<(&str, u32), &[u8]> =
    TableDefinition::new("lane_notices");
/// (lane name, turn) to encoded `TurnResult`: a result not handed out yet
/// that a message's turn put aside (since version 6).
pub(crate) const LANE_SHELF: TableDefinition<(&str, u32), &[u8]> =
    TableDefinition::new("lane_shelf");

/// Version 8: the other hosts' peers as the hub last announced them
/// (peer id to encoded `RosterPeer`), so a restarted daemon knows them
/// before its hub link is back.
pub(crate) const REMOTE_ROSTER: TableDefinition<&str, &[u8]> =
    TableDefinition::new("remote_roster");

/// Version 10: fleet name to its record as JSON (the fleet's spec and
/// its run), written whole after every event of the run.
pub(crate) const FLEETS: TableDefinition<&str, &[u8]> = TableDefinition::new("fleets");

pub(crate) const VERSION_KEY: &str = "schema_version";
pub(crate) const HOST_SEQ_KEY: &str = "host_seq";
/// Version 11: the id of this store's write-ahead log (a log of another
/// store is never applied) and the last log record applied.
pub(crate) const WAL_ID_KEY: &str = "wal_id";
pub(crate) const WAL_SEQ_KEY: &str = "wal_seq";

/// Reads the schema version: 0 for an empty file.
pub(crate) fn read_version(txn: &ReadTransaction, path: &Path) -> Result<u64, StoreError> {
    let tables = txn.list_tables()?.count();
    match txn.open_table(META) {
        Ok(meta) => Ok(meta.get(VERSION_KEY)?.map(|v| v.value()).unwrap_or(0)),
        Err(redb::TableError::TableDoesNotExist(_)) if tables == 0 => Ok(0),
        Err(redb::TableError::TableDoesNotExist(_)) => Err(StoreError::Foreign {
            path: path.to_owned(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Brings a store from version `from` to [`SCHEMA_VERSION`].
pub(crate) fn migrate(txn: &WriteTransaction, from: u64) -> Result<(), StoreError> {
    for version in from..SCHEMA_VERSION {
        match version {
            0 => create_v1(txn)?,
            1 => create_v2(txn)?,
            2 => create_v3(txn)?,
            3 => create_v4(txn)?,
            4 => super::retention::create_v5(txn)?,
            5 => create_v6(txn)?,
            6 => super::upgrade_v7::migrate(txn)?,
            7 => {
                txn.open_table(REMOTE_ROSTER)?;
            }
            8 => super::upgrade_v9::migrate(txn)?,
            9 => {
                txn.open_table(FLEETS)?;
            }
            10 => super::logged::create_v11(txn)?,
            _ => unreachable!("no migration from version {version}"),
        }
        tracing::info!(from = version, to = version + 1, "store migrated");
    }
    txn.open_table(META)?.insert(VERSION_KEY, SCHEMA_VERSION)?;
    Ok(())
}

fn create_v1(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(META)?;
    txn.open_table(PEERS)?;
    txn.open_table(LAST_SEEN)?;
    txn.open_table(MESSAGES)?;
    txn.open_table(INBOX)?;
    txn.open_table(SENDER_SEQ)?;
    txn.open_table(SEEN)?;
    Ok(())
}

/// Version 2: lanes and their event logs.
fn create_v2(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(LANES)?;
    txn.open_table(LANE_EVENTS)?;
    Ok(())
}

/// Version 3: the outbox of messages that cross hosts.
fn create_v3(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(OUTBOX)?;
    txn.open_table(OUTGOING)?;
    txn.open_table(SENT_BY)?;
    Ok(())
}

/// Version 4: messages from other hosts are told apart by sender. Nothing
/// is rewritten: what earlier versions stored under bare ids stays
/// readable (a repeated delivery of such a message is still recognised
/// through `seen`).
fn create_v4(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(RECEIVED)?;
    Ok(())
}

/// Version 6: owed notices and put-aside results of lanes. Nothing is
/// rewritten: lane records keep their encoding.
fn create_v6(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(LANE_NOTICES)?;
    txn.open_table(LANE_SHELF)?;
    Ok(())
}

/// Names of the tables, for the integrity report.
pub(crate) fn table_names() -> [&'static str; 18] {
    [
        REMOTE_ROSTER.name(),
        INBOX_DEPTH.name(),
        ID_ORDER.name(),
        LANE_NOTICES.name(),
        LANE_SHELF.name(),
        RECEIVED.name(),
        OUTBOX.name(),
        OUTGOING.name(),
        SENT_BY.name(),
        LANES.name(),
        LANE_EVENTS.name(),
        META.name(),
        PEERS.name(),
        LAST_SEEN.name(),
        MESSAGES.name(),
        INBOX.name(),
        SENDER_SEQ.name(),
        SEEN.name(),
    ]
}
