//! The arguments of peers and messages: `peer ...`, `peers`, `send`,
//! `broadcast`, `reply`, `inbox`, `roster`, `outbox`.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::duration::{DurationError, parse_within};

/// The longest `inbox --wait` (the daemon's own limit).
const INBOX_WAIT_MAX: Duration = Duration::from_secs(24 * 3600);

fn parse_inbox_wait(value: &str) -> Result<Duration, DurationError> {
    parse_within(value, Duration::ZERO..=INBOX_WAIT_MAX)
}

#[derive(Debug, Subcommand)]
pub(crate) enum PeerCommand {
    /// Register a mailbox peer (or add groups to it).
    #[command(after_help = "Examples:
  flotilla peer join lead -g myproject
  flotilla peer join ci -g myproject -g releases --product ci")]
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
    #[arg(
        long,
        required_unless_present = "batch",
        value_delimiter = ',',
        value_name = "T"
    )]
    pub(crate) to: Vec<String>,
    /// The message; `-` reads it from stdin.
    #[arg(value_name = "MESSAGE", required_unless_present = "batch")]
    pub(crate) message: Option<String>,
    /// A one-line summary.
    #[arg(long, value_name = "S")]
    pub(crate) summary: Option<String>,
    /// The message id; reuse it when retrying so the message is stored once.
    #[arg(long, value_name = "ID")]
    pub(crate) id: Option<String>,
    /// Send many messages from stdin, one JSON object per line
    /// ({"to": ["b"], "body": "...", "summary": "...", "id": "..."}), many
    /// in flight on one connection; each is answered on its own.
    #[arg(long, conflicts_with_all = ["to", "message", "summary", "id"])]
    pub(crate) batch: bool,
    /// With --batch: messages in flight at once.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "batch",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) in_flight: u16,
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
    /// Wait up to DURATION for a first message, at most 24h (`30`, `30s`, `5m`).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = parse_inbox_wait)]
    pub(crate) wait: Duration,
    /// Show without acknowledging: the messages stay in the inbox.
    #[arg(long)]
    pub(crate) peek: bool,
    /// At most N messages.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) limit: u32,
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
