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
use super::mail_tables::{CountTable, MailTables};
use super::schema::{ID_ORDER, INBOX, INBOX_DEPTH, MESSAGES, META, RECEIVED, SEEN};

/// How many remembered ids are kept for dedupe and replies.
pub(crate) const IDS_KEEP: u64 = 100_000;
/// How many of the oldest ids one new id looks at to forget.
const FORGET_SCAN: usize = 8;
const ID_ORDER_KEY: &str = "id_order";

/// `n` entries were added to `peer`'s inbox (`depth` is `inbox_depth`).
pub(crate) fn inbox_added(
    depth: &mut CountTable<'_>,
    peer: &str,
    n: u64,
) -> Result<(), StoreError> {
    if n == 0 {
        return Ok(());
    }
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
    t: &mut MailTables<'_>,
    id: &str,
    from: &str,
    keep: u64,
) -> Result<(), StoreError> {
    let n = next_order(&mut t.meta)?;
    t.id_order.insert(n, (id, from))?;
    let mut excess = t.id_order.len()?.saturating_sub(keep);
    if excess == 0 {
        return Ok(());
    }
    let mut oldest = Vec::new();
    for row in t.id_order.iter()?.take(FORGET_SCAN) {
        let (k, v) = row?;
        let (id, from) = v.value();
        oldest.push((k.value(), id.to_owned(), from.to_owned()));
    }
    for (n, id, from) in oldest {
        if excess == 0 {
            break;
        }
        t.id_order.remove(n)?;
        if forget_or_requeue(t, &id, &from)? {
            excess -= 1;
        }
    }
    Ok(())
}

/// Forgets an id whose message no inbox holds (true); one still held goes
/// to the back of the order, to be looked at again later (false).
fn forget_or_requeue(t: &mut MailTables<'_>, id: &str, from: &str) -> Result<bool, StoreError> {
    // The key `received::message_key` gives a message from another host.
    let key = if from.is_empty() {
        id.to_owned()
    } else {
        format!("{from}/{id}")
    };
    if t.messages.get(key.as_str())?.is_some() {
        let n = next_order(&mut t.meta)?;
        t.id_order.insert(n, (id, from))?;
        return Ok(false);
    }
    if from.is_empty() {
        t.seen.remove(id)?;
    } else {
        t.received.remove((id, from))?;
    }
    Ok(true)
}

fn next_order(meta: &mut CountTable<'_>) -> Result<u64, StoreError> {
    super::mail::bump(meta, ID_ORDER_KEY)
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
    let mut meta = txn.open_table(META)?;
    let mut order = txn.open_table(ID_ORDER)?;
    for (_, id, from) in ids {
        let n = next_order(&mut meta)?;
        order.insert(n, (id.as_str(), from.as_str()))?;
    }
    Ok(())
}

fn sent_at(record: &[u8]) -> u64 {
    crate::codec::decode::<super::SeenRecord>(record, crate::codec::HARD_LIMIT)
        .map(|r| r.sent_at.0)
        .unwrap_or(0)
}
