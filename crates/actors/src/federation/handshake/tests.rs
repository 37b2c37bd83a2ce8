//! Every branch of the handshake, host and hub side, without IO.

use super::*;
use crate::names::HostName;

fn hello(host: &str) -> Hello {
    Hello::new(HostName::new(host).expect("host"))
}

#[test]
fn a_hello_matching_the_certificate_is_acked() {
    let hub = HubHandshake::new("hub");
    let ack = hub.on_hello(&hello("laptop"), "laptop").expect("ack");
    assert_eq!(
        ack,
        HelloAck {
            hub: "hub".into(),
            protocol: PROTOCOL_VERSION
        }
    );
}

#[test]
fn another_protocol_version_is_refused_naming_both() {
    let hub = HubHandshake::with_protocol("hub", 2);
    let refusal = hub
        .on_hello(&hello("laptop"), "laptop")
        .expect_err("refused");
    assert_eq!(refusal, Refusal::Version { host: 1, hub: 2 });
    let text = refusal.to_string();
    assert!(
        text.contains("protocol 1") && text.contains("speaks 2"),
        "{text}"
    );
}

#[test]
fn a_hello_claiming_another_host_is_refused() {
    let hub = HubHandshake::new("hub");
    let refusal = hub
        .on_hello(&hello("desktop"), "laptop")
        .expect_err("refused");
    assert!(
        matches!(&refusal, Refusal::Identity { claimed, certificate } if claimed == "desktop" && certificate == "laptop")
    );
    assert!(refusal.to_string().contains(
        "a host's identity is the name in its certificate, never a claim inside a message"
    ));
}

#[test]
fn a_first_frame_other_than_hello_is_refused() {
    let hub = HubHandshake::new("hub");
    let refusal = hub
        .on_first_frame(Frame::Ping { nonce: 1 }, "laptop")
        .expect_err("refused");
    assert_eq!(refusal, Refusal::NotHello { got: "Ping" });
    assert!(
        hub.on_first_frame(Frame::Hello(hello("laptop")), "laptop")
            .is_ok()
    );
}

#[test]
fn the_host_accepts_the_ack_of_its_hub() {
    let host = HostHandshake::new(hello("laptop"), "hub");
    assert_eq!(host.hello(), Frame::Hello(hello("laptop")));
    let ack = HubHandshake::new("hub")
        .on_hello(&hello("laptop"), "laptop")
        .expect("ack");
    let accepted = host.on_reply(Frame::HelloAck(ack)).expect("accepted");
    assert_eq!(accepted.hub, "hub");
}

#[test]
fn the_host_refuses_an_ack_of_another_hub_or_version() {
    let host = HostHandshake::new(hello("laptop"), "hub");
    let ack = |hub: &str, protocol| {
        Frame::HelloAck(HelloAck {
            hub: hub.into(),
            protocol,
        })
    };
    assert!(matches!(
        host.on_reply(ack("other", PROTOCOL_VERSION)),
        Err(HandshakeError::WrongHub { .. })
    ));
    assert_eq!(
        host.on_reply(ack("hub", 9)),
        Err(HandshakeError::Version { host: 1, hub: 9 })
    );
    assert_eq!(
        host.on_reply(Frame::Pong { nonce: 0 }),
        Err(HandshakeError::Unexpected { got: "Pong" })
    );
}

#[test]
fn the_host_reads_each_refusal_code() {
    let host = HostHandshake::new(hello("laptop"), "hub");
    let refuse = |r: Refusal| host.on_reply(r.to_frame()).expect_err("refused");
    assert_eq!(
        refuse(Refusal::Version { host: 1, hub: 2 }),
        HandshakeError::Version { host: 1, hub: 2 }
    );
    let identity = Refusal::Identity {
        claimed: "laptop".into(),
        certificate: "x".into(),
    };
    assert!(
        matches!(refuse(identity), HandshakeError::Identity { reason } if reason.contains("certificate"))
    );
    assert!(matches!(
        refuse(Refusal::NotHello { got: "Ping" }),
        HandshakeError::Refused { .. }
    ));
}
