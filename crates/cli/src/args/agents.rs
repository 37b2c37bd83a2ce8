//! What agent sessions run: `integrations` (the instructions written for
//! each CLI), the session hooks (`hook wait|drain|...`) and `mcp`.

use clap::{Args, Subcommand};
use flotilla_actors::lane::CliKind;

use super::choices;

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
    /// Only this CLI (pi, opencode and grok have no integration: they use the flotilla command).
    #[arg(long, value_name = "CLI", value_parser = choices::integrated_cli())]
    pub(crate) cli: Option<CliKind>,
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
