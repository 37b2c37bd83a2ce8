//! Deliveries in the hub's core: pushing a linked host's queue to it
//! within its [`DeliveryWindow`](super::window::DeliveryWindow) (bounded in
//! count and bytes), and a host's acknowledgement taking a delivery off its
//! queue with the receipts for the sender's host.

use flotilla_actors::federation::{Delivered, Frame, Receipt};
use flotilla_actors::names::HostName;

use super::CoreState;
use crate::outbound::OutboundError;
use crate::queue_writer::WriterWork;
use crate::store::DeliveryDone;

impl CoreState {
    /// `host` stored a delivery: its window has room again at once; the
    /// queue writer takes the delivery off the queue
    /// ([`CoreState::on_taken`] follows).
    pub(super) fn on_delivered(&mut self, host: &HostName, done: Delivered) {
        if let Some(window) = self.pushed.get_mut(host) {
            window.acked(done.seq);
        }
        let work = WriterWork::Delivered {
            host: host.clone(),
            seq: done.seq,
            gone: done.gone,
        };
        if self.writer.submit(work).is_err() {
            tracing::error!(%host, "cannot record a delivery: the queue writer has stopped");
        }
        self.pump(host);
    }

    /// A delivery of `host` was taken off its queue: its receipts go to
    /// the sender's host.
    pub(super) fn on_taken(&mut self, host: &HostName, done: Option<DeliveryDone>) {
        if let Some(done) = done {
            super::admit::reserve(&mut self.depths, std::iter::once(host), done.bytes, false);
            self.send_receipts(&done.sender, done.receipts);
        }
        self.refresh_depth(host);
    }

    pub(super) fn send_receipts(&self, sender: &HostName, receipts: Vec<Receipt>) {
        for receipt in receipts {
            self.send(sender, Frame::Receipt(receipt));
        }
    }

    pub(super) fn refresh_depth(&mut self, host: &HostName) {
        if self.depths.get(host).is_some_and(|d| d.messages == 0) {
            self.depths.remove(host);
        }
    }

    /// Pushes queued deliveries to a linked host, up to the window: what
    /// the store holds first, then (when all of that is out) the fresh
    /// deliveries numbered here and not yet committed, in order.
    pub(super) fn pump(&mut self, host: &HostName) {
        let (Some(window), Some(link)) = (self.pushed.get_mut(host), self.links.get(host)) else {
            return;
        };
        let room = window.room();
        if room == 0 {
            return;
        }
        let batch = match self.store.queued(host, window.last(), room) {
            Ok(batch) => batch,
            Err(e) => {
                tracing::error!(%host, "cannot read the host's queue: {e}");
                return;
            }
        };
        let backlog = batch.len() >= room;
        for deliver in batch {
            if !push(host, window, &link.tx, deliver) {
                return;
            }
        }
        if backlog {
            return;
        }
        for deliver in self.fresh.pushable(host, window.last()) {
            if window.room() == 0 || !push(host, window, &link.tx, deliver.clone()) {
                return;
            }
        }
    }
}

/// Pushes one delivery within the window; `false` when nothing more can go
/// now.
fn push(
    host: &HostName,
    window: &mut super::window::DeliveryWindow,
    tx: &crate::outbound::Outbound,
    deliver: flotilla_actors::federation::Deliver,
) -> bool {
    let seq = deliver.seq;
    let frame = Frame::Deliver(deliver);
    flotilla_actors::federation::stage::frame("hub.sent", &frame);
    let bytes = match tx.encode(&frame) {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::warn!(%host, seq, "a delivery cannot be sent: {e}");
            return false;
        }
    };
    if !window.admits(bytes.len()) {
        return false;
    }
    window.pushed(seq, bytes.len());
    match tx.send_encoded(bytes) {
        Ok(()) => true,
        Err(OutboundError::Closed) => {
            tracing::debug!(%host, "not sent: the link has ended");
            false
        }
        Err(e) => {
            tracing::warn!(%host, "not sent: {e}");
            false
        }
    }
}
