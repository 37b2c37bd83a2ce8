//! The host's side of the enrollment channel: join with a token (trusting
//! only the CA the token names) or renew with the current certificate.
//!
//! Owns the client connection, its timeout, and the translation of
//! failures into [`EnrollClientError`]s a person can act on. The secret is
//! sent only after TLS has verified the hub against the pinned CA: a wrong
//! fingerprint fails the handshake, before any stream is opened. Must not
//! write files: the caller stores what it gets.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use flotilla_actors::federation::enroll::{
    EnrollFrame, EnrollRefusalCode, EnrollReply, EnrollRequest, EnrollToken, IssuedCertificate,
    MAX_ENROLL_FRAME, RenewRequest,
};
use flotilla_actors::federation::{read_message, write_message};
use flotilla_actors::pki::Fingerprint;
use flotilla_actors::tls::{self, EnrollTrust, PinnedCaVerifier, TlsError, TlsIdentity};
use rustls::pki_types::CertificateDer;

use crate::transport::{self, QuicConfigError, close};

/// Why enrollment or renewal failed. Each message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnrollClientError {
    /// No enrollment address answered.
    #[error(
        "the hub's enrollment port is unreachable at {addrs} ({reason}); check that `flotilla hub run` is running \
         and that its UDP port is reachable from here"
    )]
    Unreachable {
        /// The addresses tried.
        addrs: String,
        /// The last failure.
        reason: String,
    },
    /// The hub presented another CA than the token names: nothing was sent.
    #[error(
        "the hub presented CA {seen} but the token trusts only {expected}; nothing was sent. \
         This is not your hub (or the token is damaged): check the address, and ask the hub operator for a new token"
    )]
    CaMismatch {
        /// The token's fingerprint.
        expected: Fingerprint,
        /// What the hub presented (`none` if no CA certificate).
        seen: String,
    },
    /// The hub's certificate does not chain to the CA or lacks the hub's name.
    #[error(
        "the hub's certificate was refused ({reason}); it is not signed by the expected CA or does not name the hub"
    )]
    HubCertificate {
        /// What TLS reported.
        reason: String,
    },
    /// The hub refused this host's certificate (renewal of a revoked one).
    #[error("the hub refused this host's certificate ({reason}); enroll again with a new token")]
    CertificateRefused {
        /// What QUIC reported.
        reason: String,
    },
    /// The hub answered with a refusal.
    #[error("{reason}")]
    Refused {
        /// Its code.
        code: EnrollRefusalCode,
        /// The hub's explanation.
        reason: String,
    },
    /// The exchange failed or the answer made no sense.
    #[error("the enrollment exchange failed: {0}")]
    Protocol(String),
    /// A TLS config could not be built.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// QUIC cannot use the TLS config.
    #[error(transparent)]
    Quic(#[from] QuicConfigError),
}

/// A successful join: the certificate and the main address to use.
#[derive(Debug, Clone)]
pub struct Joined {
    /// What the hub issued.
    pub issued: IssuedCertificate,
    /// The hub's main address (`HOST:PORT`) paired with the enrollment
    /// address that answered.
    pub hub_addr: String,
    /// The enrollment address that answered (`HOST:PORT`, as in the token).
    pub enroll_addr: String,
}

/// Enrolls with `token`, sending `csr_pem`; tries each enrollment address
/// in turn until one answers.
pub async fn join(
    token: &EnrollToken,
    csr_pem: &str,
    timeout: Duration,
) -> Result<Joined, EnrollClientError> {
    let expected = token
        .fingerprint()
        .map_err(|e| EnrollClientError::Protocol(e.to_string()))?;
    let secret = token
        .secret_bytes()
        .ok_or_else(|| EnrollClientError::Protocol("the token's secret is damaged".into()))?;
    let request = EnrollFrame::EnrollRequest(EnrollRequest {
        token_id: token.token_id.clone(),
        secret,
        host: token.host.clone(),
        csr_pem: csr_pem.to_owned(),
    });
    let mut last = String::from("no address in the token");
    for (enroll_addr, hub_addr) in token.enroll_addrs.iter().zip(&token.hub_addrs) {
        let Some(addr) = resolve(enroll_addr).await else {
            last = format!("cannot resolve {enroll_addr}");
            continue;
        };
        let pinned = PinnedCaVerifier::new(expected);
        let tls = tls::enroll_client_config(EnrollTrust::Pinned(pinned.clone()), None)?;
        let config = transport::client_config(tls)?;
        let exchange = Exchange {
            addr,
            hub_name: &token.hub_name,
            config,
            timeout,
            pinned: Some(&pinned),
        };
        match exchange.run(&request).await {
            Ok(issued) => {
                return Ok(Joined {
                    issued,
                    hub_addr: hub_addr.clone(),
                    enroll_addr: enroll_addr.clone(),
                });
            }
            Err(EnrollClientError::Unreachable { reason, .. }) => last = reason,
            Err(other) => return Err(other),
        }
    }
    Err(EnrollClientError::Unreachable {
        addrs: token.enroll_addrs.join(", "),
        reason: last,
    })
}

