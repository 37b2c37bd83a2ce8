//! The command line, as plain data (clap derive). Nothing here touches the
//! daemon; `commands` turns these into calls.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod hub;
mod lane;

pub(crate) use hub::*;
pub(crate) use lane::*;

/// Flotilla: AI coding-agent CLIs and plain commands as one governed team.
#[derive(Debug, Parser)]
#[command(name = "flotilla", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// Keep everything of this host under DIR (config.toml, state/, run/, logs/, certs/).
    #[arg(long, global = true, env = "FLOTILLA_HOME", value_name = "DIR")]
    pub(crate) home: Option<PathBuf>,
    /// Print machine-readable JSON (shapes documented in docs/).
    #[arg(long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start the daemon in the background if it is not running; returns once it answers.
    Up(RunArgs),
    /// Stop the daemon gracefully.
    Down,
    /// The host daemon: run, status, install, uninstall.
    #[command(subcommand)]
    Host(HostCommand),
    /// Register, remove or rename peers.
    #[command(subcommand)]
    Peer(PeerCommand),
    /// List the peers that share a group with you.
    Peers(AsPeer),
    /// Send a message to one or more peers (all or nothing).
    Send(SendArgs),
    /// Send a message to every other member of a group.
    Broadcast(BroadcastArgs),
    /// Answer the sender of a message you received.
    Reply(ReplyArgs),
    /// Read your messages, oldest first.
    Inbox(InboxArgs),
    /// Every peer on this host (the operator's view); --all adds what it sees of other hosts.
    Roster(RosterCliArgs),
    /// What a peer sent and where each message stands (here, queued at the hub, delivered).
    Outbox(OutboxCliArgs),
    /// Lanes: supervised worker sessions of agent CLIs and plain commands.
    Lane(Box<LaneCli>),
    /// The hub: make its CA and certificate, run it.
    #[command(subcommand)]
    Hub(HubCommand),
    /// Certificates: issue a host's at the CA, show what this home holds.
    #[command(subcommand)]
    Certs(CertsCommand),
    /// List the hubs and hosts that answer on the LAN (mDNS); needs no daemon.
    Discover(DiscoverArgs),
    /// Check directories, permissions, the daemon and its store.
    Doctor,
    /// Measure Flotilla on this machine.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Serve Flotilla's tools to an agent over MCP (stdio), acting as one peer.
    Mcp(McpArgs),
    /// Teach the agent CLIs installed here about Flotilla (a skill or
    /// extension per CLI), show it, or remove exactly what was written.
    #[command(subcommand)]
    Integrations(IntegrationsCommand),
    /// Internal: the hooks of an interactive session (started by its CLI).
    #[command(hide = true, subcommand)]
    Hook(HookCommand),
    /// Internal: supervises one lane turn's process (started by the daemon).
    #[command(hide = true)]
    LaneShim {
        /// The turn's directory.
        #[arg(long)]
        dir: PathBuf,
        /// Feed DIR/prompt to the command's stdin.
        #[arg(long)]
        stdin_prompt: bool,
        /// The command.
        #[arg(last = true, required = true)]
        argv: Vec<String>,
    },
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
    #[arg(long, value_name = "CLI,...", value_delimiter = ',')]
    pub(crate) allow_remote_lanes: Option<Vec<String>>,
    /// Only peers in one of these groups may place lanes here (default: config.toml's `allow_remote_groups`).
    #[arg(long, value_name = "GROUP,...", value_delimiter = ',')]
    pub(crate) allow_remote_groups: Option<Vec<String>>,
    /// A remote lane's `-C` must resolve inside one of these directories (default: config.toml's `remote_lane_roots`, else STATE/remote-lanes).
    #[arg(long, value_name = "DIR,...", value_delimiter = ',')]
    pub(crate) remote_lane_roots: Option<Vec<std::path::PathBuf>>,
    /// The highest permission mode granted to remote lanes: default, workspace or bypass (default: config.toml's `remote_lane_max_permissions`, else workspace).
    #[arg(long, value_name = "MODE")]
    pub(crate) remote_lane_max_permissions: Option<String>,
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

