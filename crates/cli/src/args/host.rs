//! The daemon's own commands: `up` and `host run` with their settings,
//! `host join|status|install|uninstall`, `config` and `logs`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use flotilla_actors::lane::{CliKind, Permissions};

use super::choices;

/// `up`: the daemon's settings, and what to do when one already runs.
#[derive(Debug, Args)]
pub(crate) struct UpArgs {
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// When a daemon already runs, stop it and start it with these settings
    /// (without it, settings that differ from the running daemon's are refused, exit 6).
    #[arg(long)]
    pub(crate) restart: bool,
    /// Also write the given settings into config.toml, so a later start (a service's) keeps them.
    #[arg(long)]
    pub(crate) save: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The host's name (default: config.toml's `name`, else the machine's hostname).
    #[arg(long, value_name = "HOST")]
    pub(crate) name: Option<String>,
    /// Link to the hub at ADDR (`HOST:PORT`, or `auto` to find this CA's hub over mDNS; default: config.toml's `hub`).
    #[arg(long, value_name = "ADDR")]
    pub(crate) hub: Option<String>,
    /// The name in the hub's certificate (default: config.toml's `hub_name`, else ADDR's host).
    #[arg(long, value_name = "NAME", requires = "hub")]
    pub(crate) hub_name: Option<String>,
    /// Let hosts of the federation run these CLIs here as lanes (comma-separated; default: config.toml's `allow_remote_lanes`).
    #[arg(long, value_name = "CLI,...", value_delimiter = ',', value_parser = choices::any_cli())]
    pub(crate) allow_remote_lanes: Option<Vec<CliKind>>,
    /// Only peers in one of these groups may place lanes here (default: config.toml's `allow_remote_groups`).
    #[arg(long, value_name = "GROUP,...", value_delimiter = ',')]
    pub(crate) allow_remote_groups: Option<Vec<String>>,
    /// A remote lane's `-C` must resolve inside one of these directories (default: config.toml's `remote_lane_roots`, else STATE/remote-lanes).
    #[arg(long, value_name = "DIR,...", value_delimiter = ',')]
    pub(crate) remote_lane_roots: Option<Vec<std::path::PathBuf>>,
    /// The highest permission mode granted to remote lanes (default: config.toml's `remote_lane_max_permissions`, else workspace).
    #[arg(long, value_name = "MODE", value_parser = choices::permissions())]
    pub(crate) remote_lane_max_permissions: Option<Permissions>,
    /// The environment variables a remote lane may set (default: config.toml's `remote_lane_env`, else none).
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub(crate) remote_lane_env: Option<Vec<String>>,
    /// Accept native arguments for remote lanes of CLIs other than exec (default: config.toml's `remote_lane_args`).
    #[arg(long)]
    pub(crate) remote_lane_args: bool,
    /// Start with a new, empty store when state/host.redb is missing although this home had one.
    #[arg(long)]
    pub(crate) new_store: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Every key with its value, from config.toml or the default.
    Show,
    /// Where config.toml is (it may not exist yet: the defaults apply).
    Path,
    /// One key's value (`hub_server.KEY` for the hub's).
    Get {
        /// The key.
        key: String,
    },
    /// Set a key in config.toml, keeping its comments; checked first, as the daemon would.
    Set {
        /// The key.
        key: String,
        /// A TOML value (`30`, `true`, `["exec", "claude"]`), or plain text.
        value: String,
    },
    /// Remove a key from config.toml: its default applies again.
    Unset {
        /// The key.
        key: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct LogsArgs {
    /// The hub's log (`logs/hub.log`) instead of the daemon's.
    #[arg(long)]
    pub(crate) hub: bool,
    /// How many of the last lines to print (0: all).
    #[arg(short = 'n', long, value_name = "N", default_value_t = 200)]
    pub(crate) lines: usize,
    /// Keep printing what is written after, until interrupted.
    #[arg(short, long)]
    pub(crate) follow: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HostCommand {
    /// Run the daemon in the foreground (what a service manager runs).
    Run(RunArgs),
    /// Enroll this host with a token from `flotilla hub invite HOST`.
    Join {
        /// The token line (flotilla-enroll-v1:...).
        token: String,
    },
    /// Version, uptime, actors, peers and messages.
    Status,
    /// Write a systemd user unit (Linux) or launchd agent (macOS) for this home.
    Install(ServiceArgs),
    /// Remove the service file written by `host install`.
    Uninstall(ServiceArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ServiceArgs {
    /// Print what would be written or removed, and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// The flotilla binary the service runs (default: this one, refused when it sits in a cargo build directory).
    #[arg(long, value_name = "PATH")]
    pub(crate) binary: Option<PathBuf>,
    /// After writing the file, enable and start the service now (systemctl --user enable --now, launchctl bootstrap).
    #[arg(long)]
    pub(crate) enable: bool,
}
