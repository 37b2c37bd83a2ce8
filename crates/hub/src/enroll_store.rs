//! The hub's enrollment records, in files under its home: pending invites,
//! used invites, and the certificates issued to each host.
//!
//! Layout under the directory it is given (mode 0700, files 0600, every
//! write atomic: a temporary file then a rename):
//!
//! ```text
//! <TOKEN_ID>.json        a pending invite: host, SHA-256 of the secret, expiry
//! used/<TOKEN_ID>.json   the same invite once used (renamed: only one join wins)
//! issued/<HOST>.json     every certificate issued to HOST: serial, fingerprint, expiry
//! ```
//!
//! Owns single use: [`EnrollStore::consume`] renames the pending file, and
//! only the caller whose rename succeeds may issue. Must not decide whether
//! a join is acceptable (`flotilla_actors::federation::enroll` does) nor
//! ever store a secret.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use flotilla_actors::federation::enroll::{
    Invite, InviteState, SECRET_LEN, secret_digest, unix_seconds,
};
use flotilla_actors::names::HostName;
use flotilla_actors::pki::files;
use ring::rand::SecureRandom;
use serde::{Deserialize, Serialize};

use crate::private_file::{self, StoreError};

/// How long an expired or used invite is remembered.
pub const FORGET_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

/// One certificate issued to a host, as `hub revoke` needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedRecord {
    /// The serial, lowercase hex.
    pub serial: String,
    /// `sha256:...` of the DER.
    pub fingerprint: String,
    /// When it was issued, Unix seconds.
    pub issued_unix: u64,
    /// Its last valid second, Unix seconds.
    pub not_after_unix: u64,
}

/// A new invite's id and secret: the secret exists only in the token.
pub struct NewInvite {
    /// Names the record.
    pub token_id: String,
    /// The secret's bytes.
    pub secret: Vec<u8>,
    /// Its last valid instant.
    pub expires: SystemTime,
}

impl std::fmt::Debug for NewInvite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewInvite")
            .field("token_id", &self.token_id)
            .finish_non_exhaustive()
    }
}

/// The enrollment directory of a hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnrollStore {
    /// `<hub state>/enroll`.
    dir: PathBuf,
}

