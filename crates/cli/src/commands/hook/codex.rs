//! `flotilla hook relay`: live delivery into an interactive Codex session.
//!
//! Started beside the session by `flotilla peer codex`, it waits on the
//! session's mailbox and hands each message over with `codex queue --thread
//! ID --message TEXT`: Codex starts a turn with it when the session is idle
//! and takes it as the next turn when busy. The thread is the one the
//! session's own hooks last recorded (`--record-thread`, from the hook
//! input's `session_id`): until its first turn a session has none, and a
//! message waits for the first prompt (whose hook hands it over). A message
//! is acknowledged only after `codex queue` took it; the relay ends when
//! the session's process ends.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use flotilla_actors::model::Message;
use tokio::io::AsyncReadExt;

use super::{MAX_WAIT, Taken, frame, frame_head, frame_tail, lock, message_waits, session_alive};
use crate::args::HookArgs;
use crate::commands::Env;
use crate::exit::OK;

/// The most text one queued message carries (an argument is at most
/// 128 KiB on Linux); longer bodies are written to a file the frame names.
const MAX_TEXT: usize = 96 * 1024;
/// How long `codex queue` may take.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long to wait before looking for the session's thread again.
const NO_THREAD_YET: Duration = Duration::from_secs(1);
/// The longest wait between failed hand-overs.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// The most hook input read (Codex sends a small JSON object).
const MAX_INPUT: u64 = 1024 * 1024;

pub(super) async fn relay(env: &Env, who: &HookArgs, codex: &str) -> Result<u8> {
    let Some(_relay) = lock(env, who, "waiter", false) else {
        return Ok(OK); // another relay serves this session
    };
    if who.session_pid.is_none() {
        eprintln!("flotilla hook relay: no --session-pid: nothing to relay to");
        return Ok(OK);
    }
    let deadline = tokio::time::Instant::now() + MAX_WAIT;
    // After a failed hand-over, the next waits longer (up to 30 s), so a
    // Codex that keeps refusing neither spins nor fills the log.
    let mut retry = NO_THREAD_YET;
    while tokio::time::Instant::now() < deadline && session_alive(who) {
        match message_waits(env, who).await {
            None => return Ok(OK),
            Some(false) => continue,
            Some(true) => {}
        }
        let Some(thread) = recorded_thread(env, who) else {
            tokio::time::sleep(NO_THREAD_YET).await;
            continue;
        };
        match hand_over(env, who, codex, &thread).await {
            Ok(()) => retry = NO_THREAD_YET,
            Err(e) => {
                eprintln!(
                    "flotilla hook relay: {e:#} (again in {} s)",
                    retry.as_secs()
                );
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(MAX_RETRY);
            }
        }
    }
    Ok(OK)
}

/// Queues the waiting messages into `thread`, then acknowledges them.
async fn hand_over(env: &Env, who: &HookArgs, codex: &str, thread: &str) -> Result<()> {
    let Some(taken) = Taken::fetch(env, who, 20).await? else {
        return Ok(());
    };
    let dir = env.home.state_dir.join("sessions").join(&who.as_peer);
    let text = queued_text(&taken.messages, &dir)?;
    let mut queue = tokio::process::Command::new(codex);
    queue
        .args(["queue", "--thread", thread, "--message", &text])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    let status = tokio::time::timeout(QUEUE_TIMEOUT, queue.status()).await;
    match status {
        Ok(Ok(s)) if s.success() => {
            taken.ack().await?;
            Ok(())
        }
        Ok(Ok(s)) => anyhow::bail!("`{codex} queue` failed ({s}); the messages stay waiting"),
        Ok(Err(e)) => anyhow::bail!("cannot run `{codex} queue`: {e}; the messages stay waiting"),
        Err(_) => anyhow::bail!("`{codex} queue` took over 30 s; the messages stay waiting"),
    }
}

/// The framed messages as one queued message; a body that would not fit
/// is written (0600) under `dir` and the frame names the file.
fn queued_text(messages: &[Message], dir: &Path) -> Result<String> {
    let text = frame(messages);
    if text.len() <= MAX_TEXT {
        return Ok(text);
    }
    flotilla_host::home::create_private(dir)?;
    let mut out = String::new();
    for m in messages {
        let file = dir.join(format!("message-{}.txt", m.id));
        flotilla_actors::private_file::write(&file, m.body.as_bytes())?;
        out.push_str(&frame_head(m));
        out.push_str(&format!(
            "(the body is {} bytes: read it from {})",
            m.body.len(),
            file.display()
        ));
        out.push_str(&frame_tail(m));
    }
    Ok(out)
}

fn thread_file(env: &Env, who: &HookArgs) -> std::path::PathBuf {
    let dir = env.home.run_dir.join("sessions");
    dir.join(format!("{}.codex-thread", who.as_peer))
}

/// The thread the session's hooks last recorded.
fn recorded_thread(env: &Env, who: &HookArgs) -> Option<String> {
    let text = std::fs::read_to_string(thread_file(env, who)).ok()?;
    valid_thread(text.trim())
}

/// Records the hook input's `session_id` (read from stdin, at most
/// [`MAX_INPUT`] bytes, for at most 2 s) as the session's thread.
pub(super) async fn record_thread(env: &Env, who: &HookArgs) -> Result<()> {
    let mut input = Vec::new();
    let mut stdin = tokio::io::stdin().take(MAX_INPUT);
    tokio::time::timeout(Duration::from_secs(2), stdin.read_to_end(&mut input)).await??;
    let value: serde_json::Value = serde_json::from_slice(&input)?;
    let Some(thread) = value["session_id"].as_str().and_then(valid_thread) else {
        anyhow::bail!("the hook input has no session_id to record");
    };
    let file = thread_file(env, who);
    if let Some(dir) = file.parent() {
        flotilla_host::home::create_private(dir)?;
    }
    flotilla_actors::private_file::write(&file, thread.as_bytes())?;
    Ok(())
}

/// A Codex thread id (hex digits and dashes), or none.
fn valid_thread(id: &str) -> Option<String> {
    let ok =
        !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    ok.then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_thread_id_is_taken() {
        assert_eq!(
            valid_thread("01a22d29-befa-78f3").as_deref(),
            Some("01a22d29-befa-78f3")
        );
        for other in ["", "x y", "--resume", "../etc", &"a".repeat(65)] {
            assert_eq!(valid_thread(other), None, "{other}");
        }
    }
}