/// Renews this host's certificate at `addr`, presenting `identity` and
/// trusting `ca`; the hub signs for the name in `identity`.
pub async fn renew(
    addr: SocketAddr,
    hub_name: &str,
    ca: CertificateDer<'static>,
    identity: TlsIdentity,
    csr_pem: &str,
    timeout: Duration,
) -> Result<IssuedCertificate, EnrollClientError> {
    let tls = tls::enroll_client_config(EnrollTrust::Ca(ca), Some(identity))?;
    let exchange = Exchange {
        addr,
        hub_name,
        config: transport::client_config(tls)?,
        timeout,
        pinned: None,
    };
    let request = EnrollFrame::RenewRequest(RenewRequest {
        csr_pem: csr_pem.to_owned(),
    });
    exchange.run(&request).await
}

pub(super) async fn resolve(addr: &str) -> Option<SocketAddr> {
    tokio::net::lookup_host(addr).await.ok()?.next()
}

/// One request on one connection.
pub(super) struct Exchange<'a> {
    /// The enrollment address.
    pub(super) addr: SocketAddr,
    /// The name the hub's certificate must carry.
    pub(super) hub_name: &'a str,
    /// TLS and transport.
    pub(super) config: quinn::ClientConfig,
    /// For the whole exchange.
    pub(super) timeout: Duration,
    /// The pinned verifier, to tell a CA mismatch from other TLS failures.
    pub(super) pinned: Option<&'a PinnedCaVerifier>,
}

impl Exchange<'_> {
    pub(super) async fn run(
        &self,
        request: &EnrollFrame,
    ) -> Result<IssuedCertificate, EnrollClientError> {
        let local: SocketAddr = if self.addr.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let endpoint = quinn::Endpoint::client(local).map_err(|e| self.unreachable(e))?;
        let result = tokio::time::timeout(self.timeout, self.talk(&endpoint, request)).await;
        let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
        match result {
            Ok(Ok(reply)) => Self::issued(reply),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(self.unreachable(format!("no answer within {:?}", self.timeout))),
        }
    }

    async fn talk(
        &self,
        endpoint: &quinn::Endpoint,
        request: &EnrollFrame,
    ) -> Result<EnrollReply, EnrollClientError> {
        let connecting = endpoint
            .connect_with(self.config.clone(), self.addr, self.hub_name)
            .map_err(|e| self.unreachable(e))?;
        let connection = connecting.await.map_err(|e| self.classify(&e))?;
        let result = self.request(&connection, request).await;
        connection.close(close::NORMAL.into(), b"thanks");
        result
    }

    async fn request(
        &self,
        connection: &quinn::Connection,
        request: &EnrollFrame,
    ) -> Result<EnrollReply, EnrollClientError> {
        let failed = |e: &dyn std::fmt::Display| match connection.close_reason() {
            Some(reason) => self.classify(&reason),
            None => EnrollClientError::Protocol(e.to_string()),
        };
        let (mut send, mut recv) = connection.open_bi().await.map_err(|e| failed(&e))?;
        write_message(&mut send, request, MAX_ENROLL_FRAME)
            .await
            .map_err(|e| failed(&e))?;
        let _ = send.finish();
        match read_message::<EnrollFrame, _>(&mut recv, MAX_ENROLL_FRAME).await {
            Ok(Some(EnrollFrame::EnrollReply(reply))) => Ok(reply),
            Ok(Some(_)) => Err(EnrollClientError::Protocol("an unexpected frame".into())),
            Ok(None) => Err(failed(&"the hub closed without answering")),
            Err(e) => Err(failed(&e)),
        }
    }

    fn issued(reply: EnrollReply) -> Result<IssuedCertificate, EnrollClientError> {
        match reply {
            EnrollReply::Issued(issued) => Ok(issued),
            EnrollReply::Refused(r) => Err(EnrollClientError::Refused {
                code: r.code,
                reason: r.reason,
            }),
        }
    }

    fn unreachable(&self, e: impl std::fmt::Display) -> EnrollClientError {
        EnrollClientError::Unreachable {
            addrs: self.addr.to_string(),
            reason: e.to_string(),
        }
    }

    fn classify(&self, error: &quinn::ConnectionError) -> EnrollClientError {
        use quinn::ConnectionError as E;
        let tls_alert = |code: quinn::TransportErrorCode| (0x100..0x200).contains(&u64::from(code));
        match error {
            E::TransportError(e) if tls_alert(e.code) => match self.pinned {
                Some(pinned) if pinned.mismatched() => EnrollClientError::CaMismatch {
                    expected: pinned.expected(),
                    seen: pinned
                        .seen()
                        .map_or_else(|| "none".to_owned(), |f| f.to_string()),
                },
                _ => EnrollClientError::HubCertificate {
                    reason: e.reason.clone(),
                },
            },
            E::ConnectionClosed(c) if tls_alert(c.error_code) => {
                EnrollClientError::CertificateRefused {
                    reason: c.to_string(),
                }
            }
            E::TimedOut | E::Reset | E::LocallyClosed => self.unreachable(error),
            other => EnrollClientError::Protocol(other.to_string()),
        }
    }
}
