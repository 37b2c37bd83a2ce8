//! Reads of the outbox: what waits to be handed to the hub, and what each
//! sender sent with its recipients' states. The tables and the writes
//! that change them are `outbox`'s; this module must not write.

use redb::ReadableDatabase;

use super::mail::StoredMessage;
use super::outbox::{OutboxEntry, RECORD_LIMIT};
use super::schema::{MESSAGES, OUTBOX, OUTGOING, SENT_BY};
use super::{Store, StoreError};
use crate::codec;
use crate::federation::Forward;
use crate::names::{MessageId, PeerId};

impl Store {
    /// The oldest messages waiting to be handed to the hub, in order, with
    /// their remote recipients; `after` is the last queue position already
    /// handed over on this link.
    pub fn pending_forwards(
        &self,
        local: &crate::names::HostName,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, Forward)>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let outbox = txn.open_table(OUTBOX)?;
        let messages = txn.open_table(MESSAGES)?;
        let mut out = Vec::new();
        for row in outbox.range(after.saturating_add(1)..)?.take(limit) {
            let (seq, id) = row?;
            let Some(v) = messages.get(id.value())? else {
                continue;
            };
            let stored: StoredMessage = codec::decode(v.value(), RECORD_LIMIT)?;
            let to = stored
                .message
                .to
                .iter()
                .filter(|p| p.host != *local)
                .cloned()
                .collect();
            out.push((
                seq.value(),
                Forward {
                    message: stored.message,
                    to,
                },
            ));
        }
        Ok(out)
    }

    /// The last `limit` messages `from` sent, oldest first, with their
    /// states.
    pub fn outbox(&self, from: &PeerId, limit: usize) -> Result<Vec<OutboxEntry>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let sent_by = txn.open_table(SENT_BY)?;
        let outgoing = txn.open_table(OUTGOING)?;
        let key = from.to_string();
        let mut out = Vec::new();
        for row in sent_by
            .range((key.as_str(), 0)..=(key.as_str(), u64::MAX))?
            .rev()
            .take(limit)
        {
            let (_, id) = row?;
            if let Some(v) = outgoing.get(id.value())? {
                out.push(codec::decode(v.value(), RECORD_LIMIT)?);
            }
        }
        out.reverse();
        Ok(out)
    }

    /// One sent message's outbox entry.
    pub fn outbox_entry(&self, id: &MessageId) -> Result<Option<OutboxEntry>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(OUTGOING)?;
        let got = table.get(id.as_str())?;
        Ok(match got {
            Some(v) => Some(codec::decode(v.value(), RECORD_LIMIT)?),
            None => None,
        })
    }

    /// How many messages wait to be handed to the hub.
    pub fn outbox_depth(&self) -> Result<u64, StoreError> {
        use redb::ReadableTableMetadata;
        let txn = self.db()?.begin_read()?;
        Ok(txn.open_table(OUTBOX)?.len()?)
    }
}
