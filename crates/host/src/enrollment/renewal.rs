//! Renewal: once a hub link is up, a host whose certificate has less than a
//! third of its validity left asks the hub's enrollment port for a new one,
//! presenting its current certificate, and installs it; the next link uses
//! it.
//!
//! Owns the check-renew-install step and the task the link starts for it.
//! When to renew is `flotilla_actors::federation::enroll::renewal_due`; the
//! hub signs only for the name in the presented certificate. Must not touch
//! the link itself: a failed renewal is logged and retried after the next
//! link.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use flotilla_actors::federation::enroll::renewal_due;
use flotilla_actors::names::HostName;
use flotilla_actors::pki::{CertInfo, Subject, files, make_csr};
use flotilla_actors::tls::TlsIdentity;
use flotilla_hub::enroll::client;
use flotilla_hub::setup::CertPaths;

use super::EnrollmentError;
use super::join::replace_key;
use crate::context::HostContext;

/// Time allowed for a renewal exchange.
const RENEW_TIMEOUT: Duration = Duration::from_secs(10);

/// Where to renew and the hub's name.
#[derive(Debug, Clone)]
pub struct RenewTarget {
    /// The enrollment address, `HOST:PORT`.
    pub addr: String,
    /// The name in the hub's certificate.
    pub hub_name: String,
}

/// Renews the certificate in `certs` if it is due at `now`; returns the
/// new certificate, or `None` when it was not due.
pub async fn renew_if_due(
    certs: &CertPaths,
    target: &RenewTarget,
    now: SystemTime,
) -> Result<Option<CertInfo>, EnrollmentError> {
    let chain = files::read_certificates(&certs.host_cert())?;
    let current = CertInfo::from_der(&chain[0])?;
    if !renewal_due(current.not_before, current.not_after, now) {
        return Ok(None);
    }
    let host = HostName::new(&current.name).map_err(|e| {
        EnrollmentError::ConfigValue(format!("this host's certificate names no host: {e}"))
    })?;
    let csr = make_csr(&Subject::host(&host))?;
    let identity = TlsIdentity::load(&certs.host_cert(), &certs.host_key())
        .map_err(|e| EnrollmentError::ConfigValue(e.to_string()))?;
    let ca = files::read_certificates(&certs.ca_cert())?.remove(0);
    let addr = tokio::net::lookup_host(&target.addr)
        .await
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| EnrollmentError::ConfigValue(format!("cannot resolve {}", target.addr)))?;
    let issued = client::renew(
        addr,
        &target.hub_name,
        ca,
        identity,
        &csr.csr_pem,
        RENEW_TIMEOUT,
    )
    .await?;
    let renewed = CertInfo::from_pem(&issued.cert_pem)?;
    if renewed.name != current.name {
        return Err(EnrollmentError::ConfigValue(format!(
            "the hub renewed for {:?}, not {:?}; kept the current certificate",
            renewed.name, current.name
        )));
    }
    let fresh = certs.host_cert().with_extension("pem.new");
    files::write_certificate(&fresh, &issued.cert_pem)?;
    replace_key(&certs.host_key(), &csr.key_pem)?;
    std::fs::rename(&fresh, certs.host_cert()).map_err(|source| {
        flotilla_actors::pki::PkiError::Io {
            action: "could not install",
            path: certs.host_cert(),
            source,
        }
    })?;
    Ok(Some(renewed))
}

/// Called by the hub link once a link is up: renews in the background if
/// due. Never blocks nor fails the link.
pub fn after_link(ctx: &Arc<HostContext>) {
    let Ok(Some(link)) = ctx.config.hub_target() else {
        return;
    };
    let Some(addr) = ctx.config.hub_enroll_addr() else {
        return;
    };
    let target = RenewTarget {
        addr,
        hub_name: link.name,
    };
    let certs = CertPaths::new(&ctx.home.certs_dir);
    tokio::spawn(async move {
        match renew_if_due(&certs, &target, SystemTime::now()).await {
            Ok(Some(new)) => tracing::info!(
                until = %humantime::format_rfc3339_seconds(new.not_after),
                "host certificate renewed; the next link uses it"
            ),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!("certificate renewal failed (retried after the next link): {e}")
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use flotilla_actors::pki::{CertificateAuthority, Validity};

    use super::*;

    #[tokio::test]
    async fn a_fresh_certificate_is_not_renewed_and_nothing_is_dialed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let certs = CertPaths::new(dir.path());
        let now = SystemTime::now();
        let validity = Validity::starting(now, Duration::from_secs(90 * 86_400)).expect("validity");
        let ca = CertificateAuthority::create("test", validity).expect("ca");
        let host = HostName::new("laptop").expect("host");
        let issued = ca.issue(&Subject::host(&host), validity).expect("issue");
        files::write_certificate(&certs.host_cert(), &issued.cert_pem).expect("cert");
        let target = RenewTarget {
            addr: "unresolvable.invalid:1".into(),
            hub_name: "hub.test".into(),
        };
        let renewed = renew_if_due(&certs, &target, now).await.expect("not due");
        assert!(renewed.is_none());
        let later = now + Duration::from_secs(61 * 86_400);
        let due = renew_if_due(&certs, &target, later).await;
        assert!(due.is_err(), "due, so it tries (and fails) to renew");
    }
}
