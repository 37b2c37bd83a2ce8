//! `flotilla hook wait|drain|stop|relay`: live delivery into an interactive
//! session, called by the CLI's own hooks (registered by `flotilla peer
//! CLI` for that session only) or started beside it.
//!
//! `wait` is Claude Code's `asyncRewake` hook: it blocks on the session's
//! mailbox and, when a message arrives, writes it framed on stderr and
//! exits 2, which wakes an idle session (or joins the running turn).
//! `drain` answers `PostToolUse` / `UserPromptSubmit` (Gemini: `AfterTool`
//! / `BeforeAgent`) with the waiting messages as `additionalContext`;
//! `stop` answers `Stop` / `AfterAgent` with a `block` decision whose
//! reason is the waiting messages, so the turn goes on with them. `relay`
//! (in [`codex`]) hands messages to a Codex session with `codex queue`.
//!
//! One consumer at a time: every verb takes the session's mailbox lock
//! around read and acknowledgement, and only one waiter runs per session.
//! A message is acknowledged only after it was handed over, so a crash in
//! between hands it over again. Waiters end as soon as their session's
//! process has ended; no verb ever fails the CLI's hook.

mod codex;

use std::fs::File;
use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use flotilla_actors::model::Message;
use flotilla_actors::names::{MessageId, PeerName};
use flotilla_actors::protocol::{InboxAckArgs, InboxFetchArgs};
use flotilla_host::client::{ClientError, ControlClient};
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
    // from the arguments or the session's environment.
    match c {
        HookCommand::Wait(who) => wait(env, &who).await,
        HookCommand::Drain { event, who } => drain(env, &event, &who).await,
        HookCommand::Stop { event, who } => stop(env, &event, &who).await,
        HookCommand::Relay { codex, who } => codex::relay(env, &who, &codex).await,
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
        out.push_str(&frame_head(m));
        out.push_str(&m.body);
        out.push_str(&frame_tail(m));
    }
    out
}

fn frame_head(m: &Message) -> String {
    let mut head = format!(
        "[Flotilla] message {} from {} (sender verified by the Flotilla daemon):\n",
        m.id, m.from
    );
    if let Some(summary) = &m.summary {
        head.push_str(&format!("{summary}\n"));
    }
    head
}

fn frame_tail(m: &Message) -> String {
    format!(
        "\n[Flotilla] answer with the reply tool (to_message: \"{}\") or `flotilla reply --to-message {} TEXT`.\n\n",
        m.id, m.id
    )
}

/// Waiting messages taken under the session's mailbox lock: hand them
/// over, then [`Taken::ack`] them (dropping instead leaves them waiting).
struct Taken {
    _lock: File,
    client: ControlClient,
    me: PeerName,
    messages: Vec<Message>,
}

impl Taken {
    /// Up to `limit` waiting messages, or none.
    async fn fetch(env: &Env, who: &HookArgs, limit: u32) -> Result<Option<Self>> {
        let Some(lock) = lock(env, who, "mailbox", true) else {
            return Ok(None);
        };
        let me = PeerName::new(&who.as_peer)?;
        let mut client = env.client().await?;
        let fetch = InboxFetchArgs {
            as_peer: me.clone(),
            wait_ms: 0,
            limit: Some(limit),
        };
        let reply = client.call(&fetch).await?;
        if reply.messages.is_empty() {
            return Ok(None);
        }
        Ok(Some(Self {
            _lock: lock,
            client,
            me,
            messages: reply.messages,
        }))
    }

    /// Acknowledges every message taken; their number.
    async fn ack(mut self) -> Result<usize> {
        let ids: Vec<MessageId> = self.messages.iter().map(|m| m.id.clone()).collect();
        let n = ids.len();
        let ack = InboxAckArgs {
            as_peer: self.me,
            ids,
        };
        self.client.call(&ack).await?;
        Ok(n)
    }
}

/// Takes the waiting messages, hands them to `deliver`, then acknowledges
/// them if it could write them out.
async fn take(
    env: &Env,
    who: &HookArgs,
    deliver: impl FnOnce(&[Message]) -> Result<()>,
) -> Result<usize> {
    let Some(taken) = Taken::fetch(env, who, 20).await? else {
        return Ok(0);
    };
    deliver(&taken.messages)?;
    taken.ack().await
}

/// Whether a message waits for `who`, waiting up to [`POLL`]; `None` when
/// nothing ever will (not a peer here).
async fn message_waits(env: &Env, who: &HookArgs) -> Option<bool> {
    let peek = async {
        let me = PeerName::new(&who.as_peer)?;
        let peek = InboxFetchArgs {
            as_peer: me,
            wait_ms: POLL.as_millis() as u64,
            limit: Some(1),
        };
        anyhow::Ok(env.client().await?.call(&peek).await?)
    };
    match peek.await {
        Ok(r) => Some(!r.messages.is_empty()),
        // The daemon is restarting: wait for it.
        Err(e) if is_transient(&e) => {
            tokio::time::sleep(POLL).await;
            Some(false)
        }
        // Refused (not a peer here): nothing will ever arrive.
        Err(e) => {
            eprintln!("flotilla hook: {e:#}");
            None
        }
    }
}

async fn wait(env: &Env, who: &HookArgs) -> Result<u8> {
    let Some(_waiter) = lock(env, who, "waiter", false) else {
        return Ok(OK); // another waiter serves this session
    };
    let deadline = tokio::time::Instant::now() + MAX_WAIT;
    while tokio::time::Instant::now() < deadline && session_alive(who) {
        match message_waits(env, who).await {
            None => return Ok(OK),
            Some(false) => {}
            Some(true) => {
                let taken = take(env, who, |m| {
                    Ok(std::io::stderr().write_all(frame(m).as_bytes())?)
                })
                .await;
                if taken.is_ok_and(|n| n > 0) {
                    return Ok(REWAKE);
                }
            }
        }
    }
    Ok(OK)
}

fn is_transient(e: &anyhow::Error) -> bool {
    e.downcast_ref::<ClientError>()
        .is_none_or(ClientError::is_transient)
}

/// Records the session's thread when asked (Codex's hooks); a failure is
/// only noted: delivery goes on.
async fn note_thread(env: &Env, who: &HookArgs) {
    if who.record_thread
        && let Err(e) = codex::record_thread(env, who).await
    {
        eprintln!("flotilla hook: {e:#}");
    }
}

async fn drain(env: &Env, event: &str, who: &HookArgs) -> Result<u8> {
    note_thread(env, who).await;
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

async fn stop(env: &Env, event: &str, who: &HookArgs) -> Result<u8> {
    note_thread(env, who).await;
    let result = take(env, who, |m| {
        let reason = format!(
            "New messages arrived through Flotilla while you worked ({event}); read them and act on them:\n\n{}",
            frame(m)
        );
        Ok(outln!("{}", json!({"decision": "block", "reason": reason}))?)
    })
    .await;
    if let Err(e) = result {
        eprintln!("flotilla hook: {e:#}");
    }
    Ok(OK)
}
