//! The tables that accepting a message writes, opened once for a run of
//! acceptances in one transaction. Opening a redb table and closing it
//! again costs about as much as the write itself, and one message touches
//! up to twelve tables; the commit queue opens them once for every
//! acceptance (local or delivered by the hub) in a row of its group.
//!
//! Owns no table and no rule: `mail`, `received`, `retention` and
//! `outbox` decide what is written. While a `MailTables` lives, nothing
//! else may open these tables in the same transaction (redb refuses a
//! table opened twice), so the commit queue drops it before any other
//! write.

use redb::{Table, WriteTransaction};

use super::StoreError;
use super::schema::{
    ID_ORDER, INBOX, INBOX_DEPTH, MESSAGES, META, OUTBOX, OUTGOING, PEERS, RECEIVED, SEEN,
    SENDER_SEQ, SENT_BY,
};

/// Bytes under a string key (`peers`, `seen`, `messages`, `outgoing`).
pub(crate) type BytesTable<'t> = Table<'t, &'static str, &'static [u8]>;
/// A counter under a string key (`meta`, `sender_seq`, `inbox_depth`).
pub(crate) type CountTable<'t> = Table<'t, &'static str, u64>;

/// Every table an acceptance may write, open in one write transaction.
pub(crate) struct MailTables<'t> {
    pub(crate) meta: CountTable<'t>,
    pub(crate) peers: BytesTable<'t>,
    pub(crate) seen: BytesTable<'t>,
    pub(crate) received: Table<'t, (&'static str, &'static str), &'static [u8]>,
    pub(crate) sender_seq: CountTable<'t>,
    pub(crate) id_order: Table<'t, u64, (&'static str, &'static str)>,
    pub(crate) inbox: Table<'t, (&'static str, u64), &'static str>,
    pub(crate) inbox_depth: CountTable<'t>,
    pub(crate) messages: BytesTable<'t>,
    pub(crate) outbox: Table<'t, u64, &'static str>,
    pub(crate) outgoing: BytesTable<'t>,
    pub(crate) sent_by: Table<'t, (&'static str, u64), &'static str>,
}

impl<'t> MailTables<'t> {
    /// Opens them all.
    pub(crate) fn open(txn: &'t WriteTransaction) -> Result<Self, StoreError> {
        Ok(Self {
            meta: txn.open_table(META)?,
            peers: txn.open_table(PEERS)?,
            seen: txn.open_table(SEEN)?,
            received: txn.open_table(RECEIVED)?,
            sender_seq: txn.open_table(SENDER_SEQ)?,
            id_order: txn.open_table(ID_ORDER)?,
            inbox: txn.open_table(INBOX)?,
            inbox_depth: txn.open_table(INBOX_DEPTH)?,
            messages: txn.open_table(MESSAGES)?,
            outbox: txn.open_table(OUTBOX)?,
            outgoing: txn.open_table(OUTGOING)?,
            sent_by: txn.open_table(SENT_BY)?,
        })
    }
}
