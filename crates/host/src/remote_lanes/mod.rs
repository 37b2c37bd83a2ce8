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

use std::path::PathBuf;

use flotilla_actors::federation::LaneCall;
use tokio::sync::oneshot;

use crate::home::Home;

/// Where a remote lane without `-C` gets its fresh directory, and the
/// only root a remote lane may work in unless `remote_lane_roots` says
/// otherwise: `STATE/remote-lanes`.
pub fn default_root(home: &Home) -> PathBuf {
    home.state_dir.join("remote-lanes")
}

/// A call on its way to the hub link: the link numbers it, sends it, and
/// answers `reply` with the hub's [`flotilla_actors::federation::LaneAnswer`]
/// (dropping `reply` if the link ends first).
#[derive(Debug)]
pub struct OutgoingCall {
    /// The call (its `call` number is set by the link).
    pub call: LaneCall,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Result<String, String>>,
}
