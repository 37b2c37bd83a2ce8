//! The `flotilla lane ...` command line, as plain data.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use flotilla_actors::lane::{CliKind, Permissions};

use super::choices;
use super::duration::{parse_duration, parse_whole_seconds};

/// `flotilla lane ...`, with the host that runs the lane.
#[derive(Debug, Args)]
pub(crate) struct LaneCli {
    /// The lane runs on HOST, another host of the federation (through the hub).
    #[arg(long, global = true, value_name = "HOST")]
    pub(crate) host: Option<String>,
    #[command(subcommand)]
    pub(crate) command: LaneCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum LaneCommand {
    /// Start a lane and wait for its first turn's result.
    #[command(after_help = "Examples:
  flotilla lane run --cli claude -C ~/src/app --prompt 'fix the failing test'
  flotilla lane run --cli codex --permissions workspace --prompt-file task.md
  flotilla lane run --cli exec -n build --timeout 10m -- cargo build")]
    Run(LaneStartArgs),
    /// Start a lane and return at once with its id.
    Start(LaneStartArgs),
    /// Add a follow-up turn to the same native session.
    Resume(LaneResumeArgs),
    /// Collect a lane's result (each result is handed out once).
    Wait(LaneWaitArgs),
    /// One lane's state.
    Status(LaneName),
    /// Interrupt a lane's running turn (SIGINT, then SIGTERM, then SIGKILL).
    Interrupt(LaneName),
    /// Archive a lane (interrupting its turn first); it keeps its events.
    Archive(LaneName),
    /// Remove an idle or archived lane for good: its events, its peer and
    /// its files (not its working directory). Its name is free again.
    #[command(
        visible_alias = "remove",
        after_help = "Examples:
  flotilla lane rm build
  flotilla lane rm review --force   # drops its uncollected result and unread messages"
    )]
    Rm {
        /// The lane.
        name: String,
        /// Also drop its uncollected result and unread messages.
        #[arg(long)]
        force: bool,
    },
    /// Remove archived lanes (keeping any with an uncollected result or
    /// unread messages, and saying why).
    #[command(after_help = "Examples:
  flotilla lane prune                    # every archived lane
  flotilla lane prune --older-than 7d    # archived at least a week ago")]
    Prune {
        /// Only lanes whose last turn ended at least DURATION ago (`90m`, `12h`, `7d`).
        #[arg(long, value_name = "DURATION", value_parser = parse_whole_seconds)]
        older_than: Option<u64>,
    },
    /// List lanes.
    List {
        /// Include archived lanes.
        #[arg(long)]
        all: bool,
    },
    /// A lane's event log (flotilla.lane.v1).
    Events {
        /// The lane.
        name: String,
        /// Keep printing new events until the turn ends, then exit with
        /// the turn's exit code (as `lane wait` would).
        #[arg(long)]
        follow: bool,
    },
    /// Step into a lane: open its CLI's own interactive session on the
    /// lane's native conversation in this terminal; the lane's turns wait
    /// until you exit, then it carries on from there.
    #[command(
        after_help = "Waits for a running turn to end (--now interrupts it). Refused for a CLI
without resume (exec, grok: exit 2), a lane with no native session yet or
held by someone else (exit 6), an unknown lane (exit 4), a lane on another
host (exit 2). Exits with the interactive CLI's exit code.

