//! `flotilla hook wait|drain`: live delivery into an interactive session
//! (Claude Code's hooks, registered by `flotilla peer claude`).
//!
//! `wait` is an `asyncRewake` hook: it blocks on the session's mailbox and,
//! when a message arrives, writes it framed on stderr and exits 2, which
//! wakes an idle session (or joins the running turn). `drain` answers
//! `PostToolUse` / `UserPromptSubmit` with the waiting messages as
//! `additionalContext`. One consumer at a time: both take the session's
//! mailbox lock around read and acknowledgement, and only one `wait` runs
//! per session. A message is acknowledged only after it was written out,
//! so a crash in between hands it over again. `wait` exits 0 as soon as
//! its session's process has ended; neither ever fails the CLI's hook.

use std::fs::File;
use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use flotilla_actors::model::Message;
use flotilla_actors::names::{MessageId, PeerName};
use flotilla_actors::protocol::{InboxAckArgs, InboxFetchArgs};
use flotilla_host::client::ClientError;
use flotilla_host::lanes::process::is_same_process;
use rustix::fs::{FlockOperation, flock};
use serde_json::json;

use super::Env;
use crate::args::{HookArgs, HookCommand};
use crate::exit::OK;
use crate::output::outln;

/// Exit code that makes Claude Code wake the session with stderr.
const REWAKE: u8 = 2;
/// How long one wait on the mailbox lasts before the session is checked.
const POLL: Duration = Duration::from_secs(2);
/// The longest a waiter lives.
const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

pub(crate) async fn run(env: &Env, c: HookCommand) -> Result<u8> {
    // The hook's input (JSON on stdin) is not needed; the identity comes
    // from the session's environment.
    match c {
        HookCommand::Wait(who) => wait(env, &who).await,
        HookCommand::Drain { event, who } => drain(env, &event, &who).await,
    }
}

fn lock(env: &Env, who: &HookArgs, what: &str, block: bool) -> Option<File> {
    let dir = env.home.run_dir.join("sessions");
    flotilla_host::home::create_private(&dir).ok()?;
    let file = File::create(dir.join(format!("{}.{what}", who.as_peer))).ok()?;
    let op = match block {
        true => FlockOperation::LockExclusive,
        false => FlockOperation::NonBlockingLockExclusive,
    };
    flock(&file, op).ok()?;
    Some(file)
}

fn session_alive(who: &HookArgs) -> bool {
    who.session_pid.is_none_or(|pid| is_same_process(pid, None))
}

/// How a message is shown to the agent: from Flotilla, with the verified
/// sender, the id and how to answer.
pub(crate) fn frame(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        out.push_str(&format!(
            "[Flotilla] message {} from {} (sender verified by the Flotilla daemon):\n",
            m.id, m.from
        ));
        if let Some(summary) = &m.summary {
            out.push_str(&format!("{summary}\n"));
        }
        out.push_str(&m.body);
        out.push_str(&format!(
            "\n[Flotilla] answer with the reply tool (to_message: \"{}\") or `flotilla reply --to-message {} TEXT`.\n\n",
            m.id, m.id
        ));
    }
    out
}

/// Takes the waiting messages under the mailbox lock, hands them to
/// `deliver`, then acknowledges them if it could write them out.
async fn take(
    env: &Env,
    who: &HookArgs,
    deliver: impl FnOnce(&[Message]) -> Result<()>,
) -> Result<usize> {
    let Some(_lock) = lock(env, who, "mailbox", true) else {
        return Ok(0);
    };
    let me = PeerName::new(&who.as_peer)?;
    let mut client = env.client().await?;
    let fetch = InboxFetchArgs {
        as_peer: me.clone(),
        wait_ms: 0,
        limit: Some(20),
    };
    let reply = client.call(&fetch).await?;
    if reply.messages.is_empty() {
        return Ok(0);
    }
    deliver(&reply.messages)?;
    let ids: Vec<MessageId> = reply.messages.iter().map(|m| m.id.clone()).collect();
    client.call(&InboxAckArgs { as_peer: me, ids }).await?;
    Ok(reply.messages.len())
}

async fn wait(env: &Env, who: &HookArgs) -> Result<u8> {
    let Some(_waiter) = lock(env, who, "waiter", false) else {
        return Ok(OK); // another waiter serves this session
    };
    let me = PeerName::new(&who.as_peer)?;
    let deadline = tokio::time::Instant::now() + MAX_WAIT;
    while tokio::time::Instant::now() < deadline && session_alive(who) {
        let peek = InboxFetchArgs {
            as_peer: me.clone(),
            wait_ms: POLL.as_millis() as u64,
            limit: Some(1),
        };
        let waiting = async { anyhow::Ok(env.client().await?.call(&peek).await?) }.await;
        match waiting {
            Ok(r) if !r.messages.is_empty() => {
                let taken = take(env, who, |m| {
                    Ok(std::io::stderr().write_all(frame(m).as_bytes())?)
                })
                .await;
                if taken.is_ok_and(|n| n > 0) {
                    return Ok(REWAKE);
                }
            }
            Ok(_) => {}
            // The daemon is restarting: wait for it.
            Err(e) if is_transient(&e) => tokio::time::sleep(POLL).await,
            // Refused (not a peer here): nothing will ever arrive.
            Err(e) => {
                eprintln!("flotilla hook: {e:#}");
                return Ok(OK);
            }
        }
    }
    Ok(OK)
}

fn is_transient(e: &anyhow::Error) -> bool {
    e.downcast_ref::<ClientError>()
        .is_none_or(ClientError::is_transient)
}

async fn drain(env: &Env, event: &str, who: &HookArgs) -> Result<u8> {
    let result = take(env, who, |m| {
        let out = json!({"hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": frame(m),
        }});
        Ok(outln!("{out}")?)
    })
    .await;
    if let Err(e) = result {
        eprintln!("flotilla hook: {e:#}");
    }
    Ok(OK)
}
