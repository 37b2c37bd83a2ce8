//! Lanes across hosts: `lane ... --host HOST` on this host becomes a
//! `LaneCall` to the hub ([`client`]); a `LaneCall` relayed by the hub is
//! checked against this host's opt-in policy and answered ([`serve`]).
//!
//! Owns the translation between control-protocol lane ops and hub frames,
//! and the policy ([`policy`], with what a lane may ask for in [`limits`]). Lanes themselves stay the lane
//! supervisor's: a remote lane is an ordinary lane whose owner is a peer of
//! another host. Nothing here ever runs a lane locally in place of the
//! remote one, or over anything but the hub link.

pub mod client;
pub mod limits;
pub mod policy;
pub mod serve;

use std::collections::HashMap;
use std::path::PathBuf;

use flotilla_actors::federation::LaneCall;
use tokio::sync::{mpsc, oneshot};

use crate::home::Home;

/// Where a remote lane without `-C` gets its fresh directory, and the
/// only root a remote lane may work in unless `remote_lane_roots` says
/// otherwise: `STATE/remote-lanes`.
pub fn default_root(home: &Home) -> PathBuf {
    home.state_dir.join("remote-lanes")
}

/// A call on its way to the hub link: the link numbers it, sends it, and
/// answers `reply` with the hub's [`flotilla_actors::federation::LaneAnswer`]
/// (or [`CallEnd::Undelivered`], or drops `reply` if the link ends and the
/// hub may have taken the call).
#[derive(Debug)]
pub struct OutgoingCall {
    /// The call (its `call` number is set by the link).
    pub call: LaneCall,
    /// Where the answer goes.
    pub reply: oneshot::Sender<CallEnd>,
}

/// How a call on the hub link ended.
#[derive(Debug)]
pub enum CallEnd {
    /// The hub's answer: the op's reply as JSON, or its error as JSON.
    Answered(Result<String, String>),
    /// No hub took it (see [`undelivered`]): it may be sent again.
    Undelivered,
}

/// Whether a call still unanswered when its link ended never reached a
/// hub: the link ended in a stateless reset (a restarted hub, which never
/// knew the link, answered the call's packet) and nothing but that reset
/// arrived after the call was sent, not even an acknowledgement of it.
/// Otherwise the hub that died may have relayed it, and it is not sent
/// again (a lane must not start twice).
fn undelivered(reset: bool, received_when_sent: u64, received_at_end: u64) -> bool {
    reset && received_at_end <= received_when_sent + 1
}

/// The link has ended: the calls no hub took are told so (their callers
/// send them again on the next link), those queued and never written as
/// well; the others are dropped (their callers report the link lost).
pub(crate) fn end_calls(
    connection: &quinn::Connection,
    sent: &mut HashMap<u64, (oneshot::Sender<CallEnd>, u64)>,
    queued: &mut mpsc::Receiver<OutgoingCall>,
) {
    let reset = matches!(
        connection.close_reason(),
        Some(quinn::ConnectionError::Reset)
    );
    let received = connection.stats().udp_rx.datagrams;
    for (_, (reply, when_sent)) in sent.drain() {
        if undelivered(reset, when_sent, received) {
            let _ = reply.send(CallEnd::Undelivered);
        }
    }
    queued.close();
    while let Ok(out) = queued.try_recv() {
        let _ = out.reply.send(CallEnd::Undelivered);
    }
}

#[cfg(test)]
mod tests {
    use super::undelivered;

    #[test]
    fn only_a_call_nothing_answered_before_a_reset_is_sent_again() {
        assert!(undelivered(true, 10, 11), "only the reset came back");
        assert!(undelivered(true, 10, 10));
        assert!(
            !undelivered(true, 10, 12),
            "an acknowledgement may have come"
        );
        assert!(
            !undelivered(false, 10, 10),
            "a dead link: the hub may have it"
        );
    }
}
