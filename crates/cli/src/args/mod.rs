//! The command line, as plain data (clap derive). Nothing here touches the
//! daemon; `commands` turns these into calls.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod agents;
mod bench;
mod choices;
mod claim;
mod duration;
pub(crate) use duration::parse_within;
mod fleet;
mod host;
mod hub;
mod lane;
mod mail;
mod ready;

pub(crate) use agents::*;
pub(crate) use bench::*;
pub(crate) use choices::INTEGRATED_CLIS;
pub(crate) use claim::*;
pub(crate) use fleet::*;
pub(crate) use host::*;
pub(crate) use hub::*;
pub(crate) use lane::*;
pub(crate) use mail::*;
pub(crate) use ready::*;

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
    /// A daemon or hub started by this command logs more (-v: debug, -vv: trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// No progress or notes on stderr (errors and warnings still print); a daemon started here logs warnings only.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Whether a command line asks for `--json`, read from the raw arguments
/// (for a line clap refused): `--json` anywhere before a `--`.
pub(crate) fn wants_json(args: impl IntoIterator<Item = OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--json")
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start the daemon in the background if it is not running; returns once it answers.
    #[command(after_help = "Examples:
  flotilla up
  flotilla up --name laptop --hub hub.home.arpa:7700
  flotilla --json up
  flotilla up --restart --hub hub.home.arpa:7700 --save")]
    Up(UpArgs),
    /// Stop the daemon gracefully.
    Down,
    /// Stop the daemon and start it again, with the flags it was started with and config.toml as it is now.
    Restart,
    /// The host daemon: run, status, install, uninstall.
    #[command(subcommand)]
    Host(HostCommand),
    /// Register, remove or rename peers.
    #[command(subcommand)]
    Peer(PeerCommand),
    /// List the peers that share a group with you.
    Peers(AsPeer),
    /// Send a message to one or more peers (all or nothing).
    #[command(after_help = "Examples:
  flotilla send --as lead --to reviewer 'please review PR 12'
  flotilla send --as lead --to reviewer,work/builder --summary 'the plan' - < plan.md
  git diff | flotilla send --as lead --to reviewer -
  flotilla send --as lead --batch < messages.jsonl   # {\"to\": [\"reviewer\"], \"body\": \"...\"} per line")]
    Send(SendArgs),
    /// Send a message to every other member of a group.
    Broadcast(BroadcastArgs),
    /// Answer the sender of a message you received.
    Reply(ReplyArgs),
    /// Read your messages, oldest first.
    Inbox(InboxArgs),
    /// Every peer on this host (the operator's view); --all adds what it sees of other hosts.
    #[command(after_help = "Examples:
  flotilla roster
  flotilla roster --all --json")]
    Roster(RosterCliArgs),
    /// A live terminal roster: hosts, peers and lanes, refreshed every second; keys filter, follow, interrupt, archive.
    #[command(after_help = "Keys:
  q, Esc       quit
  Tab          next panel (hosts, peers, lanes)
  Up/Down, jk  select a row
  g            filter by group: all, then each group in turn
  f, Enter     follow the selected lane's events
  i, a         interrupt, archive the selected lane (asks y/n)
  ?            help

Examples:
  flotilla top
  flotilla top --all      # the other hosts of the federation too
For scripts: flotilla roster --json")]
    Top(TopArgs),
    /// What a peer sent and where each message stands (here, queued at the hub, delivered).
    Outbox(OutboxCliArgs),
    /// Lanes: supervised worker sessions of agent CLIs and plain commands.
    Lane(Box<LaneCli>),
    /// Fleets: a task's definition of done, judged by the daemon.
    #[command(subcommand)]
    Fleet(FleetCommand),
    /// Claims: units of work in a git repository, each with its own branch and worktree.
    #[command(subcommand)]
    Claim(ClaimCommand),
    /// A repository's claims at a glance: lane, branch, gate, status (from its run records).
    #[command(after_help = "Examples:
  flotilla board
  flotilla board ~/src/app --json
  flotilla board --rebuild     # on a fresh host: fetch the run records first")]
    Board(BoardCli),
    /// Review a claim's branch at its head with a lane of another model family; the verdict is recorded bound to the commit.
    #[command(after_help = "Examples:
  flotilla review context-meter                      # the policy's reviewer of another family
  flotilla review context-meter --reviewer claude --tier high
  flotilla --json review 3f2a9c1 -C ~/src/app        # the claim whose branch has that commit
Exit codes: 0 passed, 1 failed or bounced (the verdict was malformed twice).")]
    Review(ReviewCli),
    /// Change requests: open one for a claim (gh, glab, or a local change record).
    #[command(
        subcommand,
        after_help = "Examples:
  flotilla change open context-meter
  flotilla change open context-meter --draft --title 'Context meter'"
    )]
    Change(ChangeCommand),
    /// Merge a claim's branch into its base, under the policy's merge authority; the decision is a run record.
    #[command(after_help = "Examples:
  flotilla merge context-meter                       # a person; the head must have passed review
  flotilla merge context-meter --without-gate        # a person, saying so
  flotilla merge context-meter --by coordinator      # only if policy.toml allows it
