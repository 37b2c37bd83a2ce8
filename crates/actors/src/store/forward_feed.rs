//! Messages for the hub, handed from the commit queue's writer to the hub
//! link as soon as their acceptance can no longer be refused (the group's
//! first at once, the rest once the group is applied), before the redb
//! commit and while the log record syncs, so a forward does not wait for
//! the apply, the commit, the link's wake after it and a read of the
//! outbox. Only a group whose log record is written hands on.
//!
//! Owns only that hand-over. The outbox in the store stays the record the
//! link falls back to: after a link starts again, after a resend, or when
//! the feed dropped what no link took. Must not decide what is forwarded
//! (the acceptance does) or write anything.
//!
//! A group that fails after it was fed is taken back ([`ForwardFeed::rewind`]):
//! its outbox positions are given again to the next acceptances, so the
//! link reads from before them again. What the hub had of the failed group
//! it keeps (it stores a message once by id), as it keeps what a crash
//! before the log's sync leaves handed on.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use crate::federation::Forward;

/// Forwards held for the link at most, by count and by bytes of bodies.
const MAX_HELD: usize = 1024;
const MAX_HELD_BYTES: usize = 8 << 20;

/// Forwards with their outbox positions, in order.
pub type Fed = Vec<(u64, Forward)>;

/// What the link hands the hub next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// These, which follow the link's position without a gap (none: the
    /// link has handed on everything).
    Forwards(Fed),
    /// The feed does not hold what follows the link's position: read the
    /// outbox.
    ReadStore,
}

/// The hand-over between the writer and the link.
#[derive(Debug)]
pub struct ForwardFeed {
    state: Mutex<FeedState>,
    ready: watch::Sender<u64>,
}

impl Default for ForwardFeed {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            ready: watch::Sender::new(0),
        }
    }
}

impl ForwardFeed {
    /// A link starts taking forwards: what the feed held is dropped (the
    /// link reads the outbox first). The receiver changes whenever
    /// something was fed or taken back.
    pub fn open(&self) -> watch::Receiver<u64> {
        *self.state() = FeedState {
            open: true,
            ..FeedState::default()
        };
        self.ready.subscribe()
    }

    /// The link ended: nothing is fed until one opens again.
    pub fn close(&self) {
        *self.state() = FeedState::default();
    }

    /// Whether a link takes forwards (the writer gathers them only then).
    pub(super) fn is_open(&self) -> bool {
        self.state().open
    }

    /// The writer applied these (in order) in a group not yet committed.
    pub(super) fn feed(&self, fed: Fed) {
        if fed.is_empty() {
            return;
        }
        if self.state().feed(fed) {
            self.ready.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// The writer gives outbox positions to a group that feeds nothing (it
    /// commits durably, and the link reads it from the outbox once it
    /// has): what was fed last no longer tells the link it has everything,
    /// so it reads the outbox when the feed holds nothing more.
    pub(super) fn passed_over(&self) {
        self.state().passed_over();
    }

    /// The group that was given positions from `first` on failed.
    pub(super) fn rewind(&self, first: u64) {
        if self.state().rewind(first) {
            self.ready.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// What follows `after` (the link's position, moved back if a failed
    /// group was taken back), at most `limit` forwards.
    pub fn next(&self, after: &mut u64, limit: usize) -> Next {
        self.state().next(after, limit)
    }

    fn state(&self) -> MutexGuard<'_, FeedState> {
        // The state stays whole whatever a panicking holder did.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What one group of the writer hands the link: its first message at once,
/// as soon as it can no longer be refused (the path of a message sent
/// alone), the rest once the group is applied (a pipelined group wakes the
/// link once, not for each message).
pub(crate) struct GroupFeed<'a> {
    feed: &'a ForwardFeed,
    first: Option<u64>,
    rest: Fed,
}

impl<'a> GroupFeed<'a> {
    pub(crate) fn new(feed: &'a ForwardFeed) -> Self {
        Self {
            feed,
            first: None,
            rest: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, pos: u64, forward: Forward) {
        if self.first.is_none() {
            self.first = Some(pos);
            self.feed.feed(vec![(pos, forward)]);
        } else {
            self.rest.push((pos, forward));
        }
    }

    /// The group is applied: the rest goes too. Returns the group's first
    /// position handed on, which a failed commit takes back.
    pub(crate) fn applied(self) -> Option<u64> {
        self.feed.feed(self.rest);
        self.first
    }

    /// The group failed while it was applied: nothing more goes, and the
    /// first position handed on (if any) is to be taken back.
    pub(crate) fn failed(self) -> Option<u64> {
        self.first
    }
}

/// The feed's bookkeeping, without locks or wakes.
#[derive(Debug, Default)]
struct FeedState {
    open: bool,
    held: VecDeque<(u64, Forward)>,
    bytes: usize,
    /// The last position fed since the feed opened.
    last_fed: Option<u64>,
    /// The lowest position a failed group gave back, minus one.
    rewound_to: Option<u64>,
}

impl FeedState {
    /// Holds `fed`, dropping the oldest beyond the limits; whether the
    /// link is to be woken.
    fn feed(&mut self, fed: Fed) -> bool {
        if !self.open {
            return false;
        }
        for (pos, forward) in fed {
            self.last_fed = Some(pos);
            self.bytes += forward.message.body.len();
            self.held.push_back((pos, forward));
        }
        while self.held.len() > MAX_HELD || self.bytes > MAX_HELD_BYTES {
            self.pop();
        }
        true
    }

    fn passed_over(&mut self) {
        self.last_fed = None;
    }

    fn rewind(&mut self, first: u64) -> bool {
        if !self.open || self.last_fed.is_none_or(|last| last < first) {
            return false;
        }
        while self.held.back().is_some_and(|(pos, _)| *pos >= first) {
            if let Some((_, f)) = self.held.pop_back() {
                self.bytes -= f.message.body.len();
            }
        }
        let before = first.saturating_sub(1);
        self.last_fed = Some(before);
        self.rewound_to = Some(self.rewound_to.map_or(before, |r| r.min(before)));
        true
    }

    fn next(&mut self, after: &mut u64, limit: usize) -> Next {
        if let Some(back) = self.rewound_to.take() {
            *after = (*after).min(back);
        }
        while self.held.front().is_some_and(|(pos, _)| *pos <= *after) {
            self.pop();
        }
        match self.held.front() {
            Some((pos, _)) if *pos == *after + 1 => {}
            Some(_) => return Next::ReadStore,
            None if self.last_fed.is_some_and(|last| *after >= last) => {
                return Next::Forwards(Vec::new());
            }
            None => return Next::ReadStore,
        }
        let mut out = Vec::new();
        while out.len() < limit {
            let follows = out.last().map_or(*after, |(pos, _)| *pos) + 1;
            if self.held.front().is_none_or(|(pos, _)| *pos != follows) {
                break;
            }
            if let Some((pos, forward)) = self.pop() {
                out.push((pos, forward));
            }
        }
        Next::Forwards(out)
    }

    fn pop(&mut self) -> Option<(u64, Forward)> {
        let popped = self.held.pop_front();
        if let Some((_, f)) = &popped {
            self.bytes -= f.message.body.len();
        }
        popped
    }
}

#[cfg(test)]
#[path = "forward_feed_tests.rs"]
mod tests;
