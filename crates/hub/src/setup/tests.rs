//! Tests of hub setup: CA and certificate files, inventory, refusals.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

use flotilla_actors::names::HostName;
use flotilla_actors::pki::AltName;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn init_makes_the_ca_and_the_hub_certificate_and_never_overwrites() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = CertPaths::new(dir.path().join("certs"));
    let now = SystemTime::now();
    let extra = vec![AltName::Ip([127, 0, 0, 1].into())];
    let made = init(&paths, "hub.test", extra.clone(), now).expect("init");
    assert_eq!(made.hub.name, "hub.test");
    assert_eq!(mode(&paths.ca_key()), 0o600);
    assert_eq!(mode(&paths.hub_key()), 0o600);
    assert_eq!(mode(&paths.dir), 0o700);
    let err = init(&paths, "hub.test", extra, now).expect_err("second init");
    assert!(matches!(err, SetupError::CaExists(_)), "{err}");
    let inv = inventory(&paths);
    let ca = inv.ca.expect("ca").expect("readable");
    assert_eq!(ca.fingerprint, made.ca.fingerprint);
    assert!(inv.ca_key);
    assert_eq!(inv.hub.expect("hub").expect("readable").name, "hub.test");
    assert!(inv.host.is_none());
}

#[test]
fn issue_writes_the_files_a_host_needs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = CertPaths::new(dir.path().join("certs"));
    let now = SystemTime::now();
    init(&paths, "hub.test", Vec::new(), now).expect("init");
    let out = dir.path().join("laptop");
    let host = HostName::new("laptop").expect("name");
    let issued = issue_host(&paths, &host, &out, now).expect("issue");
    assert_eq!(issued.cert.name, "laptop");
    assert_eq!(issued.cert.days_left(now), 89);
    assert_eq!(mode(&issued.out.host_key()), 0o600);
    host_client_config(&issued.out).expect("a usable host config");
    hub_server_config(&paths, Revocations::new()).expect("a usable hub config");
    let again = issue_host(&paths, &host, &out, now).expect_err("key exists");
    assert!(
        again.to_string().contains("refusing to overwrite"),
        "{again}"
    );
}

#[test]
fn issuing_without_a_ca_says_how_to_make_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = CertPaths::new(dir.path());
    let host = HostName::new("laptop").expect("name");
    let err = issue_host(&paths, &host, dir.path(), SystemTime::now()).expect_err("no CA");
    assert!(err.to_string().contains("flotilla hub init"), "{err}");
    let err = host_client_config(&paths).expect_err("no certs");
    assert!(err.to_string().contains("certs issue"), "{err}");
}

#[test]
fn days_left_counts_whole_days_and_goes_negative() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let mut s = CertSummary {
        name: String::new(),
        dns_names: Vec::new(),
        fingerprint: flotilla_actors::pki::fingerprint(b"x"),
        serial: String::new(),
        not_after: now + Duration::from_secs(86_400 * 3 + 5),
    };
    assert_eq!(s.days_left(now), 3);
    s.not_after = now - Duration::from_secs(10);
    assert_eq!(s.days_left(now), -1);
}
