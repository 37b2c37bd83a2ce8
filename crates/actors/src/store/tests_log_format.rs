//! The log's record format is what a store written by an earlier release
//! replays after an upgrade: a group's writes encode to the same bytes as
//! they did when the format was fixed. The group holds thirteen kinds of
//! write (not yet a lane's writes or a delivery from the hub, whose values
//! take more to build); since a variant's number is its place, reordering
//! any variant before the last one here also fails, before it can misread
//! a crashed store's log.

use super::*;
use crate::federation::{ForwardOutcome, ForwardRefusal, Receipt, ReceiptState};
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

/// Written when the format of these variants was fixed (2026-12-07, from
/// the encoding the log had used since it was introduced).
const SAMPLE_GROUP_HEX: &str = concat!(
    "0d00026d3103682f610203682f6203672f6300000a626f6479206f66206d3100",
    "02fca0860100fc000000200103682f6201026d31020103682f620703026c3103",
    "04026d310004026d31010504627573790504026d310103672f63000703682f64",
    "0000010470726f6a010803682f62010903682f6203682f650b0166027b7d0c01",
    "660e026c3103682f6200",
);

#[test]
fn a_group_encodes_to_the_bytes_it_always_has() {
    let ops = sample_group();
    let refs: Vec<&WriteOp> = ops.iter().collect();
    let bytes = encode_group(&refs).expect("encodes");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, SAMPLE_GROUP_HEX);
}

#[test]
fn the_fixed_bytes_read_back_as_the_same_writes() {
    let bytes: Vec<u8> = (0..SAMPLE_GROUP_HEX.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&SAMPLE_GROUP_HEX[i..i + 2], 16).expect("hex"))
        .collect();
    let ops = decode_group(&bytes).expect("decodes");
    assert_eq!(format!("{ops:?}"), format!("{:?}", sample_group()));
}
