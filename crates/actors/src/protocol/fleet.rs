//! The fleet ops' arguments and replies. The rules they carry (tasks,
//! shortfalls, evidence) live in [`crate::fleet`].

use serde::{Deserialize, Serialize};

use crate::fleet::{Evidence, Shortfall, Task};

/// Arguments of `fleet.check`: judge TASK's definition of done in DIR now,
/// as a fleet's acceptance would.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetCheckArgs {
    /// The task (validated again by the daemon).
    pub task: Task,
    /// The fleet's directory: an absolute path to an existing directory.
    pub dir: String,
    /// How long each check may run, in milliseconds (at most a day).
    pub timeout_ms: u64,
}

/// Reply of `fleet.check`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetCheckReply {
    /// Schema id: `flotilla.fleet-check.v1`.
    pub schema: String,
    /// The directory judged (resolved).
    pub dir: String,
    /// Every artifact and check held.
    pub accepted: bool,
    /// Why not, every reason (empty when accepted).
    pub shortfalls: Vec<Shortfall>,
    /// What was found, when accepted.
    pub evidence: Option<Evidence>,
}
