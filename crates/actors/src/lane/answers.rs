//! A persistent lane answers the messages that start its turns: the turn's
//! result goes back to each message's sender as a reply threaded to it
//! (not only as a notice to the lane's owner). And a child lane's notice to
//! an owner that is itself a lane waits for the owner's next turn as an
//! aside, never a turn of its own. Plain bookkeeping on the lane's record;
//! the lane actor sends what is owed and saves the record.

use serde::{Deserialize, Serialize};

use super::events::clip;
use super::{LaneRecord, TurnResult};
use crate::names::MessageId;

/// Largest answer body sent back (the result is cut beyond it).
pub const ANSWER_LIMIT: usize = 64 * 1024;

/// A reply a lane owes to the sender of a message that started a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwedReply {
    /// The turn that answered.
    pub turn: u32,
    /// The message answered.
    pub to: MessageId,
    /// One line: the turn's summary.
    pub summary: String,
    /// The turn's result text (or its error).
    pub body: String,
}

impl OwedReply {
    /// The reply's own id: fixed per lane incarnation, turn and message,
    /// so a retry after a crash stores it once.
    pub fn id(&self, record: &LaneRecord, index: usize) -> Option<MessageId> {
        let name = record.spec.name.as_str().replace('.', "_");
        MessageId::new(&format!(
            "lane-{}-{name}-t{}-r{index}",
            record.created_at.0, self.turn
        ))
        .ok()
    }
}

impl LaneRecord {
    /// The turn about to run answers these messages.
    pub fn answer(&mut self, messages: Vec<MessageId>) {
        self.answering = messages;
    }

    /// At a turn's end: a reply is owed to each message it answered.
    pub(super) fn owe_replies(&mut self, result: &TurnResult) {
        let turn = self.turns;
        let summary = result.summary_line(turn);
        let text = result
            .result
            .as_deref()
            .filter(|t| !t.is_empty())
            .or(result.error.as_deref())
            .unwrap_or(summary.as_str());
        let body = clip(text, ANSWER_LIMIT);
        for to in std::mem::take(&mut self.answering) {
            self.replies_owed.push(OwedReply {
                turn,
                to,
                summary: clip(&summary, 250),
                body: body.clone(),
            });
        }
    }

    /// Holds a notice for the next turn.
    pub fn aside(&mut self, text: String) {
        self.asides.push(text);
    }

    /// The next turn's prompt with the notices held for it in front (they
    /// are cleared once the turn has begun: [`Self::asides_given`]).
    pub fn with_asides(&self, prompt: String) -> String {
        if self.asides.is_empty() {
            return prompt;
        }
        format!("{}\n\n---\n\n{prompt}", self.asides.join("\n\n"))
    }

    /// The turn that carries the asides has begun.
    pub fn asides_given(&mut self) {
        self.asides.clear();
    }
}
