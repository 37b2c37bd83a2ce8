//! Fuzzing the federation frame codec: the length-prefixed frames a hub
//! and a host read from each other ([`read_frame`], then
//! [`codec::decode`]), and the enrollment channel's frames, which a hub
//! reads from hosts that have no certificate yet.

use proptest::{prop_assert, prop_assert_eq};
use serde_json::json;

use crate::codec::{self, CodecError};
use crate::federation::enroll::{EnrollFrame, MAX_ENROLL_FRAME};
use crate::federation::frames::*;
use crate::federation::framing::{DEFAULT_MAX_FRAME, FramingError, read_message, write_message};
use crate::fuzzing::{Target, TestCaseError, fuzz};
use crate::model::{Message, PeerRecord};
use crate::names::{HostName, MessageId, PeerId};

fn peer(id: &str) -> PeerId {
    PeerId::parse(id).expect("peer id")
}

fn message() -> Message {
    serde_json::from_value(json!({
        "id": "0192f3a4-7b1c-7d2e-8f00-1a2b3c4d5e6f", "from": "laptop/lead",
        "to": ["workstation/reviewer"], "group": "proj", "summary": "review",
        "body": "Please review the branch `fuzz`.\nThanks!", "sent_at": "2026-11-30T16:00:00.123Z",
        "seq": 42, "in_reply_to": null
    }))
    .expect("message")
}

/// Frames as a host and a hub exchange them during a session.
fn frames() -> Vec<Frame> {
    let record: PeerRecord = serde_json::from_value(json!({
        "id": "laptop/lead", "kind": "mailbox", "product": "claude-code",
        "groups": ["proj"], "joined_at": "2026-11-30T15:59:00Z"
    }))
    .expect("peer record");
    let id = MessageId::new("0192f3a4-7b1c-7d2e-8f00-1a2b3c4d5e6f").expect("id");
    let host = HostName::new("workstation").expect("host");
    vec![
        Frame::Hello(Hello::new(HostName::new("laptop").expect("host"))),
        Frame::HelloAck(HelloAck {
            hub: "hub.home.arpa".into(),
            protocol: PROTOCOL_VERSION,
        }),
        Frame::HelloRefused(HelloRefused {
            code: RefusalCode::ProtocolVersion { hub: 2 },
            reason: "protocol 2".into(),
        }),
        Frame::Ping {
            nonce: 0x1234_5678_9abc,
        },
        Frame::RosterDelta(RosterDelta {
            reset: true,
            upserts: vec![RosterPeer {
                record,
                online: true,
            }],
            removed: vec![peer("laptop/old")],
        }),
        Frame::Deliver(Deliver {
            seq: 7,
            message: message(),
            to: vec![peer("workstation/reviewer")],
        }),
        Frame::Forward(Forward {
            message: message(),
            to: vec![peer("workstation/reviewer")],
        }),
        Frame::Forwarded(Forwarded {
            id: id.clone(),
            outcome: ForwardOutcome::Refused {
                code: ForwardRefusal::QuotaExceeded,
                reason: "full".into(),
            },
        }),
        Frame::Delivered(Delivered {
            seq: 7,
            id: id.clone(),
            gone: Vec::new(),
        }),
        Frame::Receipt(Receipt {
            seq: 3,
            id,
            to: vec![peer("workstation/reviewer")],
            state: ReceiptState::Delivered,
        }),
        Frame::ReceiptAck { seq: 3 },
        Frame::LaneCall(LaneCall {
            call: 9,
            host: host.clone(),
            requester: peer("laptop/lead"),
            groups: Vec::new(),
            op: "lane.status".into(),
            args: r#"{"name":"w1"}"#.into(),
        }),
        Frame::LaneAnswer(LaneAnswer {
            call: 9,
            host,
            result: Err("no lane w1".into()),
        }),
    ]
}

