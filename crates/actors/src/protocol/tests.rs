//! Tests of the control protocol's framing, parsing and error codes.

use serde_json::json;

use super::*;

fn line(v: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&v).expect("json")
}

#[test]
fn parses_a_typed_request() {
    let (id, req) = RequestFrame::parse(&line(json!({
        "v": 1, "id": 7, "op": "send",
        "args": {"as": "lead", "to": ["reviewer"], "body": "hi"}
    })))
    .expect("valid");
    assert_eq!(id, json!(7));
    match req {
        Request::Send(args) => {
            assert_eq!(args.as_peer.as_str(), "lead");
            assert_eq!(args.to, ["reviewer"]);
            assert!(args.id.is_none());
        }
        other => panic!("wrong op {}", other.name()),
    }
}

#[test]
fn missing_args_mean_empty_args() {
    let (_, req) =
        RequestFrame::parse(&line(json!({"v":1,"id":"a","op":"host.status"}))).expect("ok");
    assert_eq!(req.name(), "host.status");
}

#[test]
fn refuses_bad_frames_with_codes() {
    let cases = [
        (
            b"not json".to_vec(),
            ErrorCode::BadRequest,
            serde_json::Value::Null,
        ),
        (
            line(json!({"v":2,"id":1,"op":"roster"})),
            ErrorCode::UnsupportedVersion,
            json!(1),
        ),
        (
            line(json!({"v":1,"id":2,"op":"nope"})),
            ErrorCode::BadRequest,
            json!(2),
        ),
        (
            line(json!({"v":1,"id":3,"op":"peer.join","args":{"name":"a b"}})),
            ErrorCode::BadRequest,
            json!(3),
        ),
    ];
    for (bytes, code, want_id) in cases {
        let refused = RequestFrame::parse(&bytes).expect_err("must fail");
        assert_eq!(refused.error.code, code, "{}", refused.error.message);
        assert_eq!(refused.id, want_id);
    }
}

#[test]
fn replies_round_trip_through_frames() {
    let reply = InboxAckReply { acked: 3 };
    let frame = ResponseFrame::ok(json!(1), reply_value(&reply));
    let text = serde_json::to_string(&frame).expect("json");
    let back: ResponseFrame = serde_json::from_str(&text).expect("frame");
    assert_eq!(back.into_reply::<InboxAckArgs>().expect("reply").acked, 3);

    let err = ControlError::new(ErrorCode::NotFound, "no peer").with_hint("join first");
    let text = serde_json::to_string(&ResponseFrame::err(json!(2), err.clone())).expect("json");
    assert!(text.contains("\"code\":\"not_found\""));
    let back: ResponseFrame = serde_json::from_str(&text).expect("frame");
    assert_eq!(back.into_reply::<RosterArgs>().expect_err("error"), err);
}

#[test]
fn every_op_name_is_unique_and_parses() {
    let mut names = OP_NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), OP_NAMES.len());
    // Every op is known to the parser: an empty args object is either
    // accepted or refused for its arguments, never as an unknown op.
    for name in OP_NAMES {
        if let Err(e) = Request::from_parts(name, json!({})) {
            assert!(e.message.contains("bad arguments"), "{name}: {}", e.message);
        }
    }
}
