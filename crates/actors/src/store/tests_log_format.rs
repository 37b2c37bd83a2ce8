//! The log's record format is what a store written by an earlier release
//! replays after an upgrade: a group's writes encode to the same bytes as
//! they did when the format was fixed, for every kind of write (two
//! groups: the mail and peers' writes, then the lanes' and a delivery from
//! the hub). A reordered or reshaped write fails here before it can
//! misread a crashed store's log.

use super::*;
use crate::federation::{ForwardOutcome, ForwardRefusal, Receipt, ReceiptState};
use crate::lane::events::EventKind;
use crate::store::lanes::LaneWrite;
use crate::store::logged::{decode_group, encode_group};
use crate::store::write_op::WriteOp;

fn sample_group() -> Vec<WriteOp> {
    let b = PeerId::parse("h/b").expect("b");
    let id = MessageId::new("m1").expect("id");
    vec![
        WriteOp::Accept(msg("m1", "h/a", &["h/b", "g/c"])),
        WriteOp::Ack {
            peer: b.clone(),
            ids: vec![id.clone()],
        },
        WriteOp::Touch(vec![(b.clone(), Timestamp(7))]),
        WriteOp::NoticeSent {
            lane: "l1".into(),
            turn: 3,
        },
        WriteOp::Forwarded(id.clone(), ForwardOutcome::Queued),
        WriteOp::Forwarded(
            id.clone(),
            ForwardOutcome::Refused {
                code: ForwardRefusal::Unavailable,
                reason: "busy".into(),
            },
        ),
        WriteOp::Receipt(Receipt {
            seq: 4,
            id: id.clone(),
            to: vec![PeerId::parse("g/c").expect("c")],
            state: ReceiptState::Delivered,
        }),
        WriteOp::PutPeer(peer("h/d", &["proj"])),
        WriteOp::RemovePeer {
            id: b.clone(),
            force: true,
        },
        WriteOp::RenamePeer {
            old: b.clone(),
            new: PeerId::parse("h/e").expect("e"),
        },
        WriteOp::PutFleet {
            name: "f".into(),
            json: b"{}".to_vec(),
        },
        WriteOp::RemoveFleet("f".into()),
        WriteOp::RemoveLane {
            name: "l1".into(),
            peer: b,
            force: false,
        },
    ]
}

/// The lanes' writes and a delivery from the hub.
fn lane_and_delivery_group() -> Vec<WriteOp> {
    let mut write = LaneWrite::record(super::lanes::record());
    write.turn = 2;
    write.events = vec![EventKind::Note {
        text: "started".into(),
    }];
    vec![
        WriteOp::AcceptDelivery(super::group::delivery("m2", "h/b")),
        WriteOp::PutLane(Box::new(super::lanes::record())),
        WriteOp::WriteLane(Box::new(write), Timestamp(9)),
        WriteOp::AppendEvents {
            lane: "w".into(),
            turn: 2,
            at: Timestamp(10),
            kinds: vec![EventKind::TurnCompleted(super::lanes::result("one"))],
        },
    ]
}

/// Written when the format of these variants was fixed (2026-12-07, from
/// the encoding the log had used since it was introduced).
const SAMPLE_GROUP_HEX: &str = concat!(
    "0d00026d3103682f610203682f6203672f6300000a626f6479206f66206d3100",
    "02fca0860100fc000000200103682f6201026d31020103682f620703026c3103",
    "04026d310004026d31010504627573790504026d310103672f63000703682f64",
    "0000010470726f6a010803682f62010903682f6203682f650b0166027b7d0c01",
    "660e026c3103682f6200",
);

/// [`lane_and_delivery_group`] as the log wrote it when its format was
/// fixed (2026-12-07, by the encoding before `WriteOp` became the record).
const LANE_AND_DELIVERY_GROUP_HEX: &str = concat!(
    "040601026d3203772f780103682f6200001166726f6d20616e6f746865722068",
    "6f73740301000103682f620a017700042f746d700000000100000006682f6c65",
    "61640001047472756500000000000000010000000000000d017700042f746d70",
    "0000000100000006682f6c656164000104747275650000000000000001000000",
    "00000002225b7b2274797065223a226e6f7465222c2274657874223a22737461",
    "72746564227d5d00000000090f0177020afb2f015b7b2274797065223a227475",
    "726e2e636f6d706c65746564222c226c616e65223a22682f77222c2273746174",
    "7573223a22636f6d706c65746564222c2265786974223a302c22726573756c74",
    "223a226f6e65222c226572726f72223a6e756c6c2c227573616765223a7b2269",
    "6e707574223a302c226f7574707574223a302c22636163686564223a307d2c22",
    "636f6e746578745f77696e646f77223a6e756c6c2c22636f6e746578745f7573",
    "65645f706374223a6e756c6c2c22636f73745f757364223a6e756c6c2c226e61",
    "746976655f73657373696f6e5f6964223a6e756c6c2c226475726174696f6e5f",
    "6d73223a312c2266696e69736865645f6174223a22313937302d30312d303154",
    "30303a30303a30302e3030325a222c226572726f725f636c617373223a6e756c",
    "6c7d5d",
);

/// `ops` encode to `hex`, and `hex` decodes to `ops`.
fn pinned(ops: &[WriteOp], hex: &str) {
    let refs: Vec<&WriteOp> = ops.iter().collect();
    let bytes = encode_group(&refs).expect("encodes");
    let encoded: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(encoded, hex, "the encoding");
    let fixed: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let back = decode_group(&fixed).expect("decodes");
    assert_eq!(
        format!("{back:?}"),
        format!("{ops:?}"),
        "the bytes read back"
    );
}

#[test]
fn the_mail_and_peers_writes_keep_their_bytes() {
    pinned(&sample_group(), SAMPLE_GROUP_HEX);
}

#[test]
fn the_lanes_writes_and_a_delivery_keep_their_bytes() {
    pinned(&lane_and_delivery_group(), LANE_AND_DELIVERY_GROUP_HEX);
}
