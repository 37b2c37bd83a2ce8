//! What keeps the store's bookkeeping bounded and cheap to read (schema
//! version 5): a count of each peer's inbox, kept with every change to
//! it, so reading an inbox or the roster never walks whole inboxes; and
//! the order in which ids were remembered (`seen` for local senders,
//! `received` for other hosts'), so the oldest are forgotten once more
//! than [`IDS_KEEP`] are remembered and their message has left every inbox.
//!
//! Owns the tables `inbox_depth` and `id_order`. Must not decide what is
//! a duplicate or who receives what (`mail` and `received` do).

use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};

use super::StoreError;
use super::schema::{ID_ORDER, INBOX, INBOX_DEPTH, MESSAGES, META, RECEIVED, SEEN};

/// How many remembered ids are kept for dedupe and replies.
pub(crate) const IDS_KEEP: u64 = 100_000;
/// How many of the oldest ids one new id looks at to forget.
const FORGET_SCAN: usize = 8;
const ID_ORDER_KEY: &str = "id_order";

/// `n` entries were added to `peer`'s inbox.
pub(crate) fn inbox_added(txn: &WriteTransaction, peer: &str, n: u64) -> Result<(), StoreError> {
    if n == 0 {
        return Ok(());
    }
    let mut depth = txn.open_table(INBOX_DEPTH)?;
    let now = depth.get(peer)?.map(|v| v.value()).unwrap_or(0);
    depth.insert(peer, now + n)?;
    Ok(())
}

/// `n` entries left `peer`'s inbox.
pub(crate) fn inbox_removed(txn: &WriteTransaction, peer: &str, n: u64) -> Result<(), StoreError> {
    let mut depth = txn.open_table(INBOX_DEPTH)?;
    let now = depth.get(peer)?.map(|v| v.value()).unwrap_or(0);
    match now.saturating_sub(n) {
        0 => depth.remove(peer).map(drop)?,
        left => depth.insert(peer, left).map(drop)?,
    }
    Ok(())
}

/// Remembers that an id was taken: `from` is empty for a local sender's
/// id (in `seen`), else the sender of a message from another host (in
/// `received`). Forgets the oldest ids beyond `keep`.
pub(crate) fn remembered(
    txn: &WriteTransaction,
    id: &str,
    from: &str,
    keep: u64,
) -> Result<(), StoreError> {
    let mut order = txn.open_table(ID_ORDER)?;
    order.insert(next_order(txn)?, (id, from))?;
    let mut excess = order.len()?.saturating_sub(keep);
    if excess == 0 {
        return Ok(());
    }
    let mut oldest = Vec::new();
    for row in order.iter()?.take(FORGET_SCAN) {
        let (k, v) = row?;
        let (id, from) = v.value();
        oldest.push((k.value(), id.to_owned(), from.to_owned()));
    }
    drop(order);
    for (n, id, from) in oldest {
        if excess == 0 {
            break;
        }
        txn.open_table(ID_ORDER)?.remove(n)?;
        if forget_or_requeue(txn, &id, &from)? {
            excess -= 1;
        }
    }
    Ok(())
}

/// Forgets an id whose message no inbox holds (true); one still held goes
/// to the back of the order, to be looked at again later (false).
fn forget_or_requeue(txn: &WriteTransaction, id: &str, from: &str) -> Result<bool, StoreError> {
    // The key `received::message_key` gives a message from another host.
    let key = if from.is_empty() {
        id.to_owned()
    } else {
        format!("{from}/{id}")
    };
    if txn.open_table(MESSAGES)?.get(key.as_str())?.is_some() {
        let n = next_order(txn)?;
        txn.open_table(ID_ORDER)?.insert(n, (id, from))?;
        return Ok(false);
    }
    if from.is_empty() {
        txn.open_table(SEEN)?.remove(id)?;
    } else {
        txn.open_table(RECEIVED)?.remove((id, from))?;
    }
    Ok(true)
}

fn next_order(txn: &WriteTransaction) -> Result<u64, StoreError> {
    super::mail::bump(&mut txn.open_table(META)?, ID_ORDER_KEY)
}

/// Version 5: counts every inbox and the bytes waiting for the hub, and
/// orders every remembered id (oldest acceptance first), from what earlier
/// versions stored.
pub(crate) fn create_v5(txn: &WriteTransaction) -> Result<(), StoreError> {
    let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
    for row in txn.open_table(INBOX)?.iter()? {
        *counts.entry(row?.0.value().0.to_owned()).or_default() += 1;
    }
    let mut depth = txn.open_table(INBOX_DEPTH)?;
    for (peer, n) in counts {
        depth.insert(peer.as_str(), n)?;
    }
    drop(depth);
    let mut ids: Vec<(u64, String, String)> = Vec::new();
    for row in txn.open_table(SEEN)?.iter()? {
        let (k, v) = row?;
        ids.push((sent_at(v.value()), k.value().to_owned(), String::new()));
    }
    for row in txn.open_table(RECEIVED)?.iter()? {
        let (k, v) = row?;
        let (id, from) = k.value();
        ids.push((sent_at(v.value()), id.to_owned(), from.to_owned()));
    }
    ids.sort();
    let mut out_bytes = 0u64;
    for row in txn.open_table(super::schema::OUTBOX)?.iter()? {
        let id = row?.1.value().to_owned();
        if let Some(v) = txn.open_table(MESSAGES)?.get(id.as_str())? {
            let stored: super::mail::StoredMessage =
                crate::codec::decode(v.value(), crate::codec::HARD_LIMIT)?;
            out_bytes += stored.message.body.len() as u64;
        }
    }
    txn.open_table(META)?
        .insert(super::outbox::OUT_BYTES_KEY, out_bytes)?;
    txn.open_table(ID_ORDER)?;
    for (_, id, from) in ids {
        let n = next_order(txn)?;
        txn.open_table(ID_ORDER)?
            .insert(n, (id.as_str(), from.as_str()))?;
    }
    Ok(())
}

fn sent_at(record: &[u8]) -> u64 {
    crate::codec::decode::<super::SeenRecord>(record, crate::codec::HARD_LIMIT)
        .map(|r| r.sent_at.0)
        .unwrap_or(0)
}