Exit codes: 0 merged, 5 refused by the policy, 6 not mergeable now (conflicts, a running lane).")]
    Merge(MergeCli),
    /// The claim policy: show it, check it.
    #[command(
        subcommand,
        after_help = "Examples:
  flotilla policy show
  flotilla policy check ~/src/app
  flotilla --json policy show ."
    )]
    Policy(PolicyCommand),
    /// Whether a claim's head passed review, with which reviewer, when, and why (exit 0 only when passed).
    Gate(ClaimIdCli),
    /// Whether a repository is ready for lanes: its project profile (detected, shown for confirmation, written with --write), its tools, CLIs and policy, and a plan reviewed against the profile; a missing tool is routed around and said so. Installs nothing.
    #[command(after_help = "Examples:
  flotilla ready                                  # this repository: the profile and the checks
  flotilla ready ~/src/app --write                # write the detected .flotilla/profile.toml
  flotilla ready --plan plan.md --reviewer codex  # and have a codex lane review the plan
  flotilla --json ready | jq .checks
Exit codes: 0 ready, 1 not ready (a check failed and nothing stands in, or the plan did not pass), 2 bad input.")]
    Ready(ReadyCli),
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
    /// Read and change config.toml: every key, its value and where it comes from.
    #[command(
        subcommand,
        after_help = "Examples:
  flotilla config show
  flotilla config get max_message_bytes
  flotilla config set hub hub.home.arpa:7700
  flotilla config set hub_server.queue_ttl_secs 86400
  flotilla config unset hub"
    )]
    Config(ConfigCommand),
    /// Print the daemon's log (or the hub's), the last lines or following it.
    #[command(after_help = "Examples:
  flotilla logs            # the last 200 lines of logs/daemon.log
  flotilla logs -f         # and what comes after, until Ctrl-C
  flotilla logs --hub -n 50")]
    Logs(LogsArgs),
    /// Measure Flotilla on this machine.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Serve Flotilla's tools to an agent over MCP (stdio), acting as one peer.
    Mcp(McpArgs),
    /// Teach the agent CLIs installed here about Flotilla (a skill or
    /// extension per CLI), show it, or remove exactly what was written.
    #[command(subcommand)]
    Integrations(IntegrationsCommand),
    /// Print the completion script of a shell.
    #[command(after_help = "Examples:
  flotilla completions bash > ~/.local/share/bash-completion/completions/flotilla
  flotilla completions zsh > ~/.zfunc/_flotilla
  flotilla completions fish > ~/.config/fish/completions/flotilla.fish")]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write one page per command into DIR.
    #[command(after_help = "Examples:
  flotilla man | man -l -
  flotilla man --out ~/.local/share/man/man1")]
    Man(ManArgs),
    /// Internal: the JSON Schema of every `--json` shape; writes one file
    /// per schema id into DIR (docs/schemas/ is made this way).
    #[command(hide = true)]
    Schemas(ManArgs),
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
        /// Run the command only after reading `g` on stdin (the daemon
        /// writes it once the shim's pid is on disk); at end of input
        /// without it, exit without running anything.
        #[arg(long)]
        gated: bool,
        /// The command.
        #[arg(last = true, required = true)]
        argv: Vec<String>,
    },
}

/// `top [--all]`.
#[derive(Debug, Args)]
pub(crate) struct TopArgs {
    /// Also the other hosts of the federation and their peers (through the hub).
    #[arg(long)]
    pub(crate) all: bool,
}

/// `completions SHELL`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// `man [--out DIR]`.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write `flotilla.1` and one page per command (`flotilla-lane-run.1`...) into DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

#[cfg(test)]
mod tests;
