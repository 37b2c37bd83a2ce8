//! Unit tests of the certificates: CA, issuing, CSRs, reading, file modes.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

use super::*;
use crate::names::HostName;

fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)
}

fn ca() -> CertificateAuthority {
    CertificateAuthority::create(
        "test",
        Validity::starting(now(), CA_VALIDITY).expect("validity"),
    )
    .expect("create CA")
}

fn host(name: &str) -> Subject {
    Subject::host(&HostName::new(name).expect("host name"))
}

#[test]
fn a_new_ca_has_a_fingerprint_of_its_der() {
    let ca = ca();
    let text = ca.fingerprint().to_string();
    assert!(text.starts_with("sha256:"), "{text}");
    assert_eq!(text.len(), 7 + 64);
    assert_eq!(text, text.to_lowercase());
    assert_eq!(ca.fingerprint(), fingerprint(ca.cert_der()));
    assert_eq!(
        text.parse::<Fingerprint>().expect("parse"),
        ca.fingerprint()
    );
    let parsed = x509_parser::parse_x509_certificate(ca.cert_der())
        .expect("parse")
        .1;
    assert!(parsed.is_ca());
    assert_eq!(
        parsed.subject().to_string(),
        "CN=Flotilla CA test, O=Flotilla"
    );
}

#[test]
fn a_ca_reloads_from_its_pem_files_and_still_signs() {
    let ca = ca();
    let again = CertificateAuthority::from_pem(ca.cert_pem(), &ca.key_pem()).expect("reload");
    assert_eq!(again.fingerprint(), ca.fingerprint());
    let issued = again
        .issue(&host("laptop"), Validity::default_for(Role::Host, now()))
        .expect("issue");
    let parsed = x509_parser::parse_x509_certificate(&issued.cert_der)
        .expect("parse")
        .1;
    assert_eq!(
        parsed.issuer().to_string(),
        "CN=Flotilla CA test, O=Flotilla"
    );
}

#[test]
fn a_ca_key_from_another_ca_is_refused() {
    let (a, b) = (ca(), ca());
    let err = CertificateAuthority::from_pem(a.cert_pem(), &b.key_pem()).expect_err("mismatch");
    assert!(matches!(err, PkiError::KeyMismatch), "{err}");
    let err = CertificateAuthority::from_pem("garbage", &a.key_pem()).expect_err("bad cert");
    assert!(
        matches!(
            err,
            PkiError::BadCa {
                what: "certificate",
                ..
            }
        ),
        "{err}"
    );
    let err = CertificateAuthority::from_pem(a.cert_pem(), "garbage").expect_err("bad key");
    assert!(matches!(err, PkiError::BadCa { what: "key", .. }), "{err}");
}

#[test]
fn a_host_certificate_names_the_host_and_ends_when_told() {
    let ca = ca();
    let validity = Validity::default_for(Role::Host, now());
    let issued = ca.issue(&host("laptop"), validity).expect("issue");
    let info = CertInfo::from_der(&issued.cert_der).expect("info");
    assert_eq!(info.name, "laptop");
    assert_eq!(info.not_after, now() + HOST_VALIDITY);
    assert!(!info.is_ca);
    assert_eq!(info.fingerprint, fingerprint(&issued.cert_der));
    assert_eq!(CertInfo::from_pem(&issued.cert_pem).expect("pem"), info);
    let again = ca.issue(&host("laptop"), validity).expect("issue");
    let serial = CertInfo::from_der(&again.cert_der).expect("info").serial;
    assert_ne!(serial, info.serial, "serials are random");
    assert_eq!(
        info.serial.to_string().parse::<Serial>().expect("serial"),
        info.serial
    );
}

#[test]
fn the_hub_gets_extra_names_and_a_year() {
    let ca = ca();
    let extra = vec![
        AltName::Dns("hub.home.arpa".into()),
        AltName::Ip("127.0.0.1".parse().expect("ip")),
    ];
    let subject = Subject::hub("hub", extra).expect("subject");
    let issued = ca
        .issue(&subject, Validity::default_for(Role::Hub, now()))
        .expect("issue");
    let info = CertInfo::from_der(&issued.cert_der).expect("info");
    assert_eq!(info.name, "hub");
    assert_eq!(info.dns_names, ["hub", "hub.home.arpa"]);
    assert_eq!(info.not_after, now() + HUB_VALIDITY);
}

