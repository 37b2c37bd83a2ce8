//! What a turn that ended without its connector (stopped by the daemon,
//! lost while the daemon was down) still tells from its output on disk:
//! its usage, context, cost and native session, read again through a fresh
//! parser of its CLI. Its events were logged as they came (or are lost
//! with the turn); only the figures are taken, so budgets count every
//! token the turn used.

use std::io::{BufRead, BufReader};

use flotilla_actors::lane::LaneSpec;

use super::cli::{self, Outcome};
use super::process::TurnFiles;

/// Output files larger than this are not read again.
const MAX_OUTPUT: u64 = 64 * 1024 * 1024;

/// A failed outcome carrying what `files`' output says of the turn's usage.
pub(super) fn failed_with_usage(
    spec: &LaneSpec,
    config: &crate::config::HostConfig,
    files: &TurnFiles,
    exit: Option<i32>,
) -> Outcome {
    let failed = Outcome {
        failed: true,
        ..Outcome::default()
    };
    let Some(connector) = cli::connector(spec.cli) else {
        return failed;
    };
    let Ok(file) = std::fs::File::open(files.stdout()) else {
        return failed;
    };
    if file.metadata().map_or(true, |m| m.len() > MAX_OUTPUT) {
        return failed;
    }
    let mut parser = connector.parser(spec, &config.context_windows);
    for line in BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let _ = parser.line(&line);
    }
    let seen = parser.finish(exit, "");
    Outcome {
        usage: seen.usage,
        context_window: seen.context_window,
        context_used_pct: seen.context_used_pct,
        cost_usd: seen.cost_usd,
        native_session_id: seen.native_session_id,
        ..failed
    }
}
