//! `flotilla fleet ...`: fleets of a supervisor and workers: start one,
//! give it tasks, watch, pause, resume and stop it, and try a definition
//! of done (`fleet check`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use flotilla_actors::fleet::Lifecycle;
use flotilla_actors::lane::{CliKind, Permissions};

use super::duration::parse_within;

#[derive(Debug, Subcommand)]
pub(crate) enum FleetCommand {
    /// Judge a task's definition of done in a directory now, as a fleet's
    /// acceptance does: every artifact, then every check, run by the daemon.
    #[command(
        after_help = "Exit: 0 accepted, 1 not accepted (every reason printed), 2 a bad task.

Examples:
  flotilla fleet check task.json -C ~/work/report
  echo '{\"goal\": \"g\", \"artifacts\": [{\"path\": \"r.md\", \"min_chars\": 800}]}' | flotilla fleet check -
  flotilla --json fleet check task.json --timeout 10m"
    )]
    Check(FleetCheckArgs),
    /// Start a fleet: a supervisor and N workers (lanes NAME-supervisor,
    /// NAME-worker-1, ...) in the fleet's directory.
    #[command(
        after_help = "Exit: 0 started, 2 bad input (nothing started), 3 no daemon, 5 refused (a pair the pair table does not list), 6 the name is in use.

Examples:
  flotilla fleet start report --supervisor claude --workers 2 --worker-cli exec --worker-cmd ./write.sh -C ~/work --task task.json
  flotilla fleet start smoke --supervisor exec --supervisor-cmd ./plan.sh --workers 1 --worker-cli exec --worker-cmd ./work.sh --lifecycle smoke
  flotilla fleet start report --file fleet.toml"
    )]
    Start(Box<FleetStartArgs>),
    /// Give a fleet its next task (JSON, from a file or `-` for stdin).
    Task(FleetTaskArgs),
    /// A fleet: its task, steps, members, spending and last decisions.
    Status(FleetNameArg),
    /// Every fleet of this host.
    List,
    /// Watch a fleet: in a terminal with tmux, a control room (a tmux
    /// session: the supervisor, the decisions, one pane per worker);
    /// otherwise a plain follow of the members' events and the daemon's
    /// decisions, interleaved, until the task ends.
    #[command(
        after_help = "Exit: plain follow: 0 the task completed, 1 it ended otherwise (blocked, stopped, no task); control room: tmux's exit; --no-attach: 0 the session exists, 1 tmux failed; 2 a bad name or flag, 4 no such fleet.

Examples:
  flotilla fleet watch report                  # the control room (tmux), or the plain follow
  flotilla fleet watch report --plain          # the plain follow, even in a terminal with tmux
  flotilla fleet watch report --no-attach      # make the tmux session, print how to attach
  flotilla fleet watch report --only worker-1  # one member's events (what a pane runs)"
    )]
    Watch(FleetWatchArgs),
    /// Hold every further dispatch (running turns finish).
    Pause(FleetNameArg),
    /// Dispatch again, optionally under a new budget card.
    Resume(FleetResumeArgs),
    /// Stop a fleet: running turns are interrupted, nothing more runs.
    Stop(FleetNameArg),
    /// Every decision the daemon made for a fleet.
    History(FleetNameArg),
    /// Remove a stopped or idle fleet and its members' lanes (exit 6 while it works).
    #[command(visible_alias = "remove")]
    Rm(FleetNameArg),
    /// The pairs of supervisor and worker CLIs Flotilla's tests ran.
    Pairs,
    /// Send a service request straight to one member and print its checked
    /// reply.
    #[command(
        after_help = "The request (JSON): {\"to\": \"worker-1\", \"body\": {...}, \"reply\": {\"required\": [\"verdict\"], \"allowed\": {\"verdict\": [\"ok\", \"bad\"]}}}

Exit: 0 the reply passed its check (printed), 1 it was bounced three times (the faults printed), 2 a bad request, 4 no such fleet.

