//! The settings a daemon was started with, so `up` can tell when it is
//! asked for different ones (exit 6; `--restart` applies them), `--save`
//! can write them into config.toml, and `flotilla restart` can start the
//! daemon again as it was.
//!
//! `host run` records them in `run/daemon.settings.json` (0600): the flags
//! it was given, and the values it uses (the flag, else config.toml's).
//! The comparison and the flags' round trip are pure functions; this
//! module must not start or stop a daemon (`daemon` does).

use std::path::PathBuf;

use flotilla_host::config::HostConfig;
use flotilla_host::config::keys::{self, KeyError};
use flotilla_host::home::Home;
use serde::{Deserialize, Serialize};

use crate::args::RunArgs;

/// The settings of `up`/`host run` that change how the daemon runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    pub(crate) name: Option<String>,
    pub(crate) hub: Option<String>,
    pub(crate) hub_name: Option<String>,
    pub(crate) allow_remote_lanes: Option<Vec<String>>,
    pub(crate) allow_remote_groups: Option<Vec<String>>,
    pub(crate) remote_lane_roots: Option<Vec<PathBuf>>,
    pub(crate) remote_lane_max_permissions: Option<String>,
    pub(crate) remote_lane_env: Option<Vec<String>>,
    pub(crate) remote_lane_args: Option<bool>,
}

/// What `run/daemon.settings.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The daemon's pid (a record of another pid is stale).
    pub(crate) pid: u32,
    /// The flags it was given.
    pub(crate) given: Settings,
    /// The values it uses.
    pub(crate) effective: Settings,
}

impl Settings {
    /// The flags given on a command line.
    pub(crate) fn given(a: &RunArgs) -> Self {
        Self {
            name: a.name.clone(),
            hub: a.hub.clone(),
            hub_name: a.hub_name.clone(),
            allow_remote_lanes: a
                .allow_remote_lanes
                .as_ref()
                .map(|c| c.iter().map(ToString::to_string).collect()),
            allow_remote_groups: a.allow_remote_groups.clone(),
            remote_lane_roots: a.remote_lane_roots.clone(),
            remote_lane_max_permissions: a.remote_lane_max_permissions.map(|p| p.to_string()),
            remote_lane_env: a.remote_lane_env.clone(),
            remote_lane_args: a.remote_lane_args.then_some(true),
        }
    }

    /// The values a daemon started with these flags uses.
    pub(crate) fn effective(&self, config: &HostConfig) -> Self {
        let list = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
        Self {
            name: self
                .name
                .clone()
                .or(config.name.as_ref().map(ToString::to_string)),
            hub: self.hub.clone().or(config.hub.clone()),
            hub_name: self.hub_name.clone().or(config.hub_name.clone()),
            allow_remote_lanes: self
                .allow_remote_lanes
                .clone()
                .or(list(&config.allow_remote_lanes)),
            allow_remote_groups: self
                .allow_remote_groups
                .clone()
                .or(list(&config.allow_remote_groups)),
            remote_lane_roots: self
                .remote_lane_roots
                .clone()
                .or((!config.remote_lane_roots.is_empty())
                    .then(|| config.remote_lane_roots.clone())),
            remote_lane_max_permissions: self
                .remote_lane_max_permissions
                .clone()
                .or(Some(config.remote_lane_max_permissions.clone())),
            remote_lane_env: self
                .remote_lane_env
                .clone()
                .or(list(&config.remote_lane_env)),
            remote_lane_args: Some(self.remote_lane_args.unwrap_or(config.remote_lane_args)),
        }
    }

    /// These settings with `newer`'s given ones in their place.
    pub(crate) fn overlay(&self, newer: &Settings) -> Self {
        Self {
            name: newer.name.clone().or(self.name.clone()),
            hub: newer.hub.clone().or(self.hub.clone()),
            hub_name: newer.hub_name.clone().or(self.hub_name.clone()),
            allow_remote_lanes: newer
                .allow_remote_lanes
                .clone()
                .or(self.allow_remote_lanes.clone()),
            allow_remote_groups: newer
                .allow_remote_groups
                .clone()
                .or(self.allow_remote_groups.clone()),
            remote_lane_roots: newer
                .remote_lane_roots
                .clone()
                .or(self.remote_lane_roots.clone()),
            remote_lane_max_permissions: newer
                .remote_lane_max_permissions
                .clone()
                .or(self.remote_lane_max_permissions.clone()),
            remote_lane_env: newer
                .remote_lane_env
                .clone()
                .or(self.remote_lane_env.clone()),
            remote_lane_args: newer.remote_lane_args.or(self.remote_lane_args),
        }
    }

