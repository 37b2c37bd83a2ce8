//! Throwaway certificates for tests: a fresh CA per test and the host and
//! hub identities it issues, valid from now. Compiled for this crate's
//! tests and, with the `test-support` feature, for other crates' tests.
//!
//! Owns nothing that production uses; panics on failure, as fixtures do.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustls::pki_types::CertificateDer;

use super::{AltName, CA_VALIDITY, CertificateAuthority, Issued, Role, Subject, Validity, files};
use crate::names::HostName;
use crate::tls::TlsIdentity;

/// A throwaway CA.
#[derive(Debug)]
pub struct TestCa {
    /// The CA itself, to issue more.
    pub ca: CertificateAuthority,
}

impl TestCa {
    /// A new CA named `name`, valid from now.
    pub fn new(name: &str) -> Self {
        let validity = Validity::starting(SystemTime::now(), CA_VALIDITY).expect("validity");
        Self {
            ca: CertificateAuthority::create(name, validity).expect("create a test CA"),
        }
    }

    /// The CA certificate, what both sides trust.
    pub fn root(&self) -> CertificateDer<'static> {
        self.ca.cert_der().clone()
    }

    /// Issues a key and certificate for a host.
    pub fn issue_host(&self, name: &str) -> Issued {
        let subject = Subject::host(&HostName::new(name).expect("test host name"));
        self.ca
            .issue(
                &subject,
                Validity::default_for(Role::Host, SystemTime::now()),
            )
            .expect("issue a test host certificate")
    }

    /// Issues a key and certificate for the hub, also valid for 127.0.0.1.
    pub fn issue_hub(&self, name: &str) -> Issued {
        let extra = vec![AltName::Ip([127, 0, 0, 1].into())];
        let subject = Subject::hub(name, extra).expect("test hub name");
        self.ca
            .issue(
                &subject,
                Validity::default_for(Role::Hub, SystemTime::now()),
            )
            .expect("issue a test hub certificate")
    }

    /// A host's TLS identity.
    pub fn host_identity(&self, name: &str) -> TlsIdentity {
        identity(&self.issue_host(name))
    }

    /// The hub's TLS identity.
    pub fn hub_identity(&self, name: &str) -> TlsIdentity {
        identity(&self.issue_hub(name))
    }

    /// Writes a host's key (0600) and certificate (0644) into `dir` as
    /// `NAME.key` and `NAME.pem`, and returns (certificate, key) paths.
    pub fn write_host(&self, dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        write(dir, name, &self.issue_host(name))
    }

    /// Writes the hub's key and certificate into `dir`, like
    /// [`Self::write_host`].
    pub fn write_hub(&self, dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        write(dir, name, &self.issue_hub(name))
    }
}

/// The TLS identity of an issued certificate and its key.
pub fn identity(issued: &Issued) -> TlsIdentity {
    let key = issued.key_pem.as_deref().expect("issued with a key");
    TlsIdentity::from_pem(&issued.cert_pem, key).expect("identity")
}

fn write(dir: &Path, name: &str, issued: &Issued) -> (PathBuf, PathBuf) {
    files::ensure_private_dir(dir).expect("certs dir");
    let (cert, key) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    files::write_certificate(&cert, &issued.cert_pem).expect("write cert");
    files::write_private_key(&key, issued.key_pem.as_deref().expect("key")).expect("write key");
    (cert, key)
}
