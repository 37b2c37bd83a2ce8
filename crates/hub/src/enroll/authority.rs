//! The hub's side of enrollment and renewal, once a request has arrived:
//! ask the pure decision, consume the invite, sign the CSR with the CA,
//! record what was issued.
//!
//! Owns the order that makes single use hold (decide, sign, then consume:
//! only the caller whose consume succeeds gets, and records, the
//! certificate) and the
//! rule that a renewal is signed for the name in the verified client
//! certificate, never a name in a message. Touches only the hub's certs
//! directory and enrollment store; no sockets.

use std::time::{Duration, SystemTime};

use flotilla_actors::federation::enroll::{
    EnrollRefusalCode, EnrollReply, EnrollRequest, IssuedCertificate, decide_enrollment, refused,
    unix_seconds,
};
use flotilla_actors::names::HostName;
use flotilla_actors::pki::{CertInfo, CertificateAuthority, PkiError, Subject, Validity};

use crate::enroll_store::{EnrollStore, IssuedRecord};
use crate::setup::CertPaths;

/// What the hub needs to enroll and renew hosts.
#[derive(Debug, Clone)]
pub struct EnrollAuthority {
    /// The hub's certs directory (the CA's files).
    pub certs: CertPaths,
    /// Invites and issued certificates.
    pub store: EnrollStore,
    /// The hub's name, told to enrolled hosts.
    pub hub_name: String,
    /// The hub's main addresses, told to enrolled hosts.
    pub hub_addrs: Vec<String>,
    /// How long issued host certificates last.
    pub host_validity: Duration,
}

fn internal(what: &str, e: &dyn std::fmt::Display) -> EnrollReply {
    tracing::error!("enrollment failed: {what}: {e}");
    refused(
        EnrollRefusalCode::Internal,
        format!("the hub failed ({what}); its operator should check the hub's log"),
    )
}

impl EnrollAuthority {
    /// Answers an enrollment request.
    pub fn enroll(&self, request: &EnrollRequest, now: SystemTime) -> EnrollReply {
        let state = match self.store.state(&request.token_id) {
            Ok(state) => state,
            Err(e) => return internal("reading the invite", &e),
        };
        if let Err(refusal) = decide_enrollment(&state, request, now) {
            tracing::warn!(host = %request.host, token = %request.token_id, "enrollment refused: {refusal}");
            return refusal.to_reply();
        }
        let (issued, record) = match self.sign(&request.host, &request.csr_pem, now) {
            Ok(signed) => signed,
            Err(reply) => return reply,
        };
        match self.store.consume(&request.token_id) {
            Ok(true) => {
                tracing::info!(host = %request.host, "host enrolled");
                self.record(&request.host, issued, record)
            }
            Ok(false) => refused(
                EnrollRefusalCode::TokenUsed,
                format!(
                    "this enrollment token was already used (tokens work once); ask the hub operator for a new one: \
                     flotilla hub invite {}",
                    request.host
                ),
            ),
            Err(e) => internal("consuming the invite", &e),
        }
    }

    /// Answers a renewal from the host named `certified` (the name in its
    /// verified client certificate).
    pub fn renew(&self, certified: &str, csr_pem: &str, now: SystemTime) -> EnrollReply {
        let Ok(host) = HostName::new(certified) else {
            return refused(
                EnrollRefusalCode::NotAuthenticated,
                format!("{certified:?} is not a host name; only hosts renew"),
            );
        };
        match self.sign(&host, csr_pem, now) {
            Ok((issued, record)) => {
                tracing::info!(%host, "host certificate renewed");
                self.record(&host, issued, record)
            }
            Err(reply) => reply,
        }
    }

    /// Records a delivered certificate, so that `hub revoke` knows it.
    fn record(
        &self,
        host: &HostName,
        issued: IssuedCertificate,
        record: IssuedRecord,
    ) -> EnrollReply {
        match self.store.record_issued(host.as_str(), record) {
            Ok(()) => EnrollReply::Issued(issued),
            Err(e) => internal("recording the certificate", &e),
        }
    }

    /// Signs `csr_pem` for exactly `host`; the refusal reply otherwise.
    fn sign(
        &self,
        host: &HostName,
        csr_pem: &str,
        now: SystemTime,
    ) -> Result<(IssuedCertificate, IssuedRecord), EnrollReply> {
        let ca = CertificateAuthority::load(&self.certs.ca_cert(), &self.certs.ca_key())
            .map_err(|e| internal("loading the CA", &e))?;
        let validity = Validity::starting(now, self.host_validity)
            .map_err(|e| internal("the validity", &e))?;
        let issued = ca
            .sign_csr(csr_pem, &Subject::host(host), validity)
            .map_err(|e| match e {
                PkiError::CsrNameMismatch { .. } => {
                    refused(EnrollRefusalCode::WrongHost, e.to_string())
                }
                PkiError::BadCsr(_) => refused(EnrollRefusalCode::BadRequest, e.to_string()),
                e => internal("signing", &e),
            })?;
        let info = CertInfo::from_der(&issued.cert_der)
            .map_err(|e| internal("reading the new certificate", &e))?;
        let record = IssuedRecord {
            serial: info.serial.to_string(),
            fingerprint: info.fingerprint.to_string(),
            issued_unix: unix_seconds(now),
            not_after_unix: unix_seconds(info.not_after),
        };
        let issued = IssuedCertificate {
            cert_pem: issued.cert_pem,
            ca_pem: ca.cert_pem().to_owned(),
            hub_addrs: self.hub_addrs.clone(),
            hub_name: self.hub_name.clone(),
            not_after_unix: unix_seconds(info.not_after),
        };
        Ok((issued, record))
    }
}
