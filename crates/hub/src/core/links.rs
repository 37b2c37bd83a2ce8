//! The core's links: a host's link coming up (its view of the roster, its
//! receipts, its queue pushed, lane calls that waited for it) and going
//! down, frames sent to one host or many (encoded once), and a host's
//! roster changes told to the hosts that see them. Must not touch sockets:
//! frames go through each link's [`LinkHandle`] queue.

use flotilla_actors::federation::{Frame, RosterDelta};
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::HostName;

use super::policy::log_refused;
use super::{CoreState, LinkHandle, WINDOW, window};
use crate::outbound::OutboundError;
use crate::roster::Change;
use crate::transport::close;

/// The most peers gathered untold: past this the changes are told at once,
/// so that a long burst does not build one delta of the whole federation
/// for every host.
const UNTOLD_PEERS: usize = 64;

impl CoreState {
    pub(super) fn send(&self, host: &HostName, frame: Frame) {
        flotilla_actors::federation::stage::frame("hub.sent", &frame);
        let Some(link) = self.links.get(host) else {
            return;
        };
        log_unsent(host, &frame, link.tx.send(&frame));
    }

    pub(super) fn link_up(&mut self, host: HostName, version: String, link: LinkHandle) {
        let window = window::DeliveryWindow::new(WINDOW, link.tx.bound() / 2);
        if let Some(old) = self.links.insert(host.clone(), link) {
            old.connection
                .close(close::NORMAL.into(), b"replaced by a newer link");
        }
        self.pushed.insert(host.clone(), window);
        self.budgets.link_up(&host);
        self.holds.clear(&host);
        let change = self
            .roster
            .set_online(&host, true, Some(version), Timestamp::now());
        self.persist(&host);
        let reset = self.roster.reset_view(&host);
        self.send(&host, Frame::RosterDelta(reset));
        self.tell(&change);
        match self.store.receipts(&host) {
            Ok(receipts) => receipts
                .into_iter()
                .for_each(|r| self.send(&host, Frame::Receipt(r))),
            Err(e) => tracing::error!(%host, "cannot read receipts: {e}"),
        }
        self.pump(&host);
        for (asker, call) in self.relink.linked(&host) {
            self.on_lane_call(&asker, call);
        }
    }

    pub(super) fn link_down(&mut self, host: &HostName, link_id: u64) {
        if self.links.get(host).is_none_or(|l| l.id != link_id) {
            return;
        }
        self.links.remove(host);
        self.pushed.remove(host);
        self.holds.clear(host);
        self.fail_calls_to(host);
        self.relink.asker_gone(host);
        let change = self.roster.set_online(host, false, None, Timestamp::now());
        self.persist(host);
        self.tell(&change);
    }

    pub(super) fn persist(&self, host: &HostName) {
        if let Some(entry) = self.roster.host(host)
            && let Err(e) = self.store.put_host(host, entry)
        {
            tracing::error!(%host, "cannot record the host's roster: {e}");
        }
    }

    /// Gathers `change` to be told to the hosts that see it with the
    /// other changes of its burst ([`CoreMsg::Tell`]).
    ///
    /// [`CoreMsg::Tell`]: super::CoreMsg::Tell
    pub(super) fn tell(&mut self, change: &Change) {
        self.untold.add(change);
        if self.untold.touched() >= UNTOLD_PEERS {
            self.tell_untold();
        }
    }

    /// Sends each linked host the changes of its view since the last
    /// telling.
    pub(super) fn tell_untold(&mut self) {
        let untold = std::mem::take(&mut self.untold);
        for (hosts, delta) in self.roster.untold_deltas(&untold) {
            self.send_to_all(&hosts, &Frame::RosterDelta(delta));
        }
    }

    /// Sends one frame to several hosts, encoded once (again only for a
    /// link with another frame limit) and shared by their queues.
    pub(super) fn send_to_all(&self, hosts: &[HostName], frame: &Frame) {
        let mut encoded: Option<(usize, bytes::Bytes)> = None;
        for host in hosts {
            let Some(link) = self.links.get(host) else {
                continue;
            };
            let bytes = match &encoded {
                Some((max, bytes)) if *max == link.tx.max_frame() => Ok(bytes.clone()),
                _ => link.tx.encode(frame).inspect(|bytes| {
                    encoded = Some((link.tx.max_frame(), bytes.clone()));
                }),
            };
            log_unsent(host, frame, bytes.and_then(|b| link.tx.send_encoded(b)));
        }
    }

    pub(super) fn on_roster(&mut self, host: &HostName, delta: RosterDelta) {
        match self.roster.apply(host, &delta) {
            Ok(change) => {
                log_refused(&change);
                self.persist(host);
                self.tell(&change);
            }
            Err(e) => {
                tracing::warn!(%host, "{e}; closing its link");
                if let Some(link) = self.links.get(host) {
                    link.connection
                        .close(close::PROTOCOL.into(), e.to_string().as_bytes());
                }
            }
        }
    }
}

/// Logs a frame that could not be queued for `host`.
fn log_unsent(host: &HostName, frame: &Frame, sent: Result<(), OutboundError>) {
    match sent {
        Ok(()) => {}
        // Ending: its LinkDown is on the way.
        Err(OutboundError::Closed) => {
            tracing::debug!(%host, kind = frame.kind(), "not sent: the link has ended")
        }
        Err(e) => tracing::warn!(%host, kind = frame.kind(), "not sent: {e}"),
    }
}
