//! The lane shim: the small supervisor the daemon starts for each lane turn
//! (not for people), as `flotilla-lane-shim` (a small program of its own,
//! [`crate`] of `lane_shim_main.rs`) or, when that is not installed next to
//! the daemon, as `flotilla lane-shim`. It leads the turn's process group,
//! gives the CLI the prompt file as stdin (so the prompt never appears in
//! the process list), writes its output to files, and records its exit code
//! in `DIR/exit` (128+N for a signal). It ignores SIGINT, SIGTERM and SIGHUP
//! itself, so a signal to the group stops the CLI and the shim still
//! records how; only SIGKILL ends the shim early. Because it does not
//! depend on the daemon, a turn survives a daemon crash and the restarted
//! daemon adopts it. As a child subreaper it also ends, when the CLI exits,
//! every descendant left behind, even one that escaped the group with
//! `setsid` ([`crate::shim_reaper`]).
//!
//! Started `--gated`, it runs nothing before the daemon's go (`g` on its
//! stdin), which the daemon writes only once the shim's pid is on disk: a
//! daemon that crashes at a turn's start leaves no command running that a
//! restarted daemon would not know of.
//!
//! Plain threads and blocking calls, no async runtime: a turn's shim starts
//! and ends on every `lane run`, and its start-up is part of what a lane
//! costs over running the command directly. Touches only the turn's
//! directory.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// What the daemon asks of a shim (the arguments of both forms).
#[derive(Debug)]
pub(crate) struct ShimArgs {
    /// The turn's directory.
    pub(crate) dir: PathBuf,
    /// Feed `DIR/prompt` to the command's stdin.
    pub(crate) stdin_prompt: bool,
    /// Run nothing before the daemon's go.
    pub(crate) gated: bool,
    /// The command.
    pub(crate) argv: Vec<String>,
}

/// Runs the shim to the end: 0 once the command's exit is recorded (or
/// when the go never came), 1 with the reason on stderr otherwise.
pub(crate) fn main(args: &ShimArgs) -> ExitCode {
    if args.gated && !go_given() {
        return ExitCode::SUCCESS;
    }
    match run(&args.dir, args.stdin_prompt, &args.argv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn private_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// Waits for the daemon's go (`g` on stdin): true once given, false at end
/// of input without it (the daemon stopped before it recorded this shim,
/// so nothing may run: a restarted daemon would not know of it).
fn go_given() -> bool {
    let mut byte = [0u8; 1];
    let mut stdin = std::io::stdin().lock();
    loop {
        match stdin.read(&mut byte) {
            Ok(0) => return false,
            Ok(_) if byte[0] == b'g' => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// The shim's own handling of the three signals: none ends it. SIGTERM
/// also ends at once the descendants that left the turn's group (the
/// group itself gets the daemon's signals). Handlers, not "ignore": the
/// command must start with the default dispositions, and a handled signal
/// is reset to its default by `exec`, an ignored one is not.
fn watch_signals() -> Result<signal_hook::iterator::Handle> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot handle signals")?;
    let handle = signals.handle();
    let own_group = std::process::id();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if signal == SIGTERM {
                    crate::shim_reaper::end_descendants(Some(own_group));
                }
            }
        })
        .context("cannot start the signal thread")?;
    Ok(handle)
}

fn run(dir: &Path, stdin_prompt: bool, argv: &[String]) -> Result<()> {
    let (program, args) = argv
        .split_first()
        .context("lane-shim needs a command after --")?;
    let stdin = if stdin_prompt {
        Stdio::from(File::open(dir.join("prompt")).context("cannot open the prompt file")?)
    } else {
        Stdio::null()
    };
    crate::shim_reaper::become_subreaper();
    let signals = watch_signals()?;
    let spawned = std::process::Command::new(program)
        .args(args)
        .stdin(stdin)
        .stdout(private_file(&dir.join("stdout"))?)
        .stderr(private_file(&dir.join("stderr"))?)
        .spawn();
    let code = match spawned {
        Ok(mut child) => {
            let status = child.wait().context("cannot wait for the command")?;
            status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
        }
        Err(e) => {
            use std::io::Write;
            let mut err = private_file(&dir.join("stderr"))?;
            let _ = writeln!(err, "flotilla: cannot start {program}: {e}");
            127
        }
    };
    if !crate::shim_reaper::childless() {
        crate::shim_reaper::end_descendants(None);
    }
    signals.close();
    let tmp = dir.join("exit.tmp");
    flotilla_actors::private_file::write(&tmp, format!("{code}\n").as_bytes())?;
    std::fs::rename(&tmp, dir.join("exit"))?;
    Ok(())
}
