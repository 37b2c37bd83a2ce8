//! A host's `config.toml`: what the daemon reads at start. Every key is
//! optional; a missing file means the embedded defaults. Unknown keys are an
//! error that names them, so a typo never silently does nothing.

use std::path::Path;
use std::time::Duration;

use flotilla_actors::names::HostName;
use serde::{Deserialize, Serialize};

/// Largest message body by default: 1 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// Why the config file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// The file is not valid.
    #[error(
        "{path} is not valid: {message}Fix or remove the offending key; docs/config.md lists every key"
    )]
    Parse {
        /// The file.
        path: String,
        /// The parser's description, with line and column.
        message: String,
    },
}

/// The daemon's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// The host's name; defaults to the machine's cleaned hostname.
    pub name: Option<HostName>,
    /// Largest accepted message body, in bytes.
    pub max_message_bytes: usize,
    /// How often the watchdog checks the actors, in milliseconds.
    pub watchdog_interval_ms: u64,
    /// How long an actor may take to answer the watchdog, in milliseconds.
    pub watchdog_timeout_ms: u64,
    /// A lane turn with no output and no CPU time for this long is restarted.
    pub lane_stall_secs: f64,
    /// Restarts of a stalled turn before it fails.
    pub lane_stall_restarts: u32,
    /// Where each CLI is, when not on the daemon's PATH (`[clis] claude = "/opt/bin/claude"`).
    pub clis: std::collections::BTreeMap<String, String>,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            name: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            watchdog_interval_ms: 2_000,
            watchdog_timeout_ms: 5_000,
            lane_stall_secs: 600.0,
            lane_stall_restarts: 2,
            clis: Default::default(),
        }
    }
}

impl HostConfig {
    /// Reads the file, or the defaults when it does not exist.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        Self::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses config text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let config: Self = toml::from_str(text).map_err(|e| e.to_string())?;
        if config.max_message_bytes == 0 || config.max_message_bytes > 16 * 1024 * 1024 {
            return Err("max_message_bytes must be between 1 and 16777216\n".into());
        }
        Ok(config)
    }

    /// The watchdog's period.
    pub fn watchdog_interval(&self) -> Duration {
        Duration::from_millis(self.watchdog_interval_ms.max(10))
    }

    /// The program to run for a CLI: its path in `[clis]`, else its name
    /// (looked up on the daemon's PATH).
    pub fn cli_program(&self, cli: flotilla_actors::lane::CliKind, default: &str) -> String {
        self.clis
            .get(cli.as_str())
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    }

    /// How long a lane turn may make no progress before the watchdog acts.
    pub fn lane_stall(&self) -> Duration {
        Duration::from_secs_f64(self.lane_stall_secs.clamp(0.1, 7.0 * 86_400.0))
    }

    /// How long an actor may take to answer a watchdog ping.
    pub fn watchdog_timeout(&self) -> Duration {
        Duration::from_millis(self.watchdog_timeout_ms.max(10))
    }
}

/// The machine's hostname, cleaned into a host name.
pub fn machine_host_name() -> HostName {
    let uname = rustix::system::uname();
    HostName::sanitize(&uname.nodename().to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(HostConfig::parse("").expect("empty"), HostConfig::default());
        let c = HostConfig::parse("name = \"ws\"\nmax_message_bytes = 10\n").expect("valid");
        assert_eq!(c.name.expect("name").as_str(), "ws");
        assert_eq!(c.max_message_bytes, 10);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let err = HostConfig::parse("nmae = \"x\"").expect_err("typo");
        assert!(err.contains("nmae"), "{err}");
        let err = HostConfig::parse("name = \"bad name\"").expect_err("bad name");
        assert!(err.contains("invalid host name"), "{err}");
        assert!(HostConfig::parse("max_message_bytes = 0").is_err());
    }
}
