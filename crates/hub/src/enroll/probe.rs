//! Whether hosts can reach a hub at the addresses a token carries, checked
//! the way `flotilla host join` reaches it (for `flotilla hub invite`).
//!
//! Owns the probe: for each address pair of the token, one QUIC connection
//! to the enrollment address, with the token's trust (only the CA whose
//! fingerprint the token names, a hub certificate carrying the hub's name,
//! ALPN `flotilla-enroll/1`, no client certificate), and an answer at the
//! application level: the probe sends a renewal request without a
//! certificate, which a hub always refuses (`not_authenticated`) without
//! touching its records. A reply of any kind means the hub's enrollment
//! service answered there; a connect that merely completed would not (the
//! client's side of QUIC finishes before the server has judged it). It
//! counts as one attempt against the hub's per-address enrollment limit.
//! The main port is not dialled: linking there needs a host certificate the
//! inviter does not have; `hub run` opens both ports together. Must not
//! print or write files.

use std::time::Duration;

use flotilla_actors::federation::enroll::{EnrollFrame, EnrollToken, RenewRequest};
use flotilla_actors::pki::Fingerprint;
use flotilla_actors::tls::{self, EnrollTrust, PinnedCaVerifier};
use tokio::task::JoinSet;

use super::client::{EnrollClientError, Exchange, resolve};
use crate::transport;

/// A reasonable time to wait for each address.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What probing one address pair of a token found.
#[derive(Debug)]
pub struct Reachability {
    /// The hub's main address (`HOST:PORT`, as in the token).
    pub hub_addr: String,
    /// The enrollment address dialled (`HOST:PORT`, as in the token).
    pub enroll_addr: String,
    /// Why it was not reachable; `None` when the hub answered.
    pub error: Option<EnrollClientError>,
}

/// Probes every address pair of `token` at once, each within `timeout`,
/// in the token's order.
pub async fn probe(token: &EnrollToken, timeout: Duration) -> Vec<Reachability> {
    let expected = match token.fingerprint() {
        Ok(expected) => expected,
        Err(e) => {
            let error = || Some(EnrollClientError::Protocol(e.to_string()));
            return pairs(token)
                .map(|(hub_addr, enroll_addr)| Reachability {
                    hub_addr,
                    enroll_addr,
                    error: error(),
                })
                .collect();
        }
    };
    let mut probes = JoinSet::new();
    for (index, (hub_addr, enroll_addr)) in pairs(token).enumerate() {
        let hub_name = token.hub_name.clone();
        probes.spawn(async move {
            let error = probe_one(&enroll_addr, &hub_name, expected, timeout)
                .await
                .err();
            let found = Reachability {
                hub_addr,
                enroll_addr,
                error,
            };
            (index, found)
        });
    }
    let mut found = Vec::new();
    while let Some(done) = probes.join_next().await {
        match done {
            Ok(one) => found.push(one),
            Err(e) => tracing::warn!("a reachability probe failed: {e}"),
        }
    }
    found.sort_by_key(|(index, _)| *index);
    found.into_iter().map(|(_, r)| r).collect()
}

fn pairs(token: &EnrollToken) -> impl Iterator<Item = (String, String)> + '_ {
    token
        .hub_addrs
        .iter()
        .cloned()
        .zip(token.enroll_addrs.iter().cloned())
}

/// One enrollment address: `Ok` when the hub answered there.
async fn probe_one(
    enroll_addr: &str,
    hub_name: &str,
    expected: Fingerprint,
    timeout: Duration,
) -> Result<(), EnrollClientError> {
    let unreachable = |reason: String| EnrollClientError::Unreachable {
        addrs: enroll_addr.to_owned(),
        reason,
    };
    let addr = match tokio::time::timeout(timeout, resolve(enroll_addr)).await {
        Ok(Some(addr)) => addr,
        Ok(None) => return Err(unreachable(format!("cannot resolve {enroll_addr}"))),
        Err(_) => {
            return Err(unreachable(format!(
                "cannot resolve {enroll_addr} in {timeout:?}"
            )));
        }
    };
    let pinned = PinnedCaVerifier::new(expected);
    let tls = tls::enroll_client_config(EnrollTrust::Pinned(pinned.clone()), None)?;
    let exchange = Exchange {
        addr,
        hub_name,
        config: transport::client_config(tls)?,
        timeout,
        pinned: Some(&pinned),
    };
    let request = EnrollFrame::RenewRequest(RenewRequest {
        csr_pem: String::new(),
    });
    match exchange.run(&request).await {
        Ok(_) | Err(EnrollClientError::Refused { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
