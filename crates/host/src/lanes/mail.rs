//! Messages to a persistent lane: the lane reads its own inbox, makes each
//! message a prompt (the prompt of a turn, or queued for the next one: on
//! disk either way), and only then acknowledges them. One lane actor does
//! all three in turn, so a slow acknowledgement never lets a later read
//! see the same messages again, and a crash before the acknowledgement
//! leaves them in the inbox (delivered again, never lost).

use super::lane::{LaneRef, LaneState};
use super::turn;

/// Most messages taken in one read.
const BATCH: usize = 100;
/// Most bytes of messages taken in one read.
const BATCH_BYTES: usize = 4 * 1024 * 1024;

/// Reads the lane's inbox and turns its messages into prompts.
pub(super) async fn read(state: &mut LaneState, myself: &LaneRef) {
    if !state.record.spec.persistent {
        return;
    }
    let id = state.id();
    let messages = match state.ctx.store.fetch_inbox(&id, BATCH, BATCH_BYTES) {
        Ok((messages, _)) => messages,
        Err(e) => {
            tracing::warn!(lane = %id, error = %e, "could not read the lane's inbox");
            return;
        }
    };
    if messages.is_empty() {
        return;
    }
    let ids: Vec<_> = messages.iter().map(|m| m.id.clone()).collect();
    for m in messages {
        let prompt = format!("Message from {}:\n\n{}", m.from, m.body);
        turn::deliver(state, myself, prompt).await;
    }
    crate::crash_point::pause("lane.mail-ack").await;
    if let Err(e) = state.ctx.commit.ack(id.clone(), ids).await {
        tracing::warn!(lane = %id, error = %e, "could not acknowledge the lane's messages");
    }
}