Example:
  echo '{\"body\": {\"diff\": \"...\"}, \"reply\": {\"required\": [\"verdict\"]}}' | flotilla fleet request rev --to worker-1 -"
    )]
    Request(FleetRequestCli),
}

#[derive(Debug, Args)]
pub(crate) struct FleetRequestCli {
    /// The fleet's name.
    pub(crate) name: String,
    /// The request's JSON file, or `-` for stdin.
    pub(crate) request: String,
    /// The member's role (overrides the request's `to`; default: the supervisor).
    #[arg(long, value_name = "ROLE")]
    pub(crate) to: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct FleetNameArg {
    /// The fleet's name.
    pub(crate) name: String,
}

#[derive(Debug, Args)]
pub(crate) struct FleetWatchArgs {
    /// The fleet's name.
    pub(crate) name: String,
    /// The plain follow, even in a terminal with tmux.
    #[arg(long, conflicts_with = "no_attach")]
    pub(crate) plain: bool,
    /// Make the control room's tmux session (or find it) and print how to
    /// attach, without attaching.
    #[arg(long)]
    pub(crate) no_attach: bool,
    /// Follow only `decisions` (the daemon's) or one member's events
    /// (`supervisor`, `worker-1`, ...); implies --plain.
    #[arg(long, value_name = "WHAT", conflicts_with = "no_attach")]
    pub(crate) only: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct FleetTaskArgs {
    /// The fleet's name.
    pub(crate) name: String,
    /// The task's JSON file, or `-` for stdin (format: docs/fleets.md#tasks).
    pub(crate) task: String,
}

#[derive(Debug, Args)]
pub(crate) struct FleetResumeArgs {
    /// The fleet's name.
    pub(crate) name: String,
    /// A new budget card (TOML or JSON) replacing the old one.
    #[arg(long, value_name = "FILE")]
    pub(crate) budget: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct FleetStartArgs {
    /// The fleet's name (its lanes are NAME-supervisor, NAME-worker-1, ...).
    pub(crate) name: String,
    /// A fleet file (TOML) with the same fields as these flags; flags win.
    #[arg(long, value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// The supervisor's CLI.
    #[arg(long, value_name = "CLI", value_parser = super::choices::any_cli())]
    pub(crate) supervisor: Option<CliKind>,
    /// How many workers.
    #[arg(long, value_name = "N")]
    pub(crate) workers: Option<usize>,
    /// The workers' CLI; repeat it for mixed fleets (worker i takes the
    /// i-th, the last one repeats).
    #[arg(long = "worker-cli", value_name = "CLI", value_parser = super::choices::any_cli())]
    pub(crate) worker_cli: Vec<CliKind>,
    /// For an exec supervisor: its command (`sh -c`, the prompt on stdin).
    #[arg(long, value_name = "CMD")]
    pub(crate) supervisor_cmd: Option<String>,
    /// For exec workers: their command (`sh -c`, the prompt on stdin).
    #[arg(long, value_name = "CMD")]
    pub(crate) worker_cmd: Option<String>,
    /// The model of every member (default: each CLI's own).
    #[arg(short = 'm', long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// task (ends at completed, blocked or out of budget) or smoke (one
    /// short round to prove a pairing).
    #[arg(long, value_name = "LIFECYCLE", value_parser = lifecycle)]
    pub(crate) lifecycle: Option<Lifecycle>,
    /// The fleet's directory (default: here).
    #[arg(short = 'C', long = "dir", value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Turns that may run at once across the fleet.
    #[arg(long, value_name = "K")]
    pub(crate) max_busy: Option<usize>,
    /// Place workers on another host of the federation (remote lanes,
    /// through the hub); repeat to spread them: worker N goes to the Nth
    /// host, round and round. This host's own name keeps a worker here.
    #[arg(long = "host", value_name = "HOST")]
    pub(crate) hosts: Vec<String>,
    /// The supervisor's permission mode (as `lane run --permissions`).
    #[arg(long, value_name = "MODE", value_parser = super::choices::permissions())]
    pub(crate) supervisor_permissions: Option<Permissions>,
    /// The workers' permission mode (as `lane run --permissions`; a
    /// worker on a claim is held to the policy's ceiling and sandbox rule).
    #[arg(long, value_name = "MODE", value_parser = super::choices::permissions())]
    pub(crate) worker_permissions: Option<Permissions>,
    /// Give a worker a claim: it works on the claim's branch in its own
    /// worktree, and its steps are judged there; repeat for more workers
    /// (worker N takes the Nth claim; -C is the claim's repository).
    #[arg(long = "claim", value_name = "ID")]
    pub(crate) claims: Vec<String>,
    /// The budget card (TOML or JSON; docs/fleets.md#budgets).
    #[arg(long, value_name = "FILE")]
    pub(crate) budget: Option<PathBuf>,
    /// The first task (JSON file, or `-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub(crate) task: Option<String>,
    /// How long one member's turn may run (`30m`, `2h`).
    #[arg(long, value_name = "DURATION", value_parser = check_timeout)]
    pub(crate) turn_timeout: Option<Duration>,
    /// How long each of a task's checks may run (default 30m).
    #[arg(long, value_name = "DURATION", value_parser = check_timeout)]
    pub(crate) check_timeout: Option<Duration>,
    /// A model the supervisor moves to when it hits a usage wall; repeat
    /// for a chain, tried in order.
    #[arg(long = "supervisor-fallback", value_name = "MODEL")]
    pub(crate) supervisor_fallback: Vec<String>,
    /// A model the workers move to when they hit a usage wall; repeat for
    /// a chain, tried in order.
    #[arg(long = "worker-fallback", value_name = "MODEL")]
    pub(crate) worker_fallback: Vec<String>,
    /// How long the fleet waits at a usage wall with no model left before
    /// it resumes by itself (doubled at each wall in a row; default 5m).
    #[arg(long, value_name = "DURATION", value_parser = check_timeout)]
    pub(crate) wall_wait: Option<Duration>,
    /// Context use, in percent of the window, at which a member hands over
    /// to a fresh session with a handoff note (default 60).
    #[arg(long = "rotate-at", value_name = "PCT")]
    pub(crate) rotate_at: Option<f64>,
    /// Context use at which a member's running turn is cut short: it is
    /// interrupted, hands over and its successor runs it again (default 90,
    /// or --rotate-at when higher; 100: never).
    #[arg(long = "rotate-now-at", value_name = "PCT")]
    pub(crate) rotate_now_at: Option<f64>,
    /// The peer of this host that owns the fleet's lanes (default: the fleet
    /// file's `as`, else FLOTILLA_PEER, which a lane's own processes have,
    /// else the operator).
    #[arg(long = "as", value_name = "PEER")]
    pub(crate) as_peer: Option<String>,
}

fn lifecycle(value: &str) -> Result<Lifecycle, String> {
    match value {
        "task" => Ok(Lifecycle::Task),
        "service" => Ok(Lifecycle::Service),
        "smoke" => Ok(Lifecycle::Smoke),
        _ => Err(format!(
            "{value:?} is not a lifecycle; use task, service or smoke"
        )),
    }
}

#[derive(Debug, Args)]
pub(crate) struct FleetCheckArgs {
    /// The task's JSON file, or `-` for stdin (format: docs/fleets.md#tasks).
    pub(crate) task: String,
    /// The fleet's directory, where artifacts are looked for and checks run (default: here).
    #[arg(short = 'C', long = "dir", value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// How long each check may run before it is killed (`30s`, `10m`; up to `24h`).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = check_timeout)]
    pub(crate) timeout: Duration,
}

fn check_timeout(value: &str) -> Result<Duration, String> {
    parse_within(
        value,
        Duration::from_millis(1)..=Duration::from_secs(24 * 3600),
    )
    .map_err(|e| e.to_string())
}
