//! Which lane requests from other hosts this host accepts, without IO.
//!
//! A host runs lanes for others only if it opts in: the CLIs it allows
//! (`allow_remote_lanes`) and the groups whose peers may place lanes
//! (`allow_remote_groups`). The requester's groups are the hub's (from its
//! roster), and its host is the name in the asking host's certificate; a
//! lane placed from another host is driven only from that host. What an
//! allowed request may ask for (directory, permissions, environment,
//! native arguments) is bounded by [`LaneLimits`].

use std::collections::BTreeSet;
use std::path::Path;

use flotilla_actors::lane::CliKind;
use flotilla_actors::names::{GroupName, HostName, PeerId};

use super::limits::LaneLimits;
use crate::config::HostConfig;

/// The policy, from `config.toml` or `--allow-remote-lanes` /
/// `--allow-remote-groups`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLanePolicy {
    clis: BTreeSet<CliKind>,
    groups: BTreeSet<GroupName>,
    limits: LaneLimits,
}

impl RemoteLanePolicy {
    /// The policy of `config`, with `default_root` as the only working
    /// directory root unless `remote_lane_roots` names others; a bad value
    /// is an error that names its key.
    pub fn from_config(config: &HostConfig, default_root: &Path) -> Result<Self, String> {
        let clis = config
            .allow_remote_lanes
            .iter()
            .map(|c| c.parse::<CliKind>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("allow_remote_lanes: {e}"))?;
        let groups = config
            .allow_remote_groups
            .iter()
            .map(|g| GroupName::new(g).map_err(|e| format!("allow_remote_groups: {e}")))
            .collect::<Result<_, _>>()?;
        let limits = LaneLimits::from_config(config, default_root).map_err(|e| e.to_string())?;
        Ok(Self {
            clis,
            groups,
            limits,
        })
    }

    /// What an allowed request may ask for.
    pub fn limits(&self) -> &LaneLimits {
        &self.limits
    }

    /// Whether this host takes remote lanes at all.
    pub fn is_open(&self) -> bool {
        !self.clis.is_empty() && !self.groups.is_empty()
    }

    /// May a requester in `groups` start a lane of `cli` here?
    pub fn check_start(&self, cli: CliKind, groups: &[GroupName]) -> Result<(), String> {
        self.check_open()?;
        if !self.clis.contains(&cli) {
            let allowed: Vec<String> = self.clis.iter().map(ToString::to_string).collect();
            return Err(format!(
                "this host does not run {cli} lanes for other hosts (allowed: {})",
                allowed.join(", ")
            ));
        }
        if !groups.iter().any(|g| self.groups.contains(g)) {
            let allowed: Vec<&str> = self.groups.iter().map(GroupName::as_str).collect();
            return Err(format!(
                "the requester is in none of the groups allowed to place lanes here ({})",
                allowed.join(", ")
            ));
        }
        Ok(())
    }

    /// May `host` drive (wait, interrupt, resume...) a lane owned by
    /// `owner`? Only the host that placed it.
    pub fn check_drive(&self, host: &HostName, owner: &PeerId) -> Result<(), String> {
        self.check_open()?;
        if owner.host == *host {
            Ok(())
        } else {
            Err(format!("this lane was not placed from {host}"))
        }
    }

    /// May other hosts ask anything at all?
    pub fn check_open(&self) -> Result<(), String> {
        if self.is_open() {
            Ok(())
        } else {
            Err(
                "this host runs no lanes for other hosts; its operator can allow some with \
                 --allow-remote-lanes CLI,... and --allow-remote-groups GROUP,... (or \
                 allow_remote_lanes / allow_remote_groups in config.toml)"
                    .to_owned(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> GroupName {
        GroupName::new(s).expect("group")
    }

    fn open(clis: &[&str], groups: &[&str]) -> RemoteLanePolicy {
        let config = HostConfig {
            allow_remote_lanes: clis.iter().map(|c| c.to_string()).collect(),
            allow_remote_groups: groups.iter().map(|g| g.to_string()).collect(),
            ..HostConfig::default()
        };
        RemoteLanePolicy::from_config(&config, Path::new("/r")).expect("valid")
    }

    #[test]
    fn a_closed_host_refuses_everything_and_says_how_to_open() {
        let p = RemoteLanePolicy::from_config(&HostConfig::default(), Path::new("/r"))
            .expect("defaults");
        let err = p
            .check_start(CliKind::Exec, &[g("proj")])
            .expect_err("closed");
        assert!(err.contains("--allow-remote-lanes"), "{err}");
        let owner = PeerId::parse("laptop/lead").expect("id");
        assert!(
            p.check_drive(&HostName::new("laptop").expect("h"), &owner)
                .is_err()
        );
    }

    #[test]
    fn clis_and_groups_must_both_be_allowed() {
        let p = open(&["exec"], &["proj"]);
        assert!(
            p.check_start(CliKind::Exec, &[g("other"), g("proj")])
                .is_ok()
        );
        assert!(p.check_start(CliKind::Claude, &[g("proj")]).is_err());
        assert!(p.check_start(CliKind::Exec, &[g("other")]).is_err());
        let bad = HostConfig {
            allow_remote_lanes: vec!["nope".into()],
            ..HostConfig::default()
        };
        let err = RemoteLanePolicy::from_config(&bad, Path::new("/r")).expect_err("nope");
        assert!(err.contains("allow_remote_lanes"), "{err}");
        let bad = HostConfig {
            remote_lane_env: vec!["A=B".into()],
            ..HostConfig::default()
        };
        let err = RemoteLanePolicy::from_config(&bad, Path::new("/r")).expect_err("env");
        assert!(err.contains("remote_lane_env"), "{err}");
    }

    #[test]
    fn only_the_placing_host_drives_a_lane() {
        let p = open(&["exec"], &["proj"]);
        let owner = PeerId::parse("laptop/lead").expect("id");
        assert!(
            p.check_drive(&HostName::new("laptop").expect("h"), &owner)
                .is_ok()
        );
        assert!(
            p.check_drive(&HostName::new("mac").expect("h"), &owner)
                .is_err()
        );
    }
}
