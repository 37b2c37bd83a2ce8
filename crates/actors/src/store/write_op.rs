//! One write to the store, as the commit queue takes it: what it is
//! ([`WriteOp`]), what it answers ([`WriteDone`]), whether it may wait for
//! the disk, and how it applies inside the queue's transaction. Must not
//! open, commit or order transactions (the commit queue does); the rules
//! of each write live with its tables (`mail`, `received`, `outbox`,
//! `peers`, `lanes`, `fleets`).

use serde::{Deserialize, Serialize};

use super::forward_feed::GroupFeed;
use super::lanes::{self, LaneWrite};
use super::mail::{self, AcceptOutcome, NewMessage};
use super::mail_tables::MailTables;
use super::{StoreError, outbox, peers};
use crate::federation::{Deliver, ForwardOutcome, Receipt};
use crate::lane::LaneRecord;
use crate::lane::events::{EventKind, LaneEvent};
use crate::model::{PeerRecord, Timestamp};
use crate::names::{MessageId, PeerId};

/// One write. It is also the write-ahead log's record of itself
/// (`logged`): the variants' order and shapes are that record's format,
/// pinned by `store::tests::log_format`, so new variants go at the end
/// and none is reordered or reshaped.
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum WriteOp {
    Accept(NewMessage),
    Ack {
        peer: PeerId,
        ids: Vec<MessageId>,
    },
    Touch(Vec<(PeerId, Timestamp)>),
    NoticeSent {
        lane: String,
        turn: u32,
    },
    Forwarded(MessageId, ForwardOutcome),
    Receipt(Receipt),
    AcceptDelivery(Deliver),
    PutPeer(PeerRecord),
    RemovePeer {
        id: PeerId,
        force: bool,
    },
    RenamePeer {
        old: PeerId,
        new: PeerId,
    },
    PutLane(Box<LaneRecord>),
    PutFleet {
        name: String,
        json: Vec<u8>,
    },
    RemoveFleet(String),
    WriteLane(Box<LaneWrite>, Timestamp),
    RemoveLane {
        name: String,
        peer: PeerId,
        force: bool,
    },
    AppendEvents {
        lane: String,
        turn: u32,
        at: Timestamp,
        #[serde(
            serialize_with = "lanes::events_json::serialize",
            deserialize_with = "lanes::events_json::deserialize"
        )]
        kinds: Vec<EventKind>,
    },
}

impl WriteOp {
    /// Whether a crash may lose this write without breaking a promise, so
    /// a group of only such writes commits without waiting for the disk
    /// (it is on disk with the next group that does): the hub's verdict on
    /// a forward (the outbox hands the message over again and the hub
    /// queues it once), that a lane's owner was sent its notice (it is sent
    /// again, under the same id, so stored once) and when peers were last
    /// seen.
    pub(super) fn may_wait_for_the_disk(&self) -> bool {
        matches!(
            self,
            Self::Forwarded(..) | Self::NoticeSent { .. } | Self::Touch(_)
        )
    }

    /// Whether this write changes an inbox, an outbox entry or a lane, so
    /// readers waiting for mail, lane events or results must look again
    /// once the group is synced. A delivery from the hub is not among them:
    /// it wakes them as soon as its group commits
    /// ([`Self::readable_before_sync`]).
    pub(super) fn wakes_readers(&self) -> bool {
        matches!(
            self,
            Self::Accept(_)
                | Self::Forwarded(..)
                | Self::Receipt(_)
                | Self::Ack { .. }
                | Self::PutLane(_)
                | Self::WriteLane(..)
                | Self::AppendEvents { .. }
        )
    }

    /// A delivery from the hub may be read once its group has committed,
    /// before the sync: the hub keeps it until its receipt, which goes out
    /// only after the sync.
    pub(super) fn readable_before_sync(&self) -> bool {
        matches!(self, Self::AcceptDelivery(_))
    }

