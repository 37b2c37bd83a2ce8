//! A host's `config.toml`: what the daemon reads at start. Every key is
//! optional; a missing file means the embedded defaults. Unknown keys are an
//! error that names them, so a typo never silently does nothing.

use std::path::Path;
use std::time::Duration;

use flotilla_actors::names::HostName;
use flotilla_actors::store::OutboxRoom;
use serde::{Deserialize, Serialize};

#[cfg(test)]
mod fuzz_tests;
mod hub_server;
pub mod keys;

pub use hub_server::{HubServerConfig, write_hub_server};

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
    /// Models' context windows in tokens, over the built-in table
    /// (`[context_windows] "my-local-model" = 32768`).
    pub context_windows: crate::lanes::cli::ContextWindows,
    /// The hub to link to, `HOST:PORT` or `auto` (found over mDNS; `--hub`
    /// overrides); no link without it.
    pub hub: Option<String>,
    /// The name the hub's certificate carries; defaults to the host part of
    /// `hub` when that is a DNS name.
    pub hub_name: Option<String>,
    /// The hub's enrollment address, `HOST:PORT`, where this host renews
    /// its certificate (written by `host join`); defaults to `hub` with the
    /// next port.
    pub hub_enroll: Option<String>,
    /// First delay before reconnecting to the hub, in milliseconds.
    pub hub_reconnect_min_ms: u64,
    /// Longest delay between reconnect attempts, in milliseconds.
    pub hub_reconnect_max_ms: u64,
    /// How often the link pings the hub (its round-trip time), in milliseconds.
    pub hub_ping_interval_ms: u64,
    /// Time allowed to reach the hub and get its answer, in milliseconds.
    pub hub_connect_timeout_ms: u64,
    /// How long a send to peers of other hosts waits for the hub's verdict
    /// before it is answered with the message still `accepted` (the outbox
    /// follows it), in milliseconds.
    pub hub_verdict_wait_ms: u64,
    /// Delays between attempts while the hub has never been reached since
    /// the daemon started (a host booted without network), in
    /// milliseconds; the last one repeats.
    pub hub_startup_retry_ms: Vec<u64>,
    /// The CLIs that hosts of the federation may run here as lanes
    /// (`exec`, `claude`...); empty: no remote lanes (`--allow-remote-lanes`).
    pub allow_remote_lanes: Vec<String>,
    /// The groups whose peers may place lanes here; a requester must be in
    /// one of them (`--allow-remote-groups`).
    pub allow_remote_groups: Vec<String>,
    /// Directories a remote lane's `-C` must resolve inside; empty:
    /// `STATE/remote-lanes` only, where a lane without `-C` gets a fresh
    /// directory.
    pub remote_lane_roots: Vec<std::path::PathBuf>,
    /// Where a remote lane that names no `-C` works (inside a root, checked
    /// as a `-C` would be); unset: a fresh empty directory under
    /// `STATE/remote-lanes`.
    pub remote_lane_dir: Option<std::path::PathBuf>,
    /// The highest permission mode granted to remote lanes (`default`,
    /// `workspace` or `bypass`); a request above it is refused.
    pub remote_lane_max_permissions: String,
    /// The environment variables a remote lane may set; any other is refused.
    pub remote_lane_env: Vec<String>,
    /// Whether remote lanes of CLIs other than `exec` take native arguments.
    pub remote_lane_args: bool,
    /// Whether the daemon advertises this host over mDNS
    /// (`_flotilla-host._udp.local.`: its name and CA fingerprint), so
    /// `flotilla discover` lists it. Off by default.
    pub advertise: bool,
    /// Messages for other hosts that may wait for the hub (while it is
    /// away); more are refused (`unavailable`) until it takes some.
    pub outbox_max_messages: u64,
    /// Bytes of bodies that may wait for the hub.
    pub outbox_max_bytes: u64,
    /// This home's hub, when it runs one (`[hub_server]`, written by `hub init`).
    pub hub_server: Option<HubServerConfig>,
    /// The capability matrix fleets route by (`[[fleet_matrix]]`); empty:
    /// no routing check.
    pub fleet_matrix: Vec<flotilla_actors::fleet::matrix::CapabilityCell>,
}

/// `hub = "auto"`: find the hub of this home's CA over mDNS.
pub const HUB_AUTO: &str = "auto";

/// Where and how a host links to its hub, resolved from the config and
/// `--hub`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubTarget {
    /// `HOST:PORT`, resolved at every attempt, or `auto`.
    pub addr: String,
    /// The name the hub's certificate must carry (with `auto`, empty unless
    /// `hub_name` is set: the hub's advertised name is used).
    pub name: String,
}

