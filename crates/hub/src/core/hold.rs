//! Per-sender holds on a host's link after a transient refusal: when the
//! hub could not store a message (`unavailable`), every later message of
//! the same sender on that link is refused the same way until the held
//! message comes back, so the sending host's retry keeps the sender's
//! order. Pure bookkeeping, no IO; cleared when the link changes.

use std::collections::HashMap;

use flotilla_actors::federation::ForwardRefusal;
use flotilla_actors::model::Message;
use flotilla_actors::names::{HostName, MessageId, PeerId};

use crate::roster::Refused;

/// The held message of each sender, per linked host.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    held: HashMap<HostName, HashMap<PeerId, MessageId>>,
}

impl Holds {
    /// Before a forward from `host` is admitted: refused while an earlier
    /// message of its sender is held; the held message itself lifts the
    /// hold (and is admitted again: `Ok(true)`).
    pub(crate) fn check(&mut self, host: &HostName, message: &Message) -> Result<bool, Refused> {
        let Some(senders) = self.held.get_mut(host) else {
            return Ok(false);
        };
        match senders.get(&message.from) {
            None => Ok(false),
            Some(id) if *id == message.id => {
                senders.remove(&message.from);
                Ok(true)
            }
            Some(id) => Err((
                ForwardRefusal::Unavailable,
                format!(
                    "held behind {}'s earlier message {id}, which the hub could not store; \
                     it will be retried in order",
                    message.from
                ),
            )),
        }
    }

    /// Message `id` of `from` on `host` was refused with `code`: a
    /// transient refusal holds the sender's later messages.
    pub(crate) fn refused(
        &mut self,
        host: &HostName,
        from: &PeerId,
        id: &MessageId,
        code: ForwardRefusal,
    ) {
        if code.is_transient() {
            self.held
                .entry(host.clone())
                .or_default()
                .entry(from.clone())
                .or_insert_with(|| id.clone());
        }
    }

    /// `host`'s link came up or went down: its host sends everything
    /// unanswered again, in order.
    pub(crate) fn clear(&mut self, host: &HostName) {
        self.held.remove(host);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_message::message;

    #[test]
    fn a_transient_refusal_holds_the_senders_later_messages_until_it_comes_back() {
        let host = HostName::new("laptop").expect("host");
        let mut holds = Holds::default();
        let (m1, m2) = (message("m1", "laptop/a"), message("m2", "laptop/a"));
        let other = message("m3", "laptop/b");
        holds.refused(&host, &m1.from, &m1.id, ForwardRefusal::Unavailable);
        let held = holds.check(&host, &m2).expect_err("held");
        assert_eq!(held.0, ForwardRefusal::Unavailable);
        assert!(held.1.contains("m1"), "{}", held.1);
        holds.refused(&host, &m2.from, &m2.id, held.0);
        assert!(holds.check(&host, &other).is_ok(), "other senders flow");
        assert_eq!(
            holds.check(&host, &m1),
            Ok(true),
            "the retry lifts the hold"
        );
        assert!(holds.check(&host, &m2).is_ok());
    }

    #[test]
    fn a_final_refusal_holds_nothing_and_a_new_link_starts_clean() {
        let host = HostName::new("laptop").expect("host");
        let mut holds = Holds::default();
        let (m1, m2) = (message("m1", "laptop/a"), message("m2", "laptop/a"));
        holds.refused(&host, &m1.from, &m1.id, ForwardRefusal::OutOfScope);
        assert!(holds.check(&host, &m2).is_ok());
        holds.refused(&host, &m1.from, &m1.id, ForwardRefusal::Unavailable);
        holds.clear(&host);
        assert!(holds.check(&host, &m2).is_ok());
    }
}
