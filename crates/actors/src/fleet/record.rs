//! A fleet as the daemon keeps it: what it was started with (its spec),
//! its members and its run. Saved whole, as JSON, after every event.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Lifecycle;
use super::budget::BudgetCard;
use super::run::{FleetRun, SUPERVISOR};
use crate::governance::ClaimId;
use crate::lane::{CliKind, Permissions};
use crate::names::{HostName, PeerName};

/// The most workers one fleet may have.
pub const MAX_WORKERS: usize = 32;

/// One member's CLI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemberSpec {
    /// The CLI.
    pub cli: CliKind,
    /// The model, when not the CLI's default.
    #[serde(default)]
    pub model: Option<String>,
    /// For `exec`: the command (run by `sh -c`, the prompt on its stdin).
    #[serde(default)]
    pub command: Option<String>,
    /// Models to move to, in order, when this member hits a usage wall.
    #[serde(default)]
    pub fallback_models: Vec<String>,
    /// The host its lane runs on, when not the fleet's (a remote lane,
    /// placed through the hub; workers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostName>,
    /// The claim whose branch and worktree it works in (workers on the
    /// fleet's host only; docs/governance.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<ClaimId>,
    /// The permission mode its lane runs in (as `lane run
    /// --permissions`).
    #[serde(default)]
    pub permissions: Permissions,
}

/// What the fleet last heard of a member on another host (its lane's
/// record is there, not here): for `fleet status`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RemoteSeen {
    /// Its last turn that ended.
    pub turn: u32,
    /// Context window in use after it, where known.
    pub context_used_pct: Option<f64>,
    /// Its tokens, input and output.
    pub tokens: u64,
    /// Its cost, where the CLI tells.
    pub cost_usd: Option<f64>,
}

/// What a fleet is started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetSpec {
    /// The fleet's name; members are lanes `NAME-supervisor`,
    /// `NAME-worker-1`, ...
    pub name: PeerName,
    /// The supervisor.
    pub supervisor: MemberSpec,
    /// The workers, `worker-1` first.
    pub workers: Vec<MemberSpec>,
    /// How long the fleet lives.
    #[serde(default)]
    pub lifecycle: Lifecycle,
    /// The fleet's directory (absolute): members work there, artifacts
    /// are judged there.
    pub dir: String,
    /// Turns that may run at once (all members).
    #[serde(default)]
    pub max_busy: Option<usize>,
    /// The budget card.
    #[serde(default)]
    pub budget: BudgetCard,
    /// How long one member's turn may run, in seconds.
    #[serde(default)]
    pub turn_timeout_secs: Option<u64>,
    /// How long the fleet waits at a usage wall with no model left, in
    /// seconds (doubled at each wall in a row).
    #[serde(default = "default_wall_wait")]
    pub wall_wait_secs: u64,
    /// Context use (percent of the window) at which a member rotates.
    #[serde(default = "default_rotate_at")]
    pub rotate_at_pct: f64,
    /// Context use at which a member's running turn is cut short to
    /// rotate (100: never); `None`: 90, or `rotate_at_pct` when higher.
    #[serde(default)]
    pub rotate_now_at_pct: Option<f64>,
    /// How long each of the task's checks may run, in seconds.
    #[serde(default = "default_check_timeout")]
    pub check_timeout_secs: u64,
    /// The capability matrix in force: the daemon's `[[fleet_matrix]]`
    /// when the fleet started (what a client sends here is replaced).
    #[serde(default)]
    pub matrix: Vec<super::matrix::CapabilityCell>,
    /// The peer of this host that owns the fleet's lanes (default: the
    /// operator).
    #[serde(default, rename = "as")]
    pub as_peer: Option<PeerName>,
}

fn default_check_timeout() -> u64 {
    1800
}

fn default_wall_wait() -> u64 {
    300
}

fn default_rotate_at() -> f64 {
    super::rotation::DEFAULT_THRESHOLD_PCT
}

/// A fleet and its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetRecord {
    /// What it was started with.
    pub spec: FleetSpec,
    /// When it started, in milliseconds since the epoch.
    pub started_ms: u64,
    /// Stopped by a person: nothing more is dispatched.
    #[serde(default)]
    pub stopped: bool,
    /// Its run.
    pub run: FleetRun,
    /// The fleet whose member started it (a team of teams).
    #[serde(default)]
    pub parent: Option<super::nesting::FleetParent>,
    /// What was last heard of each member on another host, by role.
    #[serde(default)]
    pub remote_seen: BTreeMap<String, RemoteSeen>,
}

impl FleetSpec {
    /// Every member's role with its CLI, the supervisor first.
    pub fn members(&self) -> Vec<(String, &MemberSpec)> {
        let mut out = vec![(SUPERVISOR.to_owned(), &self.supervisor)];
        for (i, w) in self.workers.iter().enumerate() {
            out.push((format!("worker-{}", i + 1), w));
        }
        out
    }

    /// The worker roles.
    pub fn worker_roles(&self) -> Vec<String> {
        (1..=self.workers.len())
            .map(|i| format!("worker-{i}"))
            .collect()
    }

    /// The lane of `role`.
    pub fn lane_of(&self, role: &str) -> String {
        format!("{}-{role}", self.name)
    }

    /// Context use at which a running turn is cut short to rotate.
    pub fn rotate_now_at(&self) -> f64 {
        self.rotate_now_at_pct
            .unwrap_or(super::rotation::DEFAULT_CEILING_PCT.max(self.rotate_at_pct))
    }