impl HubTarget {
    /// Whether the hub is found over mDNS (`hub = "auto"`).
    pub fn is_auto(&self) -> bool {
        self.addr == HUB_AUTO
    }
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
            context_windows: Default::default(),
            hub: None,
            hub_name: None,
            hub_enroll: None,
            hub_reconnect_min_ms: 500,
            hub_reconnect_max_ms: 30_000,
            hub_ping_interval_ms: 5_000,
            hub_connect_timeout_ms: 10_000,
            hub_verdict_wait_ms: 5_000,
            hub_startup_retry_ms: vec![30_000, 60_000, 120_000, 300_000],
            allow_remote_lanes: Vec::new(),
            allow_remote_groups: Vec::new(),
            remote_lane_roots: Vec::new(),
            remote_lane_dir: None,
            remote_lane_max_permissions: "workspace".to_owned(),
            remote_lane_env: Vec::new(),
            remote_lane_args: false,
            advertise: false,
            outbox_max_messages: OutboxRoom::default().messages,
            outbox_max_bytes: OutboxRoom::default().bytes,
            hub_server: None,
            fleet_matrix: Vec::new(),
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
        if config.outbox_max_messages == 0 || config.outbox_max_bytes == 0 {
            return Err(
                "outbox_max_messages and outbox_max_bytes must be above 0 (no message \
                 could reach another host)\n"
                    .into(),
            );
        }
        if config.lane_stall_secs.is_nan() {
            return Err("lane_stall_secs must be a number of seconds, not nan\n".into());
        }
        config.hub_target()?;
        if let Some(hub) = &config.hub_server {
            hub.check()?;
        }
        flotilla_actors::fleet::matrix::validate(&config.fleet_matrix).map_err(|e| e + "\n")?;
        config.context_windows.check()?;
        Ok(config)
    }

    /// How much may wait for the hub.
    pub fn outbox_room(&self) -> OutboxRoom {
        OutboxRoom {
            messages: self.outbox_max_messages,
            bytes: self.outbox_max_bytes,
        }
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
        let secs = match self.lane_stall_secs {
            s if s.is_nan() => Self::default().lane_stall_secs,
            s => s.clamp(0.1, 7.0 * 86_400.0),
        };
        Duration::from_secs_f64(secs)
    }

    /// The hub to link to, if any: `hub` with `hub_name`, or the host part
    /// of `hub` when it is a DNS name.
    pub fn hub_target(&self) -> Result<Option<HubTarget>, String> {
        let Some(addr) = self.hub.clone() else {
            return Ok(None);
        };
        if addr == HUB_AUTO {
            let name = self.hub_name.clone().unwrap_or_default();
            return Ok(Some(HubTarget { addr, name }));
        }
        let Some((host, port)) = addr.rsplit_once(':') else {
            return Err(format!(
                "hub = {addr:?} needs a port, as in \"hub.home.arpa:7700\" (or use \"auto\")\n"
            ));
        };
        if port.parse::<u16>().is_err() {
            return Err(format!("hub = {addr:?}: {port:?} is not a port number\n"));
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = match &self.hub_name {
            Some(name) => name.clone(),
            None if host.parse::<std::net::IpAddr>().is_err() => host.to_owned(),
            None => {
                return Err(format!(
                    "hub = {addr:?} is an IP address, so set hub_name to the hub's name \
                     (the --name given to `flotilla hub init`)\n"
                ));
            }
        };
        Ok(Some(HubTarget { addr, name }))
    }

    /// Where to renew this host's certificate: `hub_enroll`, else `hub`
    /// with the next port.
    pub fn hub_enroll_addr(&self) -> Option<String> {
        if let Some(addr) = &self.hub_enroll {
            return Some(addr.clone());
        }
        let (host, port) = self.hub.as_deref()?.rsplit_once(':')?;
        let port = port.parse::<u16>().ok()?.checked_add(1)?;
        Some(format!("{host}:{port}"))
    }

    /// The first and longest delays between attempts to reach the hub.
    pub fn hub_reconnect(&self) -> (Duration, Duration) {
        let min = Duration::from_millis(self.hub_reconnect_min_ms.max(1));
        (
            min,
            Duration::from_millis(self.hub_reconnect_max_ms).max(min),
        )
    }

    /// The delays between attempts before the hub was ever reached.
    pub fn hub_startup_retry(&self) -> Vec<Duration> {
        let mut out: Vec<Duration> = self
            .hub_startup_retry_ms
            .iter()
            .map(|ms| Duration::from_millis((*ms).max(1)))
            .collect();
        if out.is_empty() {
            out.push(self.hub_reconnect().0);
        }
        out
    }

    /// How often the link pings the hub.
    pub fn hub_ping_interval(&self) -> Duration {
        Duration::from_millis(self.hub_ping_interval_ms.max(10))
    }

    /// Time allowed to reach the hub.
    pub fn hub_connect_timeout(&self) -> Duration {
        Duration::from_millis(self.hub_connect_timeout_ms.max(10))
    }

    /// How long a send waits for the hub's verdict: at most an hour, so
    /// no setting can overflow a deadline.
    pub fn hub_verdict_wait(&self) -> Duration {
        Duration::from_millis(self.hub_verdict_wait_ms.min(3_600_000))
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
mod tests;
