//! The commit queue's writes for the hub link: the hub's verdicts on
//! forwards, its receipts and the messages it delivers, each queued at once
//! with a future of its outcome so the link can keep many in flight and
//! answer each as it lands. Must not hold rules: `outbox` and `received`
//! do.

use super::StoreError;
use super::commit::{CommitQueue, stopped, unexpected};
use super::write_op::{WriteDone, WriteOp};
use crate::federation::{Deliver, ForwardOutcome, Receipt};
use crate::names::{MessageId, PeerId};

impl CommitQueue {
    /// Queues the hub's verdict on a forwarded message; the future resolves
    /// once it is on disk. Writes queued one after another commit in that
    /// order, so a caller may acknowledge each as its own future resolves.
    pub async fn submit_forwarded(
        &self,
        id: MessageId,
        outcome: ForwardOutcome,
    ) -> Result<impl Future<Output = Result<(), StoreError>> + Send + 'static, StoreError> {
        let rx = self.submit(WriteOp::Forwarded(id, outcome)).await?;
        Ok(async move { rx.await.map_err(|_| stopped())?.map(drop) })
    }

    /// Queues a receipt from the hub (see [`Self::submit_forwarded`]).
    pub async fn submit_receipt(
        &self,
        receipt: Receipt,
    ) -> Result<impl Future<Output = Result<(), StoreError>> + Send + 'static, StoreError> {
        let rx = self.submit(WriteOp::Receipt(receipt)).await?;
        Ok(async move { rx.await.map_err(|_| stopped())?.map(drop) })
    }

    /// Queues a message delivered by the hub; the future gives the
    /// recipients that are no longer here (see [`Self::submit_forwarded`]).
    pub async fn submit_delivery(
        &self,
        deliver: Deliver,
    ) -> Result<impl Future<Output = Result<Vec<PeerId>, StoreError>> + Send + 'static, StoreError>
    {
        let rx = self.submit(WriteOp::AcceptDelivery(deliver)).await?;
        Ok(async move {
            match rx.await.map_err(|_| stopped())?? {
                WriteDone::Gone(gone) => Ok(gone),
                other => Err(unexpected(other)),
            }
        })
    }

    /// Records the hub's verdict on a forwarded message.
    pub async fn forwarded(
        &self,
        id: MessageId,
        outcome: ForwardOutcome,
    ) -> Result<(), StoreError> {
        self.submit_forwarded(id, outcome).await?.await
    }

    /// Records a receipt from the hub.
    pub async fn receipt(&self, receipt: Receipt) -> Result<(), StoreError> {
        self.submit_receipt(receipt).await?.await
    }

    /// Stores a message delivered by the hub; returns the recipients that
    /// are no longer here.
    pub async fn accept_delivery(&self, deliver: Deliver) -> Result<Vec<PeerId>, StoreError> {
        self.submit_delivery(deliver).await?.await
    }
}