#[test]
fn a_hub_name_must_be_a_dns_name() {
    for bad in ["127.0.0.1", "bad name", ""] {
        let err = Subject::hub(bad, Vec::new()).expect_err(bad);
        assert!(matches!(err, PkiError::InvalidName { .. }), "{err}");
    }
    let err = Subject::hub("hub", vec![AltName::Dns("no spaces".into())]).expect_err("extra");
    assert!(matches!(err, PkiError::InvalidName { .. }), "{err}");
}

#[test]
fn a_csr_is_signed_without_its_key_leaving_the_host() {
    let ca = ca();
    let csr = make_csr(&host("laptop")).expect("csr");
    assert!(csr.csr_pem.contains("CERTIFICATE REQUEST"));
    let issued = ca
        .sign_csr(
            &csr.csr_pem,
            &host("laptop"),
            Validity::default_for(Role::Host, now()),
        )
        .expect("sign");
    assert!(issued.key_pem.is_none());
    let info = CertInfo::from_der(&issued.cert_der).expect("info");
    assert_eq!(info.name, "laptop");
    let key = rcgen::KeyPair::from_pem(&csr.key_pem).expect("key");
    assert_eq!(info.public_key, key.public_key_raw());
}

#[test]
fn a_csr_for_another_name_or_garbage_is_refused() {
    let ca = ca();
    let validity = Validity::default_for(Role::Host, now());
    let csr = make_csr(&host("alice")).expect("csr");
    let err = ca
        .sign_csr(&csr.csr_pem, &host("bob"), validity)
        .expect_err("mismatch");
    assert!(
        matches!(&err, PkiError::CsrNameMismatch { requested, issuing } if requested == "alice" && issuing == "bob"),
        "{err}"
    );
    let err = ca
        .sign_csr("not a csr", &host("bob"), validity)
        .expect_err("garbage");
    assert!(matches!(err, PkiError::BadCsr(_)), "{err}");
}

#[test]
fn validity_is_explicit() {
    assert!(matches!(
        Validity::starting(now(), Duration::ZERO),
        Err(PkiError::EmptyValidity)
    ));
    let v = Validity::starting(now(), Duration::from_secs(60)).expect("validity");
    assert_eq!(v.not_before, now() - BACKDATE);
    assert_eq!(v.not_after, now() + Duration::from_secs(60));
}

#[test]
fn fingerprints_and_serials_refuse_bad_text() {
    for bad in [
        "",
        "sha256:",
        "md5:00",
        "sha256:zz",
        &format!("sha256:{}", "0".repeat(62)),
    ] {
        assert!(bad.parse::<Fingerprint>().is_err(), "{bad:?}");
    }
    assert!("".parse::<Serial>().is_err());
    assert_eq!(Serial::from_be_bytes(&[0, 0, 1, 2]).to_string(), "0102");
}

#[test]
fn files_get_their_modes_and_keys_are_never_overwritten() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("certs");
    files::ensure_private_dir(&dir).expect("dir");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let ca = ca();
    let issued = ca
        .issue(&host("laptop"), Validity::default_for(Role::Host, now()))
        .expect("issue");
    let (key, cert) = (dir.join("host.key"), dir.join("host.pem"));
    let key_pem = issued.key_pem.as_deref().expect("key");
    files::write_private_key(&key, key_pem).expect("key");
    files::write_certificate(&cert, &issued.cert_pem).expect("cert");
    assert_eq!(mode(&key), 0o600);
    assert_eq!(mode(&cert), 0o644);
    let err = files::write_private_key(&key, key_pem).expect_err("overwrite");
    assert!(matches!(err, PkiError::KeyExists(_)), "{err}");
    assert_eq!(
        files::read_certificates(&cert).expect("read")[0],
        issued.cert_der
    );
    files::read_private_key(&key).expect("read key");
    let err = files::read_private_key(&cert).expect_err("not a key");
    assert!(matches!(err, PkiError::BadKey { .. }), "{err}");
    let (ca_cert, ca_key) = (dir.join("ca.pem"), dir.join("ca.key"));
    files::write_certificate(&ca_cert, ca.cert_pem()).expect("ca cert");
    files::write_private_key(&ca_key, &ca.key_pem()).expect("ca key");
    let loaded = CertificateAuthority::load(&ca_cert, &ca_key).expect("load");
    assert_eq!(loaded.fingerprint(), ca.fingerprint());
    let err = CertificateAuthority::load(&dir.join("missing"), &ca_key).expect_err("missing");
    assert!(matches!(err, PkiError::Io { .. }), "{err}");
}