impl EnrollStore {
    /// The records under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn pending(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn used(&self, id: &str) -> PathBuf {
        self.dir.join("used").join(format!("{id}.json"))
    }

    fn issued_file(&self, host: &str) -> PathBuf {
        self.dir.join("issued").join(format!("{host}.json"))
    }

    /// Makes and records an invite for `host` valid for `ttl` from `now`.
    pub fn create_invite(
        &self,
        host: &HostName,
        ttl: Duration,
        now: SystemTime,
    ) -> Result<NewInvite, StoreError> {
        let rng = ring::rand::SystemRandom::new();
        let mut id = [0u8; 16];
        let mut secret = vec![0u8; SECRET_LEN];
        rng.fill(&mut id)
            .and_then(|()| rng.fill(&mut secret))
            .map_err(|_| StoreError::Random)?;
        let token_id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let expires = now + ttl;
        let invite = Invite {
            host: host.clone(),
            secret_sha256: secret_digest(&secret),
            created_unix: unix_seconds(now),
            expires_unix: unix_seconds(expires),
        };
        self.prepare()?;
        self.prune(now);
        private_file::write_json(&self.pending(&token_id), &invite)?;
        Ok(NewInvite {
            token_id,
            secret,
            expires,
        })
    }

    /// Forgets invites that expired, or were used, more than [`FORGET_AFTER`]
    /// ago (until then a join with them is told why it is refused). Best
    /// effort: a file that cannot be read or removed stays.
    pub fn prune(&self, now: SystemTime) {
        let cutoff = now.checked_sub(FORGET_AFTER).map(unix_seconds).unwrap_or(0);
        for (dir, used) in [(self.dir.clone(), false), (self.dir.join("used"), true)] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for path in entries.flatten().map(|e| e.path()) {
                if path.extension().is_none_or(|x| x != "json") {
                    continue;
                }
                let stale = match private_file::read_json::<Invite>(&path) {
                    Ok(Some(invite)) if used => invite.created_unix < cutoff,
                    Ok(Some(invite)) => invite.expires_unix < cutoff,
                    _ => false,
                };
                if stale {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }

    fn prepare(&self) -> Result<(), StoreError> {
        for dir in [
            self.dir.clone(),
            self.dir.join("used"),
            self.dir.join("issued"),
        ] {
            files::ensure_private_dir(&dir)?;
        }
        Ok(())
    }

    /// What the hub knows of a token id. An id that is not plain hex (it
    /// could name another file) is unknown.
    pub fn state(&self, token_id: &str) -> Result<InviteState, StoreError> {
        if token_id.is_empty() || !token_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(InviteState::Unknown);
        }
        if let Some(invite) = private_file::read_json::<Invite>(&self.pending(token_id))? {
            return Ok(InviteState::Pending(invite));
        }
        if self.used(token_id).exists() {
            return Ok(InviteState::Used);
        }
        Ok(InviteState::Unknown)
    }

    /// Marks a pending invite used. `Ok(true)` for the one caller that
    /// consumed it; `Ok(false)` if it was already gone (another join won).
    pub fn consume(&self, token_id: &str) -> Result<bool, StoreError> {
        self.prepare()?;
        let from = self.pending(token_id);
        match std::fs::rename(&from, self.used(token_id)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(StoreError::Io { path: from, source }),
        }
    }

    /// Appends a certificate to `host`'s record.
    pub fn record_issued(&self, host: &str, record: IssuedRecord) -> Result<(), StoreError> {
        self.prepare()?;
        let mut all = self.issued(host)?;
        all.push(record);
        private_file::write_json(&self.issued_file(host), &all)
    }

    /// Every certificate issued to `host`, oldest first.
    pub fn issued(&self, host: &str) -> Result<Vec<IssuedRecord>, StoreError> {
        if HostName::new(host).is_err() {
            return Ok(Vec::new());
        }
        Ok(private_file::read_json(&self.issued_file(host))?.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invite_is_pending_then_used_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EnrollStore::new(dir.path().join("enroll"));
        let host = HostName::new("laptop").expect("host");
        let now = SystemTime::now();
        let made = store
            .create_invite(&host, Duration::from_secs(60), now)
            .expect("invite");
        let InviteState::Pending(invite) = store.state(&made.token_id).expect("state") else {
            panic!("pending")
        };
        assert_eq!(invite.secret_sha256, secret_digest(&made.secret));
        let text = std::fs::read_to_string(store.pending(&made.token_id)).expect("file");
        assert!(!text.contains(&format!("{:?}", made.secret)));
        assert!(store.consume(&made.token_id).expect("consume"));
        assert!(!store.consume(&made.token_id).expect("second"));
        assert_eq!(
            store.state(&made.token_id).expect("state"),
            InviteState::Used
        );
        assert_eq!(store.state("../x").expect("state"), InviteState::Unknown);
    }

    #[test]
    fn old_invites_are_forgotten_recent_ones_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let store = EnrollStore::new(dir.path().join("enroll"));
        let host = HostName::new("laptop").expect("host");
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let old = store
            .create_invite(&host, Duration::from_secs(60), long_ago)
            .expect("old");
        let used = store
            .create_invite(&host, Duration::from_secs(60), long_ago)
            .expect("used");
        assert!(store.consume(&used.token_id).expect("consume"));
        let now = long_ago + FORGET_AFTER + Duration::from_secs(3600);
        let fresh = store
            .create_invite(&host, Duration::from_secs(60), now)
            .expect("fresh");
        assert!(matches!(
            store.state(&old.token_id),
            Ok(InviteState::Unknown)
        ));
        assert!(matches!(
            store.state(&used.token_id),
            Ok(InviteState::Unknown)
        ));
        assert!(matches!(
            store.state(&fresh.token_id),
            Ok(InviteState::Pending(_))
        ));
    }

    #[test]
    fn files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EnrollStore::new(dir.path().join("enroll"));
        let host = HostName::new("laptop").expect("host");
        let made = store
            .create_invite(&host, Duration::from_secs(60), SystemTime::now())
            .expect("invite");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(store.dir()), 0o700);
        assert_eq!(mode(&store.pending(&made.token_id)), 0o600);
        let record = IssuedRecord {
            serial: "01".into(),
            fingerprint: "sha256:00".into(),
            issued_unix: 1,
            not_after_unix: 2,
        };
        store
            .record_issued("laptop", record.clone())
            .expect("record");
        store
            .record_issued("laptop", record.clone())
            .expect("record");
        assert_eq!(store.issued("laptop").expect("issued").len(), 2);
        assert_eq!(mode(&store.issued_file("laptop")), 0o600);
    }
}
