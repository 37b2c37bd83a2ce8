//! Upgrades of the hub store's tables written by older releases, run
//! inside the transaction that opens the store.

use redb::TableHandle;

use super::*;

/// The id index of older releases, keyed by (host, message id).
const OLD_QUEUED_IDS: TableDefinition<(&str, &str), u64> = TableDefinition::new("queued_ids");

/// Rebuilds the index of queued ids, keyed by sender too, from the
/// queue itself, and deletes the old index. Does nothing once done.
pub(super) fn queued_by_sender(txn: &WriteTransaction) -> Result<(), HubStoreError> {
    if !txn
        .list_tables()?
        .any(|t| t.name() == OLD_QUEUED_IDS.name())
    {
        return Ok(());
    }
    let mut ids = txn.open_table(QUEUED_IDS)?;
    for row in txn.open_table(QUEUE)?.iter()? {
        let (key, bytes) = row?;
        let (host, seq) = key.value();
        let queued: Queued = codec::decode(bytes.value(), RECORD_LIMIT)?;
        let from = queued.message.from.to_string();
        ids.insert((host, from.as_str(), queued.message.id.as_str()), seq)?;
    }
    drop(ids);
    txn.delete_table(OLD_QUEUED_IDS)?;
    tracing::info!("hub store: queued ids are now keyed by sender");
    Ok(())
}
