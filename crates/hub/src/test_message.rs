//! A message for the hub crate's unit tests (the queue writer's, the
//! core's holds and fresh deliveries): one builder instead of a copy in
//! each. Test code only.

use flotilla_actors::model::{Message, Timestamp};
use flotilla_actors::names::{MessageId, PeerId};

/// Message `id` from `from` (`HOST/NAME`), its body `body of ID`.
pub(crate) fn message(id: &str, from: &str) -> Message {
    Message {
        id: MessageId::new(id).expect("id"),
        from: PeerId::parse(from).expect("from"),
        to: Vec::new(),
        group: None,
        summary: None,
        body: format!("body of {id}"),
        sent_at: Timestamp(0),
        seq: 1,
        in_reply_to: None,
    }
}
