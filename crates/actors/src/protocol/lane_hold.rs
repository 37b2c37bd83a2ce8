//! The ops of a person stepping into a lane (`flotilla lane attach`):
//! `lane.attach` holds the lane and says how to open the CLI's own
//! interactive session on its native conversation; `lane.release` ends the
//! hold. Types only; the rules are in [`crate::lane::hold`].

use serde::{Deserialize, Serialize};

use crate::lane::CliKind;
use crate::names::{PeerId, PeerName};

/// Schema id of `lane.attach`'s reply (and of `lane attach --print --json`).
pub const LANE_ATTACH_SCHEMA: &str = "flotilla.lane-attach.v1";

/// Arguments of `lane.attach`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneAttachArgs {
    /// The lane.
    pub name: PeerName,
    /// Interrupt a running turn instead of waiting for its end.
    #[serde(default)]
    pub now: bool,
    /// Only say what would run: no hold, no wait, no interrupt.
    #[serde(default)]
    pub print: bool,
    /// The holding process (the attach command itself): the hold ends
    /// when it releases it or is gone. Required unless `print`.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Its start time (clock ticks since boot), to recognise it.
    #[serde(default)]
    pub pid_start: Option<u64>,
    /// How the holder is shown to others (default: `pid N`).
    #[serde(default)]
    pub holder: Option<String>,
}

/// Reply of `lane.attach`: the interactive session to run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneAttachReply {
    /// Schema id: `flotilla.lane-attach.v1`.
    pub schema: String,
    /// The lane's peer id.
    pub lane: PeerId,
    /// Its CLI.
    pub cli: CliKind,
    /// The native session the interactive CLI resumes.
    pub native_session_id: String,
    /// The command line, program first.
    pub argv: Vec<String>,
    /// Where to run it: the lane's working directory.
    pub cwd: String,
    /// Variables to set (the lane's own, its identity, its private CLI
    /// home where the CLI has one).
    pub env: Vec<(String, String)>,
    /// Inherited variables to remove.
    pub env_remove: Vec<String>,
    /// Whether the lane is now held (false with `print`).
    pub held: bool,
    /// The turn that was running when the attach asked (waited for, or
    /// interrupted with `now`).
    pub waited_for: Option<u32>,
    /// Whether that turn was interrupted.
    pub interrupted: bool,
}

/// Arguments of `lane.release`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneReleaseArgs {
    /// The lane.
    pub name: PeerName,
    /// The holding process, as given to `lane.attach`.
    pub pid: u32,
    /// Its start time, as given to `lane.attach`.
    #[serde(default)]
    pub pid_start: Option<u64>,
}
