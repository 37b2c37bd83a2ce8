//! Where a message is on its way across hosts: one debug event per stage
//! (target `flotilla_stage`), named by the message's id, so that a run with
//! `FLOTILLA_LOG=flotilla_stage=debug` shows how long each stage took
//! (`docs/benchmarks.md` reads its breakdown from them). Off by default,
//! and then one level check each.
//!
//! Owns the stage names only; must not decide anything.

use std::time::Duration;

use crate::names::MessageId;

use super::Frame;

/// The trace target of every stage event.
pub const TARGET: &str = "flotilla_stage";

/// A message reached `stage`.
pub fn reached(stage: &'static str, id: &MessageId) {
    tracing::debug!(target: TARGET, %id, stage);
}

/// A store (`host` or `hub`) committed a group durably, redb's own
/// fsyncs included, taking `took`: what is committed without waiting for
/// the disk goes to disk there (at least once a second), and the trace
/// shows it beside the messages it may have held up.
pub fn durable_commit(store: &'static str, took: Duration) {
    let micros = micros(took);
    tracing::debug!(target: TARGET, store, micros, stage = "durable.committed");
}

/// A store's writer waited `took` for a group's log record to reach the
/// disk after it had committed the group, when that wait was long (over
/// a millisecond): the next group waits behind it.
pub fn sync_waited(store: &'static str, took: Duration) {
    if took > Duration::from_millis(1) {
        let micros = micros(took);
        tracing::debug!(target: TARGET, store, micros, stage = "sync.waited");
    }
}

/// Whole microseconds of `d`, saturating.
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
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