/// `integrations install|uninstall|status`.
#[derive(Debug, Subcommand)]
pub(crate) enum IntegrationsCommand {
    /// Write the instructions for each installed CLI (or --cli).
    Install(IntegrationsArgs),
    /// Remove exactly what `install` wrote.
    Uninstall(IntegrationsArgs),
    /// What is installed, per CLI.
    Status(IntegrationsArgs),
}

/// Which CLIs, and whether to only show what would change.
#[derive(Debug, Args)]
pub(crate) struct IntegrationsArgs {
    /// Only this CLI (claude, codex, gemini, qwen).
    #[arg(long, value_name = "CLI")]
    pub(crate) cli: Option<String>,
    /// Show what would be written or removed, change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// The hooks of an interactive session.
#[derive(Debug, Subcommand)]
pub(crate) enum HookCommand {
    /// Block until a message arrives, then hand it over on stderr and exit 2
    /// (an `asyncRewake` hook); exit 0 when the session ends.
    Wait(HookArgs),
    /// Hand over waiting messages as the hook's additional context.
    Drain {
        /// The hook event (`PostToolUse`, `UserPromptSubmit`, `BeforeAgent`,
        /// `AfterTool`).
        event: String,
        #[command(flatten)]
        who: HookArgs,
    },
    /// Answer a turn's end (`Stop`, `AfterAgent`): when messages wait, the
    /// turn goes on with them (a `block` decision whose reason they are).
    Stop {
        /// The hook event.
        event: String,
        #[command(flatten)]
        who: HookArgs,
    },
    /// Beside an interactive Codex session: hand each message over with
    /// `codex queue` (a new turn when idle, the next turn when busy); ends
    /// with the session.
    Relay {
        /// The Codex executable.
        #[arg(long, value_name = "PATH", default_value = "codex")]
        codex: String,
        #[command(flatten)]
        who: HookArgs,
    },
}

/// Whose mailbox a hook reads.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The session peer.
    #[arg(long = "as", value_name = "NAME", env = "FLOTILLA_PEER")]
    pub(crate) as_peer: String,
    /// The session's process: the hook stops when it ends.
    #[arg(long, value_name = "PID", env = "FLOTILLA_SESSION_PID")]
    pub(crate) session_pid: Option<u32>,
    /// Read the hook's input (JSON on stdin) and record its `session_id`
    /// as the session's thread, for the relay (Codex).
    #[arg(long)]
    pub(crate) record_thread: bool,
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The peer the tools act as (a lane's processes have FLOTILLA_PEER);
    /// without one only the read-only tools work.
    #[arg(long = "as", value_name = "NAME", env = "FLOTILLA_PEER")]
    pub(crate) as_peer: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RosterCliArgs {
    /// Also the peers of other hosts this host may see through the hub.
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, Args)]
pub(crate) struct OutboxCliArgs {
    #[command(flatten)]
    pub(crate) sender: AsPeer,
    /// How many of the latest messages to show (at most 1000).
    #[arg(long, default_value_t = 20)]
    pub(crate) limit: usize,
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
}

#[derive(Debug, Subcommand)]
pub(crate) enum PeerCommand {
    /// Register a mailbox peer (or add groups to it).
    Join {
        /// The peer's name: letters, digits, '.', '_', '-', at most 64.
        name: String,
        /// A group to join (repeatable).
        #[arg(short = 'g', long = "group", value_name = "GROUP")]
        groups: Vec<String>,
        /// What is behind the peer (shell, ci, ...).
        #[arg(long, value_name = "P")]
        product: Option<String>,
    },
    /// Remove a peer.
    Leave {
        /// The peer's name.
        name: String,
        /// Leave even with unread messages (they are dropped).
        #[arg(long)]
        force: bool,
    },
    /// Rename a peer, keeping its groups and unread messages.
    Rename {
        /// Current name.
        old: String,
        /// New name.
        new: String,
    },
    /// Run Claude Code interactively here, as a session peer with Flotilla's tools and live delivery.
    Claude(SessionCli),
    /// Run Codex interactively here, as a session peer with Flotilla's tools.
    Codex(SessionCli),
    /// Run Gemini CLI interactively here, as a session peer with Flotilla's tools.
    Gemini(SessionCli),
    /// Run Qwen Code interactively here, as a session peer with Flotilla's tools.
    Qwen(SessionCli),
    /// Run pi interactively here, as a session peer (it uses the flotilla command).
    Pi(SessionCli),
    /// Run opencode interactively here, as a session peer with Flotilla's tools.
    Opencode(SessionCli),
    /// Run Grok CLI interactively here, as a session peer (it uses the flotilla command).
    Grok(SessionCli),
}

/// An interactive session peer.
#[derive(Debug, Args)]
pub(crate) struct SessionCli {
    /// The peer's name (default: CLI-PID).
    #[arg(short = 'n', long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// A group to join (repeatable).
    #[arg(short = 'g', long = "group", value_name = "GROUP")]
    pub(crate) groups: Vec<String>,
    /// Adopt this native conversation (the CLI's own resume).
    #[arg(long, value_name = "ID")]
    pub(crate) resume: Option<String>,
    /// Arguments for the CLI itself, after `--`.
    #[arg(last = true, value_name = "ARGS")]
    pub(crate) args: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct AsPeer {
    /// Act as this peer of this host (inside a lane: the lane itself, from
    /// FLOTILLA_PEER).
    #[arg(long = "as", value_name = "NAME", env = "FLOTILLA_PEER")]
    pub(crate) as_peer: String,
}

#[derive(Debug, Args)]
pub(crate) struct Body {
    /// The message; `-` reads it from stdin.
    #[arg(value_name = "MESSAGE")]
    pub(crate) message: String,
    /// A one-line summary.
    #[arg(long, value_name = "S")]
    pub(crate) summary: Option<String>,
    /// The message id; reuse it when retrying so the message is stored once.
    #[arg(long, value_name = "ID")]
    pub(crate) id: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    #[command(flatten)]
    pub(crate) sender: AsPeer,
    /// Targets: peer ids (HOST/NAME) or names, comma-separated or repeated.
    #[arg(long, required = true, value_delimiter = ',', value_name = "T")]
    pub(crate) to: Vec<String>,
    #[command(flatten)]
    pub(crate) body: Body,
}

#[derive(Debug, Args)]
pub(crate) struct BroadcastArgs {
    #[command(flatten)]
    pub(crate) sender: AsPeer,
    /// The group; you must be a member.
    #[arg(short = 'g', long = "group", value_name = "GROUP")]
    pub(crate) group: String,
    #[command(flatten)]
    pub(crate) body: Body,
}

#[derive(Debug, Args)]
pub(crate) struct ReplyArgs {
    #[command(flatten)]
    pub(crate) sender: AsPeer,
    /// The id of the message you answer.
    #[arg(long, value_name = "ID")]
    pub(crate) to_message: String,
    #[command(flatten)]
    pub(crate) body: Body,
}

#[derive(Debug, Args)]
pub(crate) struct InboxArgs {
    #[command(flatten)]
    pub(crate) reader: AsPeer,
    /// Wait up to SECS for a first message.
    #[arg(long, value_name = "SECS", default_value_t = 0.0)]
    pub(crate) wait: f64,
    /// Show without acknowledging: the messages stay in the inbox.
    #[arg(long)]
    pub(crate) peek: bool,
    /// At most N messages.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) limit: u32,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BenchCommand {
    /// One host: send-to-inbox latency, throughput, memory, against a bare redb commit.
    Local(BenchLocalArgs),
    /// Lanes: the cost of `lane run --cli exec -- true` over `true`, and memory with idle lanes.
    Lanes(BenchLanesArgs),
    /// Federation: cross-host messaging through a real hub and the hub with many simulated hosts, against a bare QUIC echo.
    Federation(BenchFederationArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BenchFederationArgs {
    /// Messages for the cross-host throughput run (at most 300 of them also time the latency).
    #[arg(long, default_value_t = 2000)]
    pub(crate) messages: usize,
    /// Simulated hosts linked to the hub.
    #[arg(long, default_value_t = 200)]
    pub(crate) hosts: usize,
    /// Peers on each simulated host.
    #[arg(long, default_value_t = 10)]
    pub(crate) peers_per_host: usize,
}

#[derive(Debug, Args)]
pub(crate) struct BenchLanesArgs {
    /// Runs for the timing figures.
    #[arg(long, default_value_t = 30)]
    pub(crate) runs: usize,
    /// Idle lanes for the memory figure.
    #[arg(long, default_value_t = 100)]
    pub(crate) idle_lanes: usize,
}

#[derive(Debug, Args)]
pub(crate) struct BenchLocalArgs {
    /// Messages for the latency run.
    #[arg(long, default_value_t = 500)]
    pub(crate) latency_messages: usize,
    /// Messages per throughput run.
    #[arg(long, default_value_t = 4000)]
    pub(crate) throughput_messages: usize,
    /// Messages queued for the memory figure.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) queued_messages: usize,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn send_splits_targets_on_commas() {
        let cli = Cli::try_parse_from([
            "flotilla", "send", "--as", "a", "--to", "b,c", "--to", "d", "hi",
        ])
        .expect("parse");
        let Command::Send(s) = cli.command else {
            panic!("send")
        };
        assert_eq!(s.to, ["b", "c", "d"]);
        assert_eq!(s.body.message, "hi");
    }

    #[test]
    fn json_and_home_are_global() {
        let cli =
            Cli::try_parse_from(["flotilla", "roster", "--json", "--home", "/x"]).expect("parse");
        assert!(cli.json);
        assert_eq!(cli.home.as_deref(), Some(std::path::Path::new("/x")));
    }

    #[test]
    fn discover_takes_a_duration_or_seconds() {
        let window = |args: &[&str]| {
            let cli = Cli::try_parse_from(args).expect("parse");
            let Command::Discover(d) = cli.command else {
                panic!("discover")
            };
            d.timeout
        };
        assert_eq!(window(&["flotilla", "discover"]).as_secs(), 3);
        let ms = window(&["flotilla", "discover", "--timeout", "500ms"]);
        assert_eq!(ms.as_millis(), 500);
        assert_eq!(
            window(&["flotilla", "discover", "--timeout", "2"]).as_secs(),
            2
        );
        for bad in ["0", "61s", "soon", "-1"] {
            assert!(
                Cli::try_parse_from(["flotilla", "discover", "--timeout", bad]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn hub_invite_takes_a_ttl_and_repeated_addresses() {
        let cli = Cli::try_parse_from([
            "flotilla", "hub", "invite", "laptop", "--ttl", "1s", "--addr", "a", "--addr", "b:1",
        ])
        .expect("parse");
        let Command::Hub(HubCommand::Invite(a)) = cli.command else {
            panic!("invite")
        };
        assert_eq!(a.ttl, std::time::Duration::from_secs(1));
        assert_eq!(a.addrs, ["a", "b:1"]);
        let cli = Cli::try_parse_from(["flotilla", "hub", "invite", "laptop"]).expect("parse");
        let Command::Hub(HubCommand::Invite(a)) = cli.command else {
            panic!("invite")
        };
        assert_eq!(a.ttl, std::time::Duration::from_secs(3600));
    }

    #[test]
    fn inbox_defaults() {
        let cli = Cli::try_parse_from(["flotilla", "inbox", "--as", "a"]).expect("parse");
        let Command::Inbox(i) = cli.command else {
            panic!("inbox")
        };
        assert!(!i.peek);
        assert_eq!(i.limit, 100);
        assert_eq!(i.wait, 0.0);
    }
}