fn enroll_frames() -> Vec<EnrollFrame> {
    serde_json::from_value(json!([
        {"EnrollRequest": {"token_id": "9c1e0b7a", "secret": [7, 7, 7, 7], "host": "laptop",
          "csr_pem": "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n"}},
        {"RenewRequest": {"csr_pem": "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n"}},
        {"EnrollReply": {"Refused": {"code": "TokenExpired", "reason": "the invitation expired"}}}
    ]))
    .expect("enroll frames")
}

/// Each frame's body as the codec writes it, then one stream of them all
/// as [`write_message`] sends it.
fn seeds() -> Vec<Vec<u8>> {
    let runtime = runtime();
    let mut seeds: Vec<Vec<u8>> = frames()
        .iter()
        .map(|f| codec::encode(f).expect("encode"))
        .collect();
    seeds.extend(
        enroll_frames()
            .iter()
            .map(|f| codec::encode(f).expect("encode")),
    );
    let mut stream = Vec::new();
    runtime.block_on(async {
        for frame in frames() {
            write_message(&mut stream, &frame, DEFAULT_MAX_FRAME)
                .await
                .expect("write");
        }
    });
    seeds.push(stream);
    seeds
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// A decoded value encodes to bytes that decode to it again, and the
/// decoder refuses those bytes with one more or one less.
fn round_trips<T>(bytes: &[u8], limit: usize) -> Result<(), TestCaseError>
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let Ok(value) = codec::decode::<T>(bytes, limit) else {
        return Ok(());
    };
    let again = codec::encode(&value).expect("a decoded value encodes");
    prop_assert_eq!(codec::decode::<T>(&again, limit).ok(), Some(value));
    let mut longer = bytes.to_vec();
    longer.push(0);
    let refused = matches!(
        codec::decode::<T>(&longer, limit),
        Err(CodecError::Trailing(1) | CodecError::TooLarge { .. })
    );
    prop_assert!(refused, "one more byte was accepted");
    if let Some((_, shorter)) = bytes.split_last() {
        prop_assert!(
            codec::decode::<T>(shorter, limit).is_err(),
            "a strict prefix decoded"
        );
    }
    Ok(())
}

/// Reads frames off `bytes` as a link would, until the end or an error.
async fn read_stream<T: serde::de::DeserializeOwned>(
    mut bytes: &[u8],
    limit: usize,
) -> Result<usize, TestCaseError> {
    let total = bytes.len();
    let mut frames = 0usize;
    loop {
        match read_message::<T, _>(&mut bytes, limit).await {
            Ok(Some(_)) => frames += 1,
            Ok(None) => return Ok(frames),
            Err(FramingError::Io(e)) => {
                return Err(TestCaseError::fail(format!("io error from a slice: {e}")));
            }
            Err(_) => return Ok(frames),
        }
        prop_assert!(frames * 4 <= total, "more frames than the bytes hold");
    }
}

#[test]
fn fuzz_federation_frames() {
    let seeds = seeds();
    for seed in &seeds[..frames().len()] {
        codec::decode::<Frame>(seed, DEFAULT_MAX_FRAME).expect("every frame seed decodes");
    }
    let runtime = runtime();
    let target = Target {
        name: "federation-frames",
        seeds: &seeds,
        dictionary: &[
            &[0, 0, 0, 0],
            &[0xff; 4],
            &[0xfb],
            &[0xfc],
            &[0xfd],
            &[0, 0, 1, 0],
            b"laptop/lead",
        ],
    };
    fuzz(target, |input| {
        round_trips::<Frame>(input, DEFAULT_MAX_FRAME)?;
        round_trips::<EnrollFrame>(input, MAX_ENROLL_FRAME)?;
        runtime.block_on(async {
            read_stream::<Frame>(input, DEFAULT_MAX_FRAME).await?;
            read_stream::<EnrollFrame>(input, MAX_ENROLL_FRAME).await
        })?;
        Ok(())
    });
}
