//! Expiry of the hub's queues: deliveries queued longer than the TTL on the
//! hub's running clock ([`super::clock`]) are dropped with a `dropped`
//! receipt for each sender's host. Reads only what expires (by the age
//! index), and says how many bytes it freed per host, so the core keeps its
//! queue counters without reading every queued body again. A host the hub
//! forgets (away past its retention) loses its roster row, its queue (each
//! message `dropped` for its sender) and the receipts it was owed.

use flotilla_actors::federation::{Receipt, ReceiptState};
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::HostName;
use redb::ReadableTable;

use super::{
    BY_AGE, HOSTS, HubStore, HubStoreError, QUEUE, QueueTables, add_receipts, take_queued,
};

/// What an expiry sweep dropped.
#[derive(Debug, Default)]
pub struct Expired {
    /// The receipts made, by the sender's host.
    pub receipts: Vec<(HostName, Receipt)>,
    /// Each dropped delivery's host and the bytes it counted.
    pub freed: Vec<(HostName, u64)>,
}

impl HubStore {
    /// Drops deliveries queued before `cutoff`, with a receipt for each
    /// sender's host.
    pub fn expire(&self, cutoff: Timestamp) -> Result<Expired, HubStoreError> {
        let txn = self.db.begin_write()?;
        let mut old = Vec::new();
        for row in txn
            .open_table(BY_AGE)?
            .range((0, "", 0)..(cutoff.0, "", 0))?
        {
            let (key, _) = row?;
            let (_, host, seq) = key.value();
            old.push((host.to_owned(), seq));
        }
        let mut out = Expired::default();
        let mut t = QueueTables::open(&txn)?;
        for (host, seq) in old {
            let Ok(host) = HostName::new(&host) else {
                continue;
            };
            let reason = format!("expired at the hub: {host} did not come back in time");
            drop_queued(&mut t, &host, seq, self.now(), reason, &mut out)?;
        }
        drop(t);
        txn.commit()?;
        Ok(out)
    }

    /// Removes everything kept for `host`: its roster, its queue (a
    /// `dropped` receipt saying `why` for each message's sender) and the
    /// receipts owed to it.
    pub fn forget_host(&self, host: &HostName, why: &str) -> Result<Expired, HubStoreError> {
        let txn = self.db.begin_write()?;
        txn.open_table(HOSTS)?.remove(host.as_str())?;
        let range = (host.as_str(), 0)..=(host.as_str(), u64::MAX);
        let seqs: Vec<u64> = txn
            .open_table(QUEUE)?
            .range(range.clone())?
            .map(|row| row.map(|(k, _)| k.value().1))
            .collect::<Result<_, _>>()?;
        let mut out = Expired::default();
        let mut t = QueueTables::open(&txn)?;
        for seq in seqs {
            drop_queued(&mut t, host, seq, self.now(), why.to_owned(), &mut out)?;
        }
        let owed: Vec<u64> = t
            .receipts
            .range(range)?
            .map(|row| row.map(|(k, _)| k.value().1))
            .collect::<Result<_, _>>()?;
        for seq in owed {
            t.receipts.remove((host.as_str(), seq))?;
        }
        drop(t);
        txn.commit()?;
        Ok(out)
    }
}

/// Takes `host`'s queued delivery `seq` out of the queue, with a `dropped`
/// receipt saying `reason` for its sender, and counts it in `out`.
fn drop_queued(
    t: &mut QueueTables<'_>,
    host: &HostName,
    seq: u64,
    now: Timestamp,
    reason: String,
    out: &mut Expired,
) -> Result<(), HubStoreError> {
    let Some(q) = take_queued(t, host, seq, now)? else {
        return Ok(());
    };
    let sender = q.message.from.host.clone();
    let made = add_receipts(
        t,
        &sender,
        &q.message,
        vec![(q.to, ReceiptState::Dropped { reason })],
    )?;
    out.receipts
        .extend(made.into_iter().map(|r| (sender.clone(), r)));
    out.freed.push((host.clone(), q.bytes));
    Ok(())
}
