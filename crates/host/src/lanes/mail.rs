//! Messages to a persistent lane: the lane reads its own inbox, makes each
//! message a prompt (the prompt of a turn, or queued for the next one: on
//! disk either way), and only then acknowledges them. One lane actor does
//! all three in turn, so a slow acknowledgement never lets a later read
//! see the same messages again, and a crash before the acknowledgement
//! leaves them in the inbox (delivered again, never lost). A lane's own
//! notices and answers are held aside for the next turn instead.

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
    let mut held = false;
    for m in messages {
        if is_lane_notice(state, &m) {
            // A lane's turn end (or answer) is context for the next turn,
            // never a turn of its own (no uncollected result piles up, no
            // two lanes answer each other forever).
            let head = m.body.split("\n\n{").next().unwrap_or_default();
            state
                .record
                .aside(format!("Notice from {}:\n{head}", m.from));
            held = true;
            continue;
        }
        let prompt = format!("Message from {}:\n\n{}", m.from, m.body);
        turn::deliver(state, myself, prompt, vec![m.id.clone()]).await;
    }
    if held {
        // On disk before the acknowledgement, like a turn's prompt.
        state.save().await;
    }
    crate::crash_point::pause("lane.mail-ack").await;
    if let Err(e) = state.ctx.commit.ack(id.clone(), ids).await {
        tracing::warn!(lane = %id, error = %e, "could not acknowledge the lane's messages");
    }
}

/// Whether `m` is what a lane sends by itself: the notice of a turn's end
/// to its owner, or a turn's answer to a message (ids `lane-...`, from a
/// peer that is a lane).
fn is_lane_notice(state: &LaneState, m: &flotilla_actors::model::Message) -> bool {
    m.id.as_str().starts_with("lane-")
        && state
            .ctx
            .directory()
            .get(&m.from)
            .is_some_and(|p| p.kind == flotilla_actors::model::PeerKind::Lane)
}
