//! The hub's persisted revocation list (`revoked.json`, 0600, written
//! atomically), how `hub revoke` adds to it, and how a running hub follows
//! it.
//!
//! Owns the file's shape and the watcher: [`watch`] polls the file's
//! modification time, and on a change loads it into the shared
//! [`Revocations`] (so TLS refuses those certificates from then on) and
//! closes the live links whose certificate is now revoked. Must not decide
//! trust (`flotilla_actors::tls` does) nor know where a home keeps it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use flotilla_actors::pki::{Fingerprint, Serial};
use flotilla_actors::tls::Revocations;
use serde::{Deserialize, Serialize};

use crate::live::LiveLinks;
use crate::private_file::{self, StoreError};

/// How often a running hub looks at the file.
pub const POLL: Duration = Duration::from_millis(500);

/// One revoked certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevokedEntry {
    /// The host it was issued to.
    pub host: String,
    /// Its serial, lowercase hex.
    pub serial: String,
    /// `sha256:...` of its DER.
    pub fingerprint: String,
    /// When it was revoked, Unix seconds.
    pub revoked_unix: u64,
}

/// The revocation list file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevocationList {
    /// `<hub state>/revoked.json`.
    path: PathBuf,
}

impl RevocationList {
    /// The list at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry; empty when the file does not exist.
    pub fn load(&self) -> Result<Vec<RevokedEntry>, StoreError> {
        Ok(private_file::read_json(&self.path)?.unwrap_or_default())
    }

    /// Adds entries not already there; returns those added.
    pub fn add(&self, entries: Vec<RevokedEntry>) -> Result<Vec<RevokedEntry>, StoreError> {
        let mut all = self.load()?;
        let added: Vec<RevokedEntry> = entries
            .into_iter()
            .filter(|e| !all.iter().any(|a| a.fingerprint == e.fingerprint))
            .collect();
        all.extend(added.iter().cloned());
        private_file::write_json(&self.path, &all)?;
        Ok(added)
    }

    /// Loads the file into `revocations`, replacing what it held.
    pub fn apply(&self, revocations: &Revocations) -> Result<usize, StoreError> {
        let entries = self.load()?;
        let serials = entries
            .iter()
            .filter_map(|e| e.serial.parse::<Serial>().ok());
        let fingerprints = entries
            .iter()
            .filter_map(|e| e.fingerprint.parse::<Fingerprint>().ok());
        revocations.replace(serials, fingerprints);
        Ok(entries.len())
    }

    fn stamp(&self) -> Option<(SystemTime, u64)> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }
}

/// Follows `list` until `shutdown` resolves: on every change, reloads it
/// into `revocations` and closes the live links it revokes.
pub async fn watch(
    list: RevocationList,
    revocations: Arc<Revocations>,
    live: Arc<LiveLinks>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut seen = list.stamp();
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(POLL) => {}
        }
        let now = list.stamp();
        if now == seen {
            continue;
        }
        seen = now;
        match list.apply(&revocations) {
            Ok(count) => tracing::info!(revoked = count, "revocation list reloaded"),
            Err(e) => {
                tracing::warn!("cannot reload the revocation list: {e}");
                continue;
            }
        }
        for host in live.close_revoked(&revocations) {
            tracing::warn!(%host, "closed the link of a revoked certificate");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(fingerprint: &str) -> RevokedEntry {
        RevokedEntry {
            host: "laptop".into(),
            serial: "0a".into(),
            fingerprint: fingerprint.into(),
            revoked_unix: 1,
        }
    }

    #[test]
    fn entries_are_added_once_and_applied() {
        let dir = tempfile::tempdir().expect("tempdir");
        let list = RevocationList::new(dir.path().join("revoked.json"));
        assert!(list.load().expect("empty").is_empty());
        let fp = format!("sha256:{}", "cd".repeat(32));
        assert_eq!(list.add(vec![entry(&fp)]).expect("add").len(), 1);
        assert!(list.add(vec![entry(&fp)]).expect("again").is_empty());
        let revocations = Revocations::new();
        assert_eq!(list.apply(&revocations).expect("apply"), 1);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(list.path())
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
