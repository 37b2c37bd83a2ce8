//! The enrollment listener in process, over real QUIC on 127.0.0.1: a
//! token enrolls its host once (even with concurrent joins), a wrong CA
//! fingerprint fails before anything is sent, and renewal signs for the
//! name in the client certificate.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use flotilla_actors::federation::enroll::{EnrollRefusalCode, EnrollToken, base64url_encode};
use flotilla_actors::names::HostName;
use flotilla_actors::pki::{AltName, CertInfo, Subject, make_csr};
use flotilla_actors::tls::{Revocations, TlsIdentity};
use flotilla_hub::enroll::client::{self, EnrollClientError};
use flotilla_hub::enroll::{EnrollAuthority, EnrollServer};
use flotilla_hub::enroll_store::EnrollStore;
use flotilla_hub::setup::{self, CertPaths};
use tokio::sync::oneshot;

const WAIT: Duration = Duration::from_secs(10);

struct Hub {
    _dir: tempfile::TempDir,
    store: EnrollStore,
    addr: SocketAddr,
    fingerprint: String,
    revocations: std::sync::Arc<Revocations>,
    _stop: oneshot::Sender<()>,
}

async fn hub() -> Hub {
    hub_with(|server| server).await
}

async fn hub_with(tune: impl FnOnce(EnrollServer) -> EnrollServer) -> Hub {
    let dir = tempfile::tempdir().expect("tempdir");
    let certs = CertPaths::new(dir.path().join("certs"));
    let ip = AltName::Ip("127.0.0.1".parse().expect("ip"));
    let made = setup::init(&certs, "hub.test", vec![ip], SystemTime::now()).expect("init");
    let store = EnrollStore::new(dir.path().join("enroll"));
    let revocations = Revocations::new();
    let config = setup::enroll_server_config(&certs, revocations.clone()).expect("config");
    let authority = EnrollAuthority {
        certs,
        store: store.clone(),
        hub_name: "hub.test".into(),
        hub_addrs: vec!["127.0.0.1:1".into()],
        host_validity: Duration::from_secs(3600),
    };
    let server =
        EnrollServer::bind("127.0.0.1:0".parse().expect("addr"), config, authority).expect("bind");
    let server = tune(server);
    let addr = server.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    Hub {
        _dir: dir,
        store,
        addr,
        fingerprint: made.ca.fingerprint.to_string(),
        revocations,
        _stop: stop,
    }
}

impl Hub {
    fn token(&self, host: &str, ttl: Duration) -> EnrollToken {
        let host = HostName::new(host).expect("host");
        let made = self
            .store
            .create_invite(&host, ttl, SystemTime::now())
            .expect("invite");
        EnrollToken {
            hub_name: "hub.test".into(),
            hub_addrs: vec!["127.0.0.1:1".into()],
            enroll_addrs: vec![self.addr.to_string()],
            ca_fingerprint: self.fingerprint.clone(),
            host,
            token_id: made.token_id,
            secret: base64url_encode(&made.secret),
        }
    }
}

fn csr(host: &str) -> flotilla_actors::pki::Csr {
    make_csr(&Subject::host(&HostName::new(host).expect("host"))).expect("csr")
}

