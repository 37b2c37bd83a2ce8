//! The hub's live host links, by host name, so that revoking a host can
//! close its link at once.
//!
//! Owns the registry: a session registers its connection once its host is
//! accepted and removes it when the link ends. Must not read or write
//! frames, nor decide what is revoked (the shared `Revocations` does).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use flotilla_actors::tls::Revocations;
use rustls::pki_types::CertificateDer;

use crate::transport::close;

/// The live links, keyed by host name (a host may briefly have two while a
/// reconnect overlaps the old link's end).
#[derive(Debug, Default)]
pub struct LiveLinks {
    /// Connections by host.
    links: Mutex<HashMap<String, Vec<quinn::Connection>>>,
}

impl LiveLinks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<quinn::Connection>>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `host`'s accepted connection.
    pub fn register(&self, host: &str, connection: &quinn::Connection) {
        self.lock()
            .entry(host.to_owned())
            .or_default()
            .push(connection.clone());
    }

    /// Forgets a connection whose link ended.
    pub fn unregister(&self, host: &str, connection: &quinn::Connection) {
        let mut links = self.lock();
        if let Some(list) = links.get_mut(host) {
            list.retain(|c| c.stable_id() != connection.stable_id());
            if list.is_empty() {
                links.remove(host);
            }
        }
    }

    /// The hosts with a live link.
    pub fn hosts(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Closes every live link whose certificate is revoked; returns their
    /// hosts.
    pub fn close_revoked(&self, revocations: &Revocations) -> Vec<String> {
        let mut closed = Vec::new();
        for (host, connections) in self.lock().iter() {
            for connection in connections {
                if leaf(connection).is_none_or(|der| revocations.is_revoked(&der)) {
                    connection.close(close::REFUSED.into(), b"certificate revoked");
                    closed.push(host.clone());
                }
            }
        }
        closed
    }
}

/// The DER of a connection's verified client certificate.
fn leaf(connection: &quinn::Connection) -> Option<Vec<u8>> {
    let chain = connection
        .peer_identity()?
        .downcast::<Vec<CertificateDer<'static>>>()
        .ok()?;
    chain.first().map(|c| c.to_vec())
}