    /// The fleet's private group.
    pub fn group(&self) -> String {
        format!("fleet-{}", self.name)
    }

    /// Checks what no process can fix: worker count, exec commands, and
    /// that every member's lane name is a valid name.
    pub fn validate(&self) -> Result<(), String> {
        if self.workers.is_empty() || self.workers.len() > MAX_WORKERS {
            return Err(format!(
                "a fleet has 1 to {MAX_WORKERS} workers, not {}",
                self.workers.len()
            ));
        }
        for (role, m) in self.members() {
            let needs = m.cli == CliKind::Exec;
            let has = m.command.as_deref().is_some_and(|c| !c.trim().is_empty());
            if needs && !has {
                return Err(format!(
                    "{role} runs exec and needs its command (--{}-cmd)",
                    if role == SUPERVISOR {
                        "supervisor"
                    } else {
                        "worker"
                    }
                ));
            }
            if !needs && m.command.is_some() {
                return Err(format!("{role} runs {} and takes no command", m.cli));
            }
            PeerName::new(&self.lane_of(&role)).map_err(|e| e.to_string())?;
        }
        if !(self.rotate_at_pct > 0.0 && self.rotate_at_pct <= 100.0) {
            return Err(format!(
                "--rotate-at must be a percentage above 0 and at most 100, not {}",
                self.rotate_at_pct
            ));
        }
        if self.supervisor.host.is_some() {
            return Err(
                "the supervisor runs on the fleet's own host; --host places workers only".into(),
            );
        }
        let ceiling = self.rotate_now_at();
        if !(ceiling >= self.rotate_at_pct && ceiling <= 100.0) {
            return Err(format!(
                "--rotate-now-at must be at least --rotate-at ({}) and at most 100, not {ceiling}",
                self.rotate_at_pct
            ));
        }
        if self.max_busy == Some(0) {
            return Err("--max-busy must be at least 1".into());
        }
        self.check_claims()
    }

    /// A claim belongs to one worker on the fleet's own host.
    fn check_claims(&self) -> Result<(), String> {
        if self.supervisor.claim.is_some() {
            return Err(
                "the supervisor plans in the fleet's directory; --claim is for workers".into(),
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for (role, m) in self.members() {
            let Some(claim) = &m.claim else { continue };
            if m.host.is_some() {
                return Err(format!(
                    "{role} has claim {claim} and a --host: a claim's worktree is on the fleet's host"
                ));
            }
            if !seen.insert(claim) {
                return Err(format!(
                    "claim {claim} is given to two workers: one lane works in a claim's worktree"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn spec(supervisor_host: Option<&str>) -> FleetSpec {
        let mut spec: FleetSpec = serde_json::from_value(serde_json::json!({
            "name": "rep",
            "supervisor": {"cli": "exec", "command": "true"},
            "workers": [{"cli": "exec", "command": "true", "host": "work"}],
            "dir": "/tmp",
        }))
        .unwrap();
        spec.supervisor.host = supervisor_host.map(|h| HostName::new(h).unwrap());
        spec
    }

    #[test]
    fn workers_may_run_on_another_host_and_the_supervisor_never() {
        let ok = spec(None);
        assert_eq!(ok.validate(), Ok(()));
        assert_eq!(
            ok.workers[0].host.as_ref().map(HostName::as_str),
            Some("work")
        );
        let refused = spec(Some("work")).validate().unwrap_err();
        assert!(refused.contains("--host places workers only"), "{refused}");
    }

    #[test]
    fn the_mid_turn_ceiling_is_never_below_the_threshold_nor_above_100() {
        let mut spec = spec(None);
        assert_eq!(spec.rotate_now_at(), 90.0);
        spec.rotate_at_pct = 95.0;
        assert_eq!(
            spec.rotate_now_at(),
            95.0,
            "the default follows a higher threshold"
        );
        assert_eq!(spec.validate(), Ok(()));
        for bad in [50.0, 100.5, f64::NAN] {
            spec.rotate_now_at_pct = Some(bad);
            let why = spec.validate().unwrap_err();
            assert!(why.contains("--rotate-now-at"), "{bad}: {why}");
        }
        spec.rotate_now_at_pct = Some(100.0);
        assert_eq!(spec.validate(), Ok(()));
    }

    #[test]
    fn a_member_saved_before_hosts_existed_runs_here() {
        let old: MemberSpec =
            serde_json::from_str(r#"{"cli": "exec", "command": "true"}"#).unwrap();
        assert_eq!(old.host, None);
        let saved = serde_json::to_string(&old).unwrap();
        assert!(!saved.contains("host"), "{saved}");
        assert!(!saved.contains("claim"), "{saved}");
    }

    #[test]
    fn a_claim_belongs_to_one_worker_on_the_fleets_host() {
        let claim = |id: &str| Some(ClaimId::parse(id).unwrap());
        let mut spec = spec(None);
        spec.workers[0].claim = claim("fix-a");
        let why = spec.validate().unwrap_err();
        assert!(why.contains("--host"), "{why}");
        spec.workers[0].host = None;
        assert_eq!(spec.validate(), Ok(()));
        spec.workers.push(spec.workers[0].clone());
        let why = spec.validate().unwrap_err();
        assert!(why.contains("two workers"), "{why}");
        spec.workers[1].claim = claim("fix-b");
        assert_eq!(spec.validate(), Ok(()));
        spec.supervisor.claim = claim("fix-c");
        let why = spec.validate().unwrap_err();
        assert!(why.contains("for workers"), "{why}");
    }
}
