//! The hub's, the certificates' and discovery's arguments: `hub
//! init|run|install|uninstall|invite|revoke|roster|web|groups`, `certs issue|show`,
//! `discover`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::ServiceArgs;
use super::duration::{DurationError, parse_duration, parse_within};

#[derive(Debug, Args)]
pub(crate) struct DiscoverArgs {
    /// How long to listen for answers, 100ms to 60s (`3s`, `500ms`, `2`).
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = parse_browse_window)]
    pub(crate) timeout: Duration,
}

/// A browse window: from 100 ms to 60 s.
fn parse_browse_window(value: &str) -> Result<Duration, DurationError> {
    parse_within(value, Duration::from_millis(100)..=Duration::from_secs(60))
}

#[derive(Debug, Subcommand)]
pub(crate) enum HubCommand {
    /// Make the CA and the hub's certificate in this home, and record where the hub listens.
    Init(HubInitArgs),
    /// Run the hub in the foreground (logs to stderr; SIGTERM/SIGINT stop it).
    Run,
    /// Write a systemd user unit (Linux) or launchd agent (macOS) that runs this home's hub.
    Install(ServiceArgs),
    /// Remove the service file written by `hub install`.
    Uninstall(ServiceArgs),
    /// The operator's view of the federation: every host, its link, peers, lanes and queue.
    Roster,
    /// Serve the read-only web roster of the running hub on loopback (URL and token printed once).
    Web(HubWebArgs),
    /// Make a single-use enrollment token for HOST (printed alone on stdout).
    Invite(HubInviteArgs),
    /// Revoke every certificate issued to HOST; a running hub drops its link.
    Revoke {
        /// The host's name.
        host: String,
    },
    /// Which hosts may have peers in which group (hub-groups.toml); unlisted groups are open to every host.
    Groups {
        /// Change the list (without one: show it).
        #[command(subcommand)]
        change: Option<HubGroupsCommand>,
    },
}

/// Changes to the hub's group list; a running hub follows within a second.
#[derive(Debug, Subcommand)]
pub(crate) enum HubGroupsCommand {
    /// Let hosts matching PATTERN (an exact name, or a glob with * and ?) have peers in GROUP; lists GROUP.
    Allow {
        /// The group.
        group: String,
        /// Host names or patterns, e.g. laptop 'workstation-*'.
        #[arg(required = true, value_name = "PATTERN")]
        patterns: Vec<String>,
    },
    /// Take patterns out of GROUP's list; without any, all of them: GROUP stays listed, closed to every host.
    Deny {
        /// The group.
        group: String,
        /// The patterns to take out (default: all).
        #[arg(value_name = "PATTERN")]
        patterns: Vec<String>,
    },
    /// Take GROUP off the list: every enrolled host may use it again.
    Open {
        /// The group.
        group: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct HubWebArgs {
    /// The TCP address to serve on, loopback only (default: [hub_server] web, else 127.0.0.1:7780).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct HubInviteArgs {
    /// The host the token enrolls.
    pub(crate) host: String,
    /// How long the token works (`30m`, `1h`, `2days`, or seconds).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub(crate) ttl: Duration,
    /// An address hosts reach the hub by (IP, DNS name, either with :PORT); repeatable.
    /// Default: [hub_server] listen, else the hub certificate's names.
    #[arg(long = "addr", value_name = "ADDR")]
    pub(crate) addrs: Vec<String>,
    /// Skip checking that the hub answers at the token's addresses (3 s each, at once).
    #[arg(long)]
    pub(crate) no_check: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HubInitArgs {
    /// The hub's DNS name, which hosts dial (e.g. hub.home.arpa).
    #[arg(long, value_name = "HUB")]
    pub(crate) name: String,
    /// The UDP address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:7700")]
    pub(crate) listen: String,
    /// Another DNS name or IP address the hub is reached by (repeatable).
    #[arg(long = "san", value_name = "NAME_OR_IP")]
    pub(crate) sans: Vec<String>,
    /// The UDP address of the enrollment listener (default: --listen's IP, next port).
    #[arg(long, value_name = "ADDR")]
    pub(crate) enroll_listen: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CertsCommand {
    /// At the CA: make a host's key and certificate, to copy to that host's certs/.
    Issue {
        /// The host's name.
        #[arg(long, value_name = "HOST")]
        name: String,
        /// Where to write host.key, host.pem and ca.pem (default: certs/issued/HOST).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// What this home's certs/ holds: CA fingerprint, names, expiry (never a key).
    Show,
}
