//! The hub's record of messages it has already handled: every (host,
//! sender, id) taken off a queue (delivered or expired) is remembered for a
//! while, so a forward repeated after that (its sender's host never got the
//! hub's `Forwarded`) is answered `queued` again, as the first time, and is
//! not queued or delivered a second time. Bounded in age (the sweep drops
//! records older than the queue's TTL) and in count ([`MAX_HANDLED`], the
//! oldest go first). Owns the two tables of the record; must not decide
//! routing.

use std::collections::BTreeSet;

use flotilla_actors::model::Message;
use flotilla_actors::names::HostName;
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::{HubStore, HubStoreError, QUEUED_IDS, QueueTables, WriteTransaction};

/// (host, sender, message id) to when it left its queue (ms).
pub(super) const HANDLED: TableDefinition<(&str, &str, &str), u64> =
    TableDefinition::new("handled");
/// (when, host, sender, message id): the record by age, for the sweep.
pub(super) const HANDLED_BY_AGE: TableDefinition<(u64, &str, &str, &str), ()> =
    TableDefinition::new("handled_by_age");

/// Most handled messages remembered; past it the oldest are forgotten.
pub const MAX_HANDLED: u64 = 200_000;

/// Creates the tables if they do not exist yet.
pub(super) fn create(txn: &WriteTransaction) -> Result<(), HubStoreError> {
    txn.open_table(HANDLED)?;
    txn.open_table(HANDLED_BY_AGE)?;
    Ok(())
}

/// Remembers that `message` left `host`'s queue at `at`.
pub(super) fn record(
    t: &mut QueueTables<'_>,
    host: &HostName,
    message: &Message,
    at: u64,
) -> Result<(), HubStoreError> {
    let from = message.from.to_string();
    let key = (host.as_str(), from.as_str(), message.id.as_str());
    if let Some(old) = t.handled.insert(key, at)? {
        let old = old.value();
        t.handled_by_age.remove((old, key.0, key.1, key.2))?;
    }
    t.handled_by_age.insert((at, key.0, key.1, key.2), ())?;
    Ok(())
}

/// Whether `message` was handled for `host` already.
pub(super) fn was_handled(
    t: &QueueTables<'_>,
    host: &HostName,
    message: &Message,
) -> Result<bool, HubStoreError> {
    let from = message.from.to_string();
    let key = (host.as_str(), from.as_str(), message.id.as_str());
    Ok(t.handled.get(key)?.is_some())
}

impl HubStore {
    /// The hosts of `hosts` for which `message` is queued or was handled
    /// already: a forward repeated for them is answered as the first one
    /// was, before any quota is checked.
    pub fn repeats<'a>(
        &self,
        message: &Message,
        hosts: impl IntoIterator<Item = &'a HostName>,
    ) -> Result<BTreeSet<HostName>, HubStoreError> {
        let txn = self.db.begin_read()?;
        let (queued, handled) = (txn.open_table(QUEUED_IDS)?, txn.open_table(HANDLED)?);
        let from = message.from.to_string();
        let mut out = BTreeSet::new();
        for host in hosts {
            let key = (host.as_str(), from.as_str(), message.id.as_str());
            if queued.get(key)?.is_some() || handled.get(key)?.is_some() {
                out.insert(host.clone());
            }
        }
        Ok(out)
    }

    /// Forgets handled messages older than `cutoff` (ms), and the oldest
    /// past [`MAX_HANDLED`]. Returns how many were forgotten.
    pub fn forget_handled(&self, cutoff: u64) -> Result<u64, HubStoreError> {
        let txn = self.lazy_write()?;
        let mut forgotten = 0;
        {
            let mut handled = txn.open_table(HANDLED)?;
            let mut by_age = txn.open_table(HANDLED_BY_AGE)?;
            let over = handled.len()?.saturating_sub(MAX_HANDLED);
            let mut old = Vec::new();
            for (n, row) in by_age.iter()?.enumerate() {
                let (key, _) = row?;
                let (at, host, from, id) = key.value();
                if at >= cutoff && n as u64 >= over {
                    break;
                }
                old.push((at, host.to_owned(), from.to_owned(), id.to_owned()));
            }
            for (at, host, from, id) in old {
                by_age.remove((at, host.as_str(), from.as_str(), id.as_str()))?;
                handled.remove((host.as_str(), from.as_str(), id.as_str()))?;
                forgotten += 1;
            }
        }
        txn.commit()?;
        Ok(forgotten)
    }
}
