//! The hub link over real QUIC on 127.0.0.1 with real certificates: who
//! gets in, who is refused, and what each side is told.

mod support;

use flotilla_actors::federation::{HubHandshake, Refusal};
use flotilla_actors::pki::fingerprint;
use flotilla_actors::pki::testing::TestCa;
use flotilla_actors::tls;
use flotilla_hub::{ConnectError, LinkEvent, SessionError, connect, transport};
use support::{Certs, TestHub, WAIT, client_endpoint, hello};

#[tokio::test]
async fn a_valid_host_connects_and_pings() {
    let (certs, ca) = (Certs::new(), TestCa::new("home"));
    let mut hub = TestHub::start(&certs, &ca);
    let options = hub.options(certs.host_config(&ca, &ca, "laptop"));
    let endpoint = client_endpoint();
    let mut session = connect(&endpoint, &options, hello("laptop"))
        .await
        .expect("connect");
    assert_eq!(session.accepted().hub, "hub");
    assert!(matches!(hub.next_event().await, LinkEvent::Up { host, .. } if host == "laptop"));
    for nonce in 0..3 {
        session.ping(nonce, WAIT).await.expect("pong");
    }
    let identity = tls::peer_identity(session.connection()).expect("hub identity");
    assert_eq!(identity.name, "hub");
    session.close();
    assert!(matches!(hub.next_event().await, LinkEvent::Closed { host, .. } if host == "laptop"));
    hub.stop().await;
}

#[tokio::test]
async fn a_host_certificate_from_another_ca_is_refused() {
    let (certs, ca, other) = (Certs::new(), TestCa::new("home"), TestCa::new("other"));
    let mut hub = TestHub::start(&certs, &ca);
    let options = hub.options(certs.host_config(&ca, &other, "laptop"));
    let err = connect(&client_endpoint(), &options, hello("laptop"))
        .await
        .expect_err("refused");
    assert!(
        matches!(err, ConnectError::CertificateRefused { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("the hub refused this host's certificate")
    );
    assert!(matches!(hub.next_event().await, LinkEvent::Failed { .. }));
    hub.stop().await;
}

#[tokio::test]
async fn a_host_presenting_no_certificate_is_refused() {
    let (certs, ca) = (Certs::new(), TestCa::new("home"));
    let hub = TestHub::start(&certs, &ca);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.root()).expect("root");
    let mut anonymous = rustls::ClientConfig::builder_with_provider(tls::crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("tls13")
        .with_root_certificates(roots)
        .with_no_client_auth();
    anonymous.alpn_protocols = vec![tls::ALPN.to_vec()];
    let options = hub.options(transport::client_config(anonymous).expect("quic config"));
    let err = connect(&client_endpoint(), &options, hello("laptop"))
        .await
        .expect_err("refused");
    assert!(
        matches!(err, ConnectError::CertificateRefused { .. }),
        "{err}"
    );
    hub.stop().await;
}

#[tokio::test]
async fn a_revoked_certificate_is_refused() {
    let (certs, ca) = (Certs::new(), TestCa::new("home"));
    let hub = TestHub::start(&certs, &ca);
    let identity = certs.host_identity(&ca, "laptop");
    hub.revocations
        .revoke_fingerprint(fingerprint(&identity.chain[0]));
    let tls = tls::host_client_config(&ca.root(), identity).expect("tls");
    let options = hub.options(transport::client_config(tls).expect("quic"));
    let err = connect(&client_endpoint(), &options, hello("laptop"))
        .await
        .expect_err("revoked");
    assert!(
        matches!(err, ConnectError::CertificateRefused { .. }),
        "{err}"
    );
    // Another host of the same CA still gets in.
    let options = hub.options(certs.host_config(&ca, &ca, "desktop"));
    connect(&client_endpoint(), &options, hello("desktop"))
        .await
        .expect("not revoked");
    hub.stop().await;
}

#[tokio::test]
async fn a_protocol_version_mismatch_is_clear_on_both_sides() {
    let (certs, ca) = (Certs::new(), TestCa::new("home"));
    let mut hub = TestHub::start_with(&certs, &ca, HubHandshake::with_protocol("hub", 7));
    let options = hub.options(certs.host_config(&ca, &ca, "laptop"));
    let err = connect(&client_endpoint(), &options, hello("laptop"))
        .await
        .expect_err("refused");
    assert!(
        matches!(err, ConnectError::Version { host: 1, hub: 7 }),
        "{err}"
    );
    assert!(
        err.to_string().contains("protocol 1, the hub speaks 7"),
        "{err}"
    );
    let event = hub.next_event().await;
    assert!(
        matches!(&event, LinkEvent::Refused { identity, refusal: Refusal::Version { host: 1, hub: 7 }, .. } if identity == "laptop"),
        "{event:?}"
    );
    hub.stop().await;
}

#[tokio::test]
async fn a_hello_claiming_another_host_is_refused() {
    let (certs, ca) = (Certs::new(), TestCa::new("home"));
    let mut hub = TestHub::start(&certs, &ca);
    let options = hub.options(certs.host_config(&ca, &ca, "laptop"));
    let err = connect(&client_endpoint(), &options, hello("desktop"))
        .await
        .expect_err("refused");
    assert!(matches!(err, ConnectError::Identity { .. }), "{err}");
    assert!(
        err.to_string().contains("never a claim inside a message"),
        "{err}"
    );
    let event = hub.next_event().await;
    assert!(
        matches!(&event, LinkEvent::Refused { refusal: Refusal::Identity { claimed, certificate }, .. }
            if claimed == "desktop" && certificate == "laptop"),
        "{event:?}"
    );
    hub.stop().await;
}

#[tokio::test]
async fn a_host_trusting_another_ca_refuses_the_hub() {
    let (certs, ca, other) = (Certs::new(), TestCa::new("home"), TestCa::new("other"));
    let hub = TestHub::start(&certs, &ca);
    let options = hub.options(certs.host_config(&other, &ca, "laptop"));
    let err = connect(&client_endpoint(), &options, hello("laptop"))
        .await
        .expect_err("refused");
    assert!(matches!(err, ConnectError::HubCertificate { .. }), "{err}");
    hub.stop().await;
}

#[tokio::test]
async fn stopping_the_hub_ends_its_links() {
    let (certs, ca) = (Certs::new(), TestCa::new("home"));
    let hub = TestHub::start(&certs, &ca);
    let options = hub.options(certs.host_config(&ca, &ca, "laptop"));
    let mut session = connect(&client_endpoint(), &options, hello("laptop"))
        .await
        .expect("connect");
    hub.stop().await;
    let err = session.ping(1, WAIT).await.expect_err("link ended");
    assert!(
        matches!(&err, SessionError::Closed(reason) if reason.contains("shutting down")),
        "{err}"
    );
}
