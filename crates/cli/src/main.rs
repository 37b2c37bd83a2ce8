//! The `flotilla` command: parses the command line, runs one command against
//! the daemon of the chosen home (or runs the daemon itself), and maps every
//! error to a documented exit code.

mod args;
mod bench;
mod bench_daemon;
mod bench_federation;
mod bench_fleet;
mod bench_lanes;
mod bench_pipelined;
mod commands;
mod exit;
mod hint;
mod mcp;
mod output;
mod progress;
mod schemas;
mod shim;
mod shim_reaper;
mod table;
mod top;
mod verbosity;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // An empty FLOTILLA_HOME or FLOTILLA_PEER (`export FLOTILLA_HOME=`)
    // means unset, not "a value is required", even beside an explicit flag.
    for var in ["FLOTILLA_HOME", "FLOTILLA_PEER"] {
        if std::env::var_os(var).is_some_and(|v| v.is_empty()) {
            // SAFETY: single-threaded here; nothing reads the environment yet.
            unsafe { std::env::remove_var(var) };
        }
    }
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            return exit::report_parse_error(&e, args::wants_json(std::env::args_os()));
        }
    };
    if let args::Command::LaneShim {
        dir,
        stdin_prompt,
        gated,
        argv,
    } = cli.command
    {
        // No runtime: the shim is plain threads (see `shim`).
        return shim::main(&shim::ShimArgs {
            dir,
            stdin_prompt,
            gated,
            argv,
        });
    }
    let json = cli.json;
    hint::set_home(cli.home.as_deref());
    verbosity::set_quiet(cli.quiet);
    if let Some(level) = verbosity::daemon_log_level(cli.verbose, cli.quiet) {
        // SAFETY: no other thread exists yet (the runtime starts below), so
        // nothing reads the environment while it changes. A daemon run
        // here, or started from here, inherits the level.
        unsafe { std::env::set_var("FLOTILLA_LOG", level) };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(err) => exit::report(&err, json),
    }
}