Examples:
  flotilla lane attach review
  flotilla lane attach review --now          # interrupt its running turn
  flotilla lane attach review --print --json # the command, without running it"
    )]
    Attach(LaneAttachArgs),
    /// Which CLIs are installed, their versions, and whether they are supported.
    Doctor {
        /// Only this CLI.
        #[arg(long, value_name = "CLI", value_parser = choices::any_cli())]
        cli: Option<CliKind>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    /// `-`: read the prompt from stdin.
    #[arg(value_name = "-")]
    pub(crate) stdin: Option<String>,
    /// The prompt.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["prompt_file", "stdin"])]
    pub(crate) prompt: Option<String>,
    /// Read the prompt from a file.
    #[arg(long, value_name = "F", conflicts_with = "stdin")]
    pub(crate) prompt_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct LaneStartArgs {
    /// The CLI; exec runs the command after `--` with the prompt on its stdin.
    #[arg(long, value_name = "CLI", value_parser = choices::any_cli())]
    pub(crate) cli: CliKind,
    /// The lane's name (default: CLI-XXXX).
    #[arg(short = 'n', long)]
    pub(crate) name: Option<String>,
    /// Working directory (default: the current one).
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    pub(crate) cd: Option<PathBuf>,
    /// Model, passed to the CLI.
    #[arg(short = 'm', long)]
    pub(crate) model: Option<String>,
    /// What the CLI may do.
    #[arg(long, value_name = "MODE", default_value = "default", value_parser = choices::permissions())]
    pub(crate) permissions: Permissions,
    /// Per-turn deadline in whole seconds (`90`, `90s`, `5m`, `1h30m`); survives a daemon restart.
    #[arg(long, value_name = "DURATION", value_parser = parse_whole_seconds)]
    pub(crate) timeout: Option<u64>,
    /// Keep the lane for follow-up turns and messages.
    #[arg(long)]
    pub(crate) persistent: bool,
    /// Archive the lane this long after a turn ends, in whole seconds (`60`, `10m`).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_whole_seconds)]
    pub(crate) auto_archive_after: u64,
    /// Never archive automatically.
    #[arg(long)]
    pub(crate) no_auto_archive: bool,
    /// Let the stall watchdog kill and run an exec lane's command again
    /// when it makes no progress (agent CLIs are always restarted).
    #[arg(long)]
    pub(crate) restart_on_stall: bool,
    /// Start even with a CLI older than the oldest version flotilla
    /// supports (`flotilla lane doctor` shows it as too_old).
    #[arg(long)]
    pub(crate) force: bool,
    /// Work on this claim of the repository given with -C: the lane runs in
    /// the claim's own worktree, on its branch (`flotilla claim list`).
    #[arg(long, value_name = "ID")]
    pub(crate) claim: Option<String>,
    /// A group to join (repeatable).
    #[arg(short = 'g', long = "group", value_name = "GROUP")]
    pub(crate) groups: Vec<String>,
    /// Also join every group of the owner.
    #[arg(long)]
    pub(crate) inherit_groups: bool,
    /// The owner (default: FLOTILLA_PEER, which a lane's own processes
    /// have, else the operator).
    #[arg(long = "as", value_name = "PEER", env = "FLOTILLA_PEER")]
    pub(crate) as_peer: Option<String>,
    /// Extra environment for the CLI (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    pub(crate) env: Vec<String>,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    /// For exec: the command; for other CLIs: arguments passed unchanged.
    #[arg(last = true, value_name = "ARGS")]
    pub(crate) args: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct LaneResumeArgs {
    /// The lane.
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    /// Wait for the turn's result, like `run`.
    #[arg(long)]
    pub(crate) wait: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LaneWaitArgs {
    /// The lane.
    pub(crate) name: String,
    /// Give up after DURATION (`30`, `1.5`, `500ms`, `5m`): exit 124; the turn goes on.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
}

#[derive(Debug, Args)]
pub(crate) struct LaneName {
    /// The lane.
    pub(crate) name: String,
}

#[derive(Debug, Args)]
pub(crate) struct LaneAttachArgs {
    /// The lane.
    pub(crate) name: String,
    /// Interrupt the running turn instead of waiting for its end.
    #[arg(long, conflicts_with = "print")]
    pub(crate) now: bool,
    /// Print the interactive command (program, arguments, directory,
    /// environment) instead of running it; holds nothing, waits for nothing.
    #[arg(long)]
    pub(crate) print: bool,
}
