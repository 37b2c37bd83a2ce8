//! `flotilla lane-shim`: the small supervisor the daemon starts for each
//! lane turn (not for people). It leads the turn's process group, gives the
//! CLI the prompt file as stdin (so the prompt never appears in the process
//! list), writes its output to files, and records its exit code in
//! `DIR/exit` (128+N for a signal). It ignores SIGINT and SIGTERM itself, so
//! a signal to the group stops the CLI and the shim still records how; only
//! SIGKILL ends the shim early. Because it does not depend on the daemon, a
//! turn survives a daemon crash and the restarted daemon adopts it. As a
//! child subreaper it also ends, when the CLI exits, every descendant left
//! behind, even one that escaped the group with `setsid`
//! ([`crate::shim_reaper`]).
//!
//! Started `--gated`, it runs nothing before the daemon's go (`g` on its
//! stdin), which the daemon writes only once the shim's pid is on disk: a
//! daemon that crashes at a turn's start leaves no command running that a
//! restarted daemon would not know of.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result};
use tokio::signal::unix::{SignalKind, signal};

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
pub(crate) async fn go_given() -> bool {
    use tokio::io::AsyncReadExt;
    let mut byte = [0u8; 1];
    let mut stdin = tokio::io::stdin();
    loop {
        match stdin.read(&mut byte).await {
            Ok(0) | Err(_) => return false,
            Ok(_) if byte[0] == b'g' => return true,
            Ok(_) => {}
        }
    }
}

pub(crate) async fn run(dir: &Path, stdin_prompt: bool, argv: &[String]) -> Result<u8> {
    let (program, args) = argv
        .split_first()
        .context("lane-shim needs a command after --")?;
    let stdin = if stdin_prompt {
        Stdio::from(File::open(dir.join("prompt")).context("cannot open the prompt file")?)
    } else {
        Stdio::null()
    };
    crate::shim_reaper::become_subreaper();
    let own_group = std::process::id();
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let spawned = tokio::process::Command::new(program)
        .args(args)
        .stdin(stdin)
        .stdout(private_file(&dir.join("stdout"))?)
        .stderr(private_file(&dir.join("stderr"))?)
        .spawn();
    let code = match spawned {
        Ok(mut child) => loop {
            tokio::select! {
                status = child.wait() => {
                    let status = status?;
                    break status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
                }
                _ = interrupt.recv() => {}
                // Told to stop: the group gets the signal itself; what
                // left the group does not, so end it now.
                _ = terminate.recv() => {
                    tokio::task::spawn_blocking(move || {
                        crate::shim_reaper::end_descendants(Some(own_group))
                    });
                }
                _ = hangup.recv() => {}
            }
        },
        Err(e) => {
            use std::io::Write;
            let mut err = private_file(&dir.join("stderr"))?;
            let _ = writeln!(err, "flotilla: cannot start {program}: {e}");
            127
        }
    };
    if !crate::shim_reaper::childless() {
        tokio::task::spawn_blocking(|| crate::shim_reaper::end_descendants(None)).await?;
    }
    let tmp = dir.join("exit.tmp");
    flotilla_actors::private_file::write(&tmp, format!("{code}\n").as_bytes())?;
    std::fs::rename(&tmp, dir.join("exit"))?;
    Ok(0)
}