    /// The messages these writes carry, when the stage trace is on
    /// (`federation::stage`): none otherwise, at the cost of one check.
    pub(super) fn traced<'a>(ops: impl Iterator<Item = &'a Self>) -> Vec<MessageId> {
        if !crate::federation::stage::on() {
            return Vec::new();
        }
        let ids = ops.filter_map(|op| match op {
            Self::Accept(m) => Some(&m.id),
            Self::AcceptDelivery(d) => Some(&d.message.id),
            _ => None,
        });
        ids.cloned().collect()
    }
}

#[derive(Debug)]
pub(super) enum WriteDone {
    Accepted(AcceptOutcome),
    Count(u64),
    Peer(PeerRecord),
    Events(Vec<LaneEvent>),
    Gone(Vec<PeerId>),
    Nothing,
}

/// Applies one write. Acceptances in a row share their tables (`mail`,
/// opened by the first of them); any other write closes them first.
pub(super) fn apply<'t>(
    txn: &'t redb::WriteTransaction,
    mail: &mut Option<MailTables<'t>>,
    op: WriteOp,
) -> Result<WriteDone, StoreError> {
    apply_feeding(txn, mail, op, None)
}

/// [`apply`], adding what an acceptance queues for the hub to `fed`.
pub(super) fn apply_feeding<'t>(
    txn: &'t redb::WriteTransaction,
    mail: &mut Option<MailTables<'t>>,
    op: WriteOp,
    fed: Option<&mut GroupFeed<'_>>,
) -> Result<WriteDone, StoreError> {
    if !matches!(op, WriteOp::Accept(_) | WriteOp::AcceptDelivery(_)) {
        *mail = None;
    }
    match op {
        WriteOp::Accept(m) => mail::accept(opened(txn, mail)?, m, fed).map(WriteDone::Accepted),
        WriteOp::Ack { peer, ids } => mail::ack(txn, &peer, &ids).map(WriteDone::Count),
        WriteOp::PutPeer(p) => peers::put_peer(txn, &p).map(|()| WriteDone::Nothing),
        WriteOp::RemovePeer { id, force } => {
            peers::remove_peer(txn, &id, force).map(WriteDone::Count)
        }
        WriteOp::RenamePeer { old, new } => {
            peers::rename_peer(txn, &old, &new).map(WriteDone::Peer)
        }
        WriteOp::Touch(seen) => peers::touch(txn, &seen).map(|()| WriteDone::Nothing),
        WriteOp::PutLane(lane) => lanes::put_lane(txn, &lane).map(|()| WriteDone::Nothing),
        WriteOp::PutFleet { name, json } => {
            super::fleets::put(txn, &name, &json).map(|()| WriteDone::Nothing)
        }
        WriteOp::RemoveFleet(name) => {
            super::fleets::remove(txn, &name).map(|()| WriteDone::Nothing)
        }
        WriteOp::WriteLane(w, at) => lanes::write_lane(txn, *w, at).map(WriteDone::Events),
        WriteOp::NoticeSent { lane, turn } => {
            lanes::notice_sent(txn, &lane, turn).map(|()| WriteDone::Nothing)
        }
        WriteOp::RemoveLane { name, peer, force } => {
            lanes::remove_lane(txn, &name, &peer, force).map(WriteDone::Count)
        }
        WriteOp::AppendEvents {
            lane,
            turn,
            at,
            kinds,
        } => lanes::append_events(txn, &lane, turn, at, kinds).map(WriteDone::Events),
        WriteOp::Forwarded(id, outcome) => {
            outbox::forwarded(txn, &id, &outcome).map(|()| WriteDone::Nothing)
        }
        WriteOp::Receipt(r) => outbox::receipt(txn, &r).map(|()| WriteDone::Nothing),
        WriteOp::AcceptDelivery(d) => {
            super::received::accept_delivery(opened(txn, mail)?, &d).map(WriteDone::Gone)
        }
    }
}

/// The acceptances' tables, opened now unless they are open.
fn opened<'a, 't>(
    txn: &'t redb::WriteTransaction,
    mail: &'a mut Option<MailTables<'t>>,
) -> Result<&'a mut MailTables<'t>, StoreError> {
    match mail {
        Some(t) => Ok(t),
        None => Ok(mail.insert(MailTables::open(txn)?)),
    }
}
