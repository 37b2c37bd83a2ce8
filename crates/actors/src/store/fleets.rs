//! Fleets in the store: each fleet's record (spec and run) as JSON under
//! its name. Owns the `fleets` table only; the rules the record carries
//! live in [`crate::fleet`].

use redb::{ReadableDatabase, ReadableTable, WriteTransaction};

use super::commit::CommitQueue;
use super::schema::FLEETS;
use super::write_op::WriteOp;
use super::{Store, StoreError};
use crate::fleet::FleetRecord;

/// Largest record read back.
const RECORD_LIMIT: usize = 16 * 1024 * 1024;

pub(super) fn put(txn: &WriteTransaction, name: &str, json: &[u8]) -> Result<(), StoreError> {
    txn.open_table(FLEETS)?.insert(name, json)?;
    Ok(())
}

pub(super) fn remove(txn: &WriteTransaction, name: &str) -> Result<(), StoreError> {
    txn.open_table(FLEETS)?.remove(name)?;
    Ok(())
}

fn decode(bytes: &[u8]) -> Result<FleetRecord, StoreError> {
    if bytes.len() > RECORD_LIMIT {
        return Err(StoreError::Record(format!(
            "a fleet record of {} bytes is over the limit",
            bytes.len()
        )));
    }
    serde_json::from_slice(bytes).map_err(|e| StoreError::Record(e.to_string()))
}

impl Store {
    /// Every fleet, by name.
    pub fn fleets(&self) -> Result<Vec<FleetRecord>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(FLEETS)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            out.push(decode(row?.1.value())?);
        }
        Ok(out)
    }

    /// One fleet.
    pub fn fleet(&self, name: &str) -> Result<Option<FleetRecord>, StoreError> {
        let txn = self.db()?.begin_read()?;
        let table = txn.open_table(FLEETS)?;
        table.get(name)?.map(|v| decode(v.value())).transpose()
    }
}

impl CommitQueue {
    /// Stores a fleet's record (durable before this returns).
    pub async fn put_fleet(&self, record: &FleetRecord) -> Result<(), StoreError> {
        let json = serde_json::to_vec(record).map_err(|e| StoreError::Record(e.to_string()))?;
        let name = record.spec.name.to_string();
        self.write(WriteOp::PutFleet { name, json }).await.map(drop)
    }

    /// Forgets a fleet.
    pub async fn remove_fleet(&self, name: &str) -> Result<(), StoreError> {
        self.write(WriteOp::RemoveFleet(name.to_owned()))
            .await
            .map(drop)
    }
}
