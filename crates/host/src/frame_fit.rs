//! Whether a message can cross hosts at all: every message for peers on
//! other hosts travels in one frame on the hub links (a `Forward` to the
//! hub, a `Deliver` to each recipient's host), and a frame over the limit
//! cannot be sent. Such a message is refused when it is sent, naming the
//! limit, instead of being accepted and then stopping the link for every
//! later message; one already stored by an older release is dropped by the
//! hub link with the reason. Pure: the router asks before it stores
//! anything, the link before it writes a forward.

use flotilla_actors::federation::{
    DEFAULT_MAX_FRAME, Forward, ForwardOutcome, ForwardRefusal, message_frame_size,
};
use flotilla_actors::model::{Message, Timestamp};
use flotilla_actors::names::{MAX_HOST_NAME, MAX_PEER_NAME, PeerId};
use flotilla_actors::protocol::{ControlError, ErrorCode};
use flotilla_actors::store::NewMessage;
use serde_json::json;

/// Most bytes one encoded peer id takes (its names and their lengths).
const PEER_ID_MAX: usize = MAX_HOST_NAME + MAX_PEER_NAME + 32;
/// Most bytes the rest of a frame takes besides body, summary and peer
/// ids: the message id, group, answered id, numbers and tags.
const ENVELOPE_MAX: usize = 1024;

/// Whether a frame surely fits without encoding it: the body, the summary
/// and `peers` peer ids at their largest, and the largest envelope.
fn surely_fits(body: usize, summary: usize, peers: usize, limit: usize) -> bool {
    body.saturating_add(summary)
        .saturating_add(peers.saturating_mul(PEER_ID_MAX))
        .saturating_add(ENVELOPE_MAX)
        <= limit
}

/// Refuses `m` when its frame to the hub, for its `remote` recipients,
/// would be over `limit` bytes.
pub(crate) fn check(m: &NewMessage, remote: &[PeerId], limit: usize) -> Result<(), ControlError> {
    let summary = m.summary.as_ref().map_or(0, String::len);
    let peers = 1 + m.to.len() + remote.len();
    if remote.is_empty() || surely_fits(m.body.len(), summary, peers, limit) {
        return Ok(());
    }
    let message = Message {
        id: m.id.clone(),
        from: m.from.clone(),
        to: m.to.clone(),
        group: m.group.clone(),
        summary: m.summary.clone(),
        body: m.body.clone(),
        // The largest values: the frame's size must hold for any.
        sent_at: Timestamp(u64::MAX),
        seq: u64::MAX,
        in_reply_to: m.in_reply_to.clone(),
    };
    let size = message_frame_size(&message, remote).map_err(|e| {
        ControlError::new(
            ErrorCode::Internal,
            format!("cannot encode the message: {e}"),
        )
    })?;
    if size <= limit {
        return Ok(());
    }
    Err(ControlError::new(
        ErrorCode::TooLarge,
        format!(
            "nothing was sent: for peers on other hosts the message makes a frame of {size} bytes, \
             over the limit of {limit} bytes of the hub link (its body is {} bytes)",
            m.body.len()
        ),
    )
    .with_hint("split it into smaller messages, or send it only to peers on this host")
    .with_details(json!({"size": size, "limit": limit})))
}

/// [`check`] against the hub link's frame limit.
pub(crate) fn check_hub_link(m: &NewMessage, remote: &[PeerId]) -> Result<(), ControlError> {
    check(m, remote, DEFAULT_MAX_FRAME)
}

/// For a message already in the outbox (stored by a release without this
/// check): `None` when its frame fits the hub link, else the outcome that
/// drops it at once, so it cannot stop the messages behind it.
pub(crate) fn unsendable(forward: &Forward) -> Option<ForwardOutcome> {
    let m = &forward.message;
    let summary = m.summary.as_ref().map_or(0, String::len);
    let peers = 1 + m.to.len() + forward.to.len();
    if surely_fits(m.body.len(), summary, peers, DEFAULT_MAX_FRAME) {
        return None;
    }
    let size = message_frame_size(&forward.message, &forward.to).unwrap_or(usize::MAX);
    (size > DEFAULT_MAX_FRAME).then(|| ForwardOutcome::Refused {
        code: ForwardRefusal::Malformed,
        reason: format!(
            "the message makes a frame of {size} bytes, over the limit of {DEFAULT_MAX_FRAME} bytes of the hub link"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::names::MessageId;

    fn message(body: usize) -> NewMessage {
        NewMessage {
            id: MessageId::new("m1").expect("id"),
            from: PeerId::parse("h/a").expect("from"),
            to: vec![PeerId::parse("w/x").expect("to")],
            group: None,
            summary: None,
            body: "x".repeat(body),
            in_reply_to: None,
            sent_at: Timestamp(1),
            outbox_room: Default::default(),
        }
    }

    #[test]
    fn issue_13_a_message_over_the_frame_limit_is_refused_naming_it() {
        let remote = [PeerId::parse("w/x").expect("to")];
        let err = check_hub_link(&message(DEFAULT_MAX_FRAME), &remote).expect_err("too big");
        assert_eq!(err.code, ErrorCode::TooLarge);
        assert!(err.message.contains("8388608"), "{}", err.message);
        assert!(check_hub_link(&message(DEFAULT_MAX_FRAME - 1024), &remote).is_ok());
        assert!(
            check_hub_link(&message(DEFAULT_MAX_FRAME - 200), &remote).is_ok(),
            "encoded"
        );
        assert!(
            check_hub_link(&message(DEFAULT_MAX_FRAME - 50), &remote).is_err(),
            "encoded"
        );
        assert!(
            check_hub_link(&message(DEFAULT_MAX_FRAME), &[]).is_ok(),
            "only peers on this host: no frame"
        );
    }

    #[test]
    fn issue_13_a_stored_message_over_the_frame_limit_is_dropped_not_sent() {
        let forward = |body: usize| {
            let m = message(body);
            Forward {
                message: Message {
                    id: m.id,
                    from: m.from,
                    to: m.to.clone(),
                    group: None,
                    summary: None,
                    body: m.body,
                    sent_at: m.sent_at,
                    seq: 1,
                    in_reply_to: None,
                },
                to: m.to,
            }
        };
        assert!(unsendable(&forward(1024)).is_none());
        let Some(ForwardOutcome::Refused { code, reason }) =
            unsendable(&forward(DEFAULT_MAX_FRAME))
        else {
            panic!("dropped")
        };
        assert_eq!(code, ForwardRefusal::Malformed);
        assert!(reason.contains("8388608"), "{reason}");
    }
}
