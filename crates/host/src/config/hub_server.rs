//! `[hub_server]` in `config.toml`: the hub run from a home (written by
//! `flotilla hub init`, read by `flotilla hub run`), and how `hub init`
//! records it without losing the rest of the file.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, HostConfig};

/// The hub run from this home (`flotilla hub run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HubServerConfig {
    /// The hub's name: the DNS name in its certificate, which hosts dial.
    pub name: String,
    /// The UDP address it listens on.
    pub listen: String,
    /// A message queued for an offline host is dropped after this many
    /// seconds (default 7 days); its sender's outbox shows why.
    #[serde(
        default = "default_queue_ttl_secs",
        skip_serializing_if = "is_default_queue_ttl"
    )]
    pub queue_ttl_secs: u64,
    /// Most messages queued at the hub per offline host.
    #[serde(
        default = "default_queue_max_messages",
        skip_serializing_if = "is_default_queue_max_messages"
    )]
    pub queue_max_messages: u64,
    /// Most bytes (bodies and summaries) queued at the hub per offline host.
    #[serde(
        default = "default_queue_max_bytes",
        skip_serializing_if = "is_default_queue_max_bytes"
    )]
    pub queue_max_bytes: u64,
    /// An offline host not seen for this many seconds is forgotten: its
    /// roster, queue and owed receipts are removed (default 30 days).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forget_hosts_after_secs: Option<u64>,
    /// Most bytes waiting to be sent to one linked host; a host that does
    /// not read past this has its link closed (default 32 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_queue_bytes: Option<u64>,
    /// Frames per second one host may send, sustained (default 50,000);
    /// over it the host is slowed, and cut after `host_budget_cut_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_frames_per_sec: Option<u64>,
    /// Bytes per second one host may send, sustained (default 256 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bytes_per_sec: Option<u64>,
    /// How long a host may stay over its budget before its link is closed
    /// (default 30 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_budget_cut_secs: Option<u64>,
    /// Whether `hub run` advertises the hub over mDNS (name, CA
    /// fingerprint, port), so hosts find it with `--hub auto`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub advertise: bool,
    /// The UDP address of its enrollment listener (`hub invite`, `host
    /// join`, renewals); defaults to `listen`'s IP with the next port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enroll_listen: Option<String>,
    /// How long the host certificates it issues last, in days (default 90).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cert_days: Option<u64>,
    /// The TCP address (loopback only) on which `hub run` also serves the
    /// read-only web roster; absent: no web roster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<String>,
}

impl HubServerConfig {
    /// Refuses the values that would make the hub unusable, naming the key.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.queue_ttl_secs == 0 {
            return Err("[hub_server] queue_ttl_secs must be at least 1 (seconds): 0 would drop every queued message at once; leave it out for the default of 7 days\n".into());
        }
        let zeros = [
            (
                "link_queue_bytes",
                self.link_queue_bytes,
                "every link would be closed at its first frame",
            ),
            (
                "forget_hosts_after_secs",
                self.forget_hosts_after_secs,
                "every host would be forgotten as soon as its link dropped",
            ),
            (
                "host_frames_per_sec",
                self.host_frames_per_sec,
                "no host could send anything",
            ),
            (
                "host_bytes_per_sec",
                self.host_bytes_per_sec,
                "no host could send anything",
            ),
        ];
        if let Some(web) = &self.web {
            flotilla_hub::web::check_listen(web)
                .map_err(|e| format!("[hub_server] web = {web:?}: {e}\n"))?;
        }
        for (key, value, why) in zeros {
            if value == Some(0) {
                return Err(format!(
                    "[hub_server] {key} must be at least 1: with 0 {why}; leave it out for the default\n"
                ));
            }
        }
        Ok(())
    }

    /// What one host may send (the defaults where a key is absent).
    pub fn host_budget(&self) -> flotilla_hub::budget::BudgetLimits {
        let mut limits = flotilla_hub::budget::BudgetLimits::default();
        if let Some(n) = self.host_frames_per_sec {
            limits.frames_per_sec = n as f64;
        }
        if let Some(n) = self.host_bytes_per_sec {
            limits.bytes_per_sec = n as f64;
        }
        if let Some(n) = self.host_budget_cut_secs {
            limits.cut_after = Duration::from_secs(n);
        }
        limits
    }

    /// The main listen address.
    pub fn listen_addr(&self) -> Result<std::net::SocketAddr, String> {
        self.listen
            .parse()
            .map_err(|_| format!("[hub_server] listen = {:?} is not IP:PORT", self.listen))
    }

    /// The enrollment listen address: `enroll_listen`, else `listen`'s IP
    /// with the next port.
    pub fn enroll_addr(&self) -> Result<std::net::SocketAddr, String> {
        match &self.enroll_listen {
            Some(text) => text
                .parse()
                .map_err(|_| format!("[hub_server] enroll_listen = {text:?} is not IP:PORT")),
            None => {
                let listen = self.listen_addr()?;
                let port = listen.port().checked_add(1).ok_or_else(|| {
                    "[hub_server] listen uses port 65535; set enroll_listen explicitly".to_owned()
                })?;
                Ok(std::net::SocketAddr::new(listen.ip(), port))
            }
        }
    }

    /// How long issued host certificates last.
    pub fn host_validity(&self) -> Duration {
        match self.host_cert_days {
            Some(days) => Duration::from_secs(days.clamp(1, 3650) * 86_400),
            None => flotilla_actors::pki::HOST_VALIDITY,
        }
    }
}

fn default_queue_ttl_secs() -> u64 {
    7 * 24 * 3600
}

fn default_queue_max_messages() -> u64 {
    10_000
}

fn default_queue_max_bytes() -> u64 {
    256 * 1024 * 1024
}

fn is_default_queue_ttl(v: &u64) -> bool {
    *v == default_queue_ttl_secs()
}

fn is_default_queue_max_messages(v: &u64) -> bool {
    *v == default_queue_max_messages()
}

fn is_default_queue_max_bytes(v: &u64) -> bool {
    *v == default_queue_max_bytes()
}

impl HubServerConfig {
    /// A hub named `name` listening on `listen`, other keys at their defaults.
    pub fn new(name: String, listen: String) -> Self {
        Self {
            name,
            listen,
            queue_ttl_secs: default_queue_ttl_secs(),
            queue_max_messages: default_queue_max_messages(),
            queue_max_bytes: default_queue_max_bytes(),
            forget_hosts_after_secs: None,
            link_queue_bytes: None,
            host_frames_per_sec: None,
            host_bytes_per_sec: None,
            host_budget_cut_secs: None,
            advertise: true,
            enroll_listen: None,
            host_cert_days: None,
            web: None,
        }
    }
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Records this home's hub in `config.toml` (`[hub_server]`): appended to
/// the file, keeping what is there; an existing `[hub_server]` is replaced.
pub fn write_hub_server(path: &Path, hub: &HubServerConfig) -> Result<(), ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    };
    let current = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(read_error(e)),
    };
    let mut config = HostConfig::parse(&current).map_err(|message| ConfigError::Parse {
        path: path.display().to_string(),
        message,
    })?;
    let table = toml::to_string(hub).unwrap_or_default();
    let text = if config.hub_server.is_some() {
        config.hub_server = Some(hub.clone());
        toml::to_string(&config).unwrap_or_default()
    } else {
        let sep = if current.is_empty() || current.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        format!("{current}{sep}\n[hub_server]\n{table}")
    };
    std::fs::write(path, text).map_err(read_error)
}
