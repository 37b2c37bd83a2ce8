//! Handshakes between real rustls configs, in memory: no sockets.

use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{CertificateError, ClientConnection, Error, ServerConnection};

use super::*;
use crate::pki::testing::TestCa;
use crate::pki::{Serial, fingerprint};

#[derive(Debug, PartialEq)]
enum Side {
    Client,
    Server,
}

/// Runs a handshake to its end; the error says which side refused.
fn handshake(
    client: ClientConfig,
    server: ServerConfig,
    hub: &str,
) -> Result<ServerConnection, (Side, Error)> {
    let name = ServerName::try_from(hub.to_owned()).expect("server name");
    let mut c = ClientConnection::new(Arc::new(client), name).map_err(|e| (Side::Client, e))?;
    let mut s = ServerConnection::new(Arc::new(server)).map_err(|e| (Side::Server, e))?;
    for _ in 0..10 {
        let mut buf = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut buf).expect("client write");
        }
        let mut rd = &buf[..];
        while !rd.is_empty() {
            s.read_tls(&mut rd).expect("server read");
            s.process_new_packets().map_err(|e| (Side::Server, e))?;
        }
        let mut buf = Vec::new();
        while s.wants_write() {
            s.write_tls(&mut buf).expect("server write");
        }
        let mut rd = &buf[..];
        while !rd.is_empty() {
            c.read_tls(&mut rd).expect("client read");
            c.process_new_packets().map_err(|e| (Side::Client, e))?;
        }
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok(s);
        }
    }
    panic!("the handshake did not finish");
}

fn server(ca: &TestCa, revocations: Arc<Revocations>) -> ServerConfig {
    hub_server_config(&ca.root(), ca.hub_identity("hub"), revocations).expect("server config")
}

fn client(trusted: &TestCa, issuer: &TestCa, host: &str) -> ClientConfig {
    host_client_config(&trusted.root(), issuer.host_identity(host)).expect("client config")
}

#[test]
fn a_host_of_the_ca_connects_and_is_known_by_its_certificate() {
    let ca = TestCa::new("home");
    let s = handshake(
        client(&ca, &ca, "laptop"),
        server(&ca, Revocations::new()),
        "hub",
    )
    .expect("handshake");
    assert_eq!(s.alpn_protocol(), Some(ALPN));
    assert_eq!(s.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
    let chain = s.peer_certificates().expect("client certificate");
    assert_eq!(identity_of_chain(chain).expect("identity").name, "laptop");
}

#[test]
fn a_host_certificate_from_another_ca_is_refused() {
    let (ca, other) = (TestCa::new("home"), TestCa::new("other"));
    let err = handshake(
        client(&ca, &other, "laptop"),
        server(&ca, Revocations::new()),
        "hub",
    )
    .expect_err("refused");
    assert_eq!(
        err,
        (
            Side::Server,
            Error::InvalidCertificate(CertificateError::UnknownIssuer)
        )
    );
}

#[test]
fn a_host_without_a_certificate_is_refused() {
    let ca = TestCa::new("home");
    let anonymous = ClientConfig::builder_with_provider(crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("tls13")
        .with_root_certificates(roots(&ca.root()).expect("roots"))
        .with_no_client_auth();
    let err = handshake(anonymous, server(&ca, Revocations::new()), "hub").expect_err("refused");
    assert_eq!(err, (Side::Server, Error::NoCertificatesPresented));
}

#[test]
fn a_revoked_certificate_is_refused_by_fingerprint_or_serial() {
    let ca = TestCa::new("home");
    let revocations = Revocations::new();
    let revoked = ca.issue_host("laptop");
    let by_serial = ca.issue_host("desktop");
    revocations.revoke_fingerprint(fingerprint(&revoked.cert_der));
    revocations.revoke_serial(Serial::of_certificate(&by_serial.cert_der).expect("serial"));
    for issued in [&revoked, &by_serial] {
        let config = host_client_config(&ca.root(), crate::pki::testing::identity(issued))
            .expect("client config");
        let err = handshake(config, server(&ca, revocations.clone()), "hub").expect_err("revoked");
        assert_eq!(
            err,
            (
                Side::Server,
                Error::InvalidCertificate(CertificateError::Revoked)
            )
        );
    }
    let fresh = client(&ca, &ca, "laptop");
    handshake(fresh, server(&ca, revocations), "hub").expect("a reissued certificate is fine");
}

#[test]
fn a_host_trusting_another_ca_refuses_the_hub() {
    let (ca, other) = (TestCa::new("home"), TestCa::new("other"));
    let err = handshake(
        client(&other, &ca, "laptop"),
        server(&ca, Revocations::new()),
        "hub",
    )
    .expect_err("refused");
    assert_eq!(
        err,
        (
            Side::Client,
            Error::InvalidCertificate(CertificateError::UnknownIssuer)
        )
    );
}

#[test]
fn a_hub_under_another_name_is_refused() {
    let ca = TestCa::new("home");
    let err = handshake(
        client(&ca, &ca, "laptop"),
        server(&ca, Revocations::new()),
        "elsewhere",
    )
    .expect_err("refused");
    assert!(
        matches!(
            err,
            (
                Side::Client,
                Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })
            )
        ),
        "{err:?}"
    );
}