fn refusal(result: Result<client::Joined, EnrollClientError>) -> EnrollRefusalCode {
    match result {
        Err(EnrollClientError::Refused { code, .. }) => code,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_token_enrolls_its_host_once_even_when_joins_race() {
    let hub = hub().await;
    let token = hub.token("laptop", Duration::from_secs(60));
    let (one, two) = (csr("laptop"), csr("laptop"));
    let (a, b) = tokio::join!(
        client::join(&token, &one.csr_pem, WAIT),
        client::join(&token, &two.csr_pem, WAIT)
    );
    let (won, lost) = if a.is_ok() { (a, b) } else { (b, a) };
    let joined = won.expect("one join wins");
    assert_eq!(refusal(lost), EnrollRefusalCode::TokenUsed);
    let info = CertInfo::from_pem(&joined.issued.cert_pem).expect("cert");
    assert_eq!(info.name, "laptop");
    assert_eq!(joined.hub_addr, "127.0.0.1:1");
    assert_eq!(hub.store.issued("laptop").expect("issued").len(), 1);
}

#[tokio::test]
async fn each_refusal_comes_back_with_its_code() {
    let hub = hub().await;
    let token = hub.token("laptop", Duration::from_secs(60));
    let wrong_csr = client::join(&token, &csr("desktop").csr_pem, WAIT).await;
    assert_eq!(refusal(wrong_csr), EnrollRefusalCode::WrongHost);
    let mut unknown = token.clone();
    unknown.token_id = "ffff".into();
    let result = client::join(&unknown, &csr("laptop").csr_pem, WAIT).await;
    assert_eq!(refusal(result), EnrollRefusalCode::UnknownToken);
    let expired = hub.token("laptop", Duration::ZERO);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let result = client::join(&expired, &csr("laptop").csr_pem, WAIT).await;
    assert_eq!(refusal(result), EnrollRefusalCode::TokenExpired);
}

#[tokio::test]
async fn a_wrong_fingerprint_fails_the_handshake_and_the_token_stays_unused() {
    let hub = hub().await;
    let mut token = hub.token("laptop", Duration::from_secs(60));
    token.ca_fingerprint = format!("sha256:{}", "00".repeat(32));
    let result = client::join(&token, &csr("laptop").csr_pem, WAIT).await;
    match result {
        Err(EnrollClientError::CaMismatch { seen, .. }) => assert_eq!(seen, hub.fingerprint),
        other => panic!("expected a CA mismatch, got {other:?}"),
    }
    assert!(matches!(
        hub.store.state(&token.token_id).expect("state"),
        flotilla_actors::federation::enroll::InviteState::Pending(_)
    ));
}

#[tokio::test]
async fn renewal_signs_for_the_name_in_the_client_certificate() {
    let hub = hub().await;
    let token = hub.token("laptop", Duration::from_secs(60));
    let first = csr("laptop");
    let joined = client::join(&token, &first.csr_pem, WAIT)
        .await
        .expect("join");
    let identity = TlsIdentity::from_pem(&joined.issued.cert_pem, &first.key_pem).expect("id");
    let ca = TlsIdentity::from_pem(&joined.issued.ca_pem, &first.key_pem)
        .expect("ca")
        .chain
        .remove(0);
    let renewed = client::renew(
        hub.addr,
        "hub.test",
        ca,
        identity,
        &csr("laptop").csr_pem,
        WAIT,
    )
    .await
    .expect("renew");
    let old = CertInfo::from_pem(&joined.issued.cert_pem).expect("old");
    let new = CertInfo::from_pem(&renewed.cert_pem).expect("new");
    assert_eq!(new.name, "laptop");
    assert_ne!(new.serial, old.serial);
    assert_eq!(hub.store.issued("laptop").expect("issued").len(), 2);
}

#[tokio::test]
async fn a_revoked_certificate_cannot_renew() {
    let hub = hub().await;
    let token = hub.token("laptop", Duration::from_secs(60));
    let first = csr("laptop");
    let joined = client::join(&token, &first.csr_pem, WAIT)
        .await
        .expect("join");
    let info = CertInfo::from_pem(&joined.issued.cert_pem).expect("cert");
    hub.revocations.revoke_fingerprint(info.fingerprint);
    let identity = TlsIdentity::from_pem(&joined.issued.cert_pem, &first.key_pem).expect("id");
    let ca = TlsIdentity::from_pem(&joined.issued.ca_pem, &first.key_pem)
        .expect("ca")
        .chain
        .remove(0);
    let result = client::renew(
        hub.addr,
        "hub.test",
        ca,
        identity,
        &csr("laptop").csr_pem,
        WAIT,
    )
    .await;
    assert!(
        matches!(result, Err(EnrollClientError::CertificateRefused { .. })),
        "{result:?}"
    );
    assert_eq!(hub.store.issued("laptop").expect("issued").len(), 1);
}

/// Issue 13, point 4: the enrollment port answered every attempt from one
/// address (and logged each failure); it now refuses an address over its
/// limit before any handshake.
#[tokio::test]
async fn an_address_over_its_attempt_limit_is_refused_before_the_handshake() {
    let hub = hub_with(|s| s.with_attempt_limit(3, Duration::from_secs(60))).await;
    let mut unknown = hub.token("laptop", Duration::from_secs(60));
    unknown.token_id = "ffff".into();
    for _ in 0..3 {
        let answered = client::join(&unknown, &csr("laptop").csr_pem, WAIT).await;
        assert_eq!(refusal(answered), EnrollRefusalCode::UnknownToken);
    }
    for _ in 0..3 {
        let refused = client::join(&unknown, &csr("laptop").csr_pem, WAIT).await;
        assert!(
            !matches!(refused, Err(EnrollClientError::Refused { .. }) | Ok(_)),
            "no answer past the limit: {refused:?}"
        );
    }
    // The refused attempts spent nothing: a valid token is still unused.
    let token = hub.token("laptop", Duration::from_secs(60));
    assert!(matches!(
        hub.store.state(&token.token_id).expect("state"),
        flotilla_actors::federation::enroll::InviteState::Pending(_)
    ));
}