    /// The command-line flags that give these settings.
    pub(crate) fn to_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (key, value) in self.pairs() {
            if key == "remote_lane_args" {
                if value == "true" {
                    out.push("--remote-lane-args".to_owned());
                }
            } else {
                out.push(format!("--{}={value}", key.replace('_', "-")));
            }
        }
        out
    }

    /// Each setting that is set, as (config key, value as on a command line).
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let join = |v: &Vec<String>| v.join(",");
        let roots = |v: &Vec<PathBuf>| {
            v.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        [
            ("name", self.name.clone()),
            ("hub", self.hub.clone()),
            ("hub_name", self.hub_name.clone()),
            (
                "allow_remote_lanes",
                self.allow_remote_lanes.as_ref().map(join),
            ),
            (
                "allow_remote_groups",
                self.allow_remote_groups.as_ref().map(join),
            ),
            (
                "remote_lane_roots",
                self.remote_lane_roots.as_ref().map(roots),
            ),
            (
                "remote_lane_max_permissions",
                self.remote_lane_max_permissions.clone(),
            ),
            ("remote_lane_env", self.remote_lane_env.as_ref().map(join)),
            (
                "remote_lane_args",
                self.remote_lane_args.map(|b| b.to_string()),
            ),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }

    /// The settings given here that differ from what a daemon uses:
    /// (key, wanted, in use).
    pub(crate) fn differences(&self, running: &Settings) -> Vec<(String, String, String)> {
        let used = running.pairs();
        self.pairs()
            .into_iter()
            .filter_map(|(key, wanted)| {
                let now = used.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone());
                (now.as_deref() != Some(wanted.as_str())
                    && !(key == "remote_lane_args" && wanted == "false"))
                    .then(|| {
                        (
                            key.to_owned(),
                            wanted,
                            now.unwrap_or_else(|| "not set".to_owned()),
                        )
                    })
            })
            .collect()
    }

    /// config.toml's text with these settings written into it (`--save`).
    pub(crate) fn save_into(&self, text: &str) -> Result<String, KeyError> {
        let mut text = text.to_owned();
        for (key, value) in self.pairs() {
            let value = match key {
                "allow_remote_lanes"
                | "allow_remote_groups"
                | "remote_lane_roots"
                | "remote_lane_env" => {
                    let items: Vec<String> = value
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| toml::Value::String(s.to_owned()).to_string())
                        .collect();
                    format!("[{}]", items.join(", "))
                }
                "remote_lane_args" => value,
                _ => toml::Value::String(value).to_string(),
            };
            text = keys::set(&text, key, &value)?;
        }
        Ok(text)
    }
}

fn record_path(home: &Home) -> PathBuf {
    home.run_dir.join("daemon.settings.json")
}

/// Records the settings of the daemon starting now (`host run`).
pub(crate) fn record(home: &Home, given: &Settings) -> anyhow::Result<()> {
    let config = HostConfig::load(&home.config_file)?;
    let record = Record {
        pid: std::process::id(),
        given: given.clone(),
        effective: given.effective(&config),
    };
    flotilla_actors::private_file::write(&record_path(home), &serde_json::to_vec(&record)?)?;
    Ok(())
}

/// The record of the daemon with `pid`, if it left one.
pub(crate) fn recorded(home: &Home, pid: u32) -> Option<Record> {
    let bytes = std::fs::read(record_path(home)).ok()?;
    let record: Record = serde_json::from_slice(&bytes).ok()?;
    (record.pid == pid).then_some(record)
}

#[cfg(test)]
#[path = "daemon_settings_tests.rs"]
mod tests;