#[test]
fn a_host_certificate_cannot_pose_as_the_hub_nor_the_hub_as_a_host() {
    let ca = TestCa::new("home");
    let impostor =
        hub_server_config(&ca.root(), ca.host_identity("hub"), Revocations::new()).expect("config");
    let (side, _) = handshake(client(&ca, &ca, "laptop"), impostor, "hub").expect_err("refused");
    assert_eq!(side, Side::Client);
    let as_host = host_client_config(&ca.root(), ca.hub_identity("laptop")).expect("config");
    let (side, _) =
        handshake(as_host, server(&ca, Revocations::new()), "hub").expect_err("refused");
    assert_eq!(side, Side::Server);
}

#[test]
fn an_empty_chain_has_no_identity() {
    assert!(matches!(
        identity_of_chain(&[]),
        Err(TlsError::NoPeerCertificate)
    ));
}

/// The enrollment server: the hub's certificate followed by the CA's.
fn enroll_server(ca: &TestCa, revocations: Arc<Revocations>) -> ServerConfig {
    let mut identity = ca.hub_identity("hub");
    identity.chain.push(ca.root());
    enroll_server_config(&ca.root(), identity, revocations).expect("enroll server config")
}

fn pinned(expected: crate::pki::Fingerprint) -> (Arc<PinnedCaVerifier>, ClientConfig) {
    let verifier = PinnedCaVerifier::new(expected);
    let config =
        enroll_client_config(EnrollTrust::Pinned(verifier.clone()), None).expect("client config");
    (verifier, config)
}

#[test]
fn a_joining_host_trusts_the_ca_with_the_pinned_fingerprint_without_a_certificate() {
    let ca = TestCa::new("home");
    let (verifier, config) = pinned(fingerprint(&ca.root()));
    let s = handshake(config, enroll_server(&ca, Revocations::new()), "hub").expect("handshake");
    assert_eq!(
        s.alpn_protocol(),
        Some(crate::federation::enroll::ENROLL_ALPN)
    );
    assert!(s.peer_certificates().is_none());
    assert!(!verifier.mismatched());
}

#[test]
fn a_pinned_fingerprint_refuses_another_ca_and_records_what_it_saw() {
    let (ca, other) = (TestCa::new("home"), TestCa::new("other"));
    let (verifier, config) = pinned(fingerprint(&other.root()));
    let err =
        handshake(config, enroll_server(&ca, Revocations::new()), "hub").expect_err("refused");
    assert_eq!(
        err,
        (
            Side::Client,
            Error::InvalidCertificate(CertificateError::ApplicationVerificationFailure)
        )
    );
    assert!(verifier.mismatched());
    assert_eq!(verifier.seen(), Some(fingerprint(&ca.root())));
}

#[test]
fn a_pinned_ca_still_checks_the_chain_and_the_hub_name() {
    let (ca, other) = (TestCa::new("home"), TestCa::new("other"));
    // The right CA appended to a hub certificate another CA signed.
    let mut identity = other.hub_identity("hub");
    identity.chain.push(ca.root());
    let forged =
        enroll_server_config(&ca.root(), identity, Revocations::new()).expect("server config");
    let (_, config) = pinned(fingerprint(&ca.root()));
    let (side, _) = handshake(config, forged, "hub").expect_err("refused");
    assert_eq!(side, Side::Client);
    let (_, config) = pinned(fingerprint(&ca.root()));
    let err = handshake(config, enroll_server(&ca, Revocations::new()), "elsewhere")
        .expect_err("refused");
    assert!(
        matches!(
            err,
            (
                Side::Client,
                Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })
            )
        ),
        "{err:?}"
    );
    let no_ca = hub_identity_only(&ca);
    let (verifier, config) = pinned(fingerprint(&ca.root()));
    let (side, _) = handshake(config, no_ca, "hub").expect_err("refused");
    assert_eq!(side, Side::Client);
    assert_eq!(verifier.seen(), None);
}

fn hub_identity_only(ca: &TestCa) -> ServerConfig {
    enroll_server_config(&ca.root(), ca.hub_identity("hub"), Revocations::new())
        .expect("server config")
}

#[test]
fn the_enrollment_server_checks_a_presented_certificate_against_revocation() {
    let ca = TestCa::new("home");
    let revocations = Revocations::new();
    let revoked = ca.issue_host("laptop");
    revocations.revoke_fingerprint(fingerprint(&revoked.cert_der));
    let renewing = |issued| {
        enroll_client_config(
            EnrollTrust::Ca(ca.root()),
            Some(crate::pki::testing::identity(issued)),
        )
        .expect("client config")
    };
    let err = handshake(
        renewing(&revoked),
        enroll_server(&ca, revocations.clone()),
        "hub",
    )
    .expect_err("revoked");
    assert_eq!(
        err,
        (
            Side::Server,
            Error::InvalidCertificate(CertificateError::Revoked)
        )
    );
    let fresh = ca.issue_host("laptop");
    let s = handshake(renewing(&fresh), enroll_server(&ca, revocations), "hub").expect("renewing");
    let chain = s.peer_certificates().expect("client certificate");
    assert_eq!(identity_of_chain(chain).expect("identity").name, "laptop");
}
