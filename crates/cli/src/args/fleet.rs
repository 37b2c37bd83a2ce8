//! `flotilla fleet ...`: fleets of a supervisor and workers. For now, the
//! daemon's acceptance of a task's definition of done (`fleet check`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

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
