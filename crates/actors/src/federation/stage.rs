//! Where a message is on its way across hosts: one debug event per stage
//! (target `flotilla_stage`), named by the message's id, so that a run with
//! `FLOTILLA_LOG=flotilla_stage=debug` shows how long each stage took
//! (`docs/benchmarks.md` reads its breakdown from them). Off by default,
//! and then one level check each.
//!
//! Owns the stage names only; must not decide anything.

use crate::names::MessageId;

use super::Frame;

/// The trace target of every stage event.
pub const TARGET: &str = "flotilla_stage";

/// A message reached `stage`.
pub fn reached(stage: &'static str, id: &MessageId) {
    tracing::debug!(target: TARGET, %id, stage);
}

/// Whether stage events are recorded.
pub fn on() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::DEBUG)
}

/// Each of `ids` reached `stage`.
pub fn reached_all(stage: &'static str, ids: &[MessageId]) {
    for id in ids {
        reached(stage, id);
    }
}

/// A frame carrying a message (a forward, a delivery, a verdict) reached
/// `stage`; other frames are not traced.
pub fn frame(stage: &'static str, frame: &Frame) {
    if !on() {
        return;
    }
    let (kind, id) = match frame {
        Frame::Forward(f) => ("forward", &f.message.id),
        Frame::Deliver(d) => ("deliver", &d.message.id),
        Frame::Forwarded(f) => ("forwarded", &f.id),
        _ => return,
    };
    tracing::debug!(target: TARGET, %id, stage, kind);
}
