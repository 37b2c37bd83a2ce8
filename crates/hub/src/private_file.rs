//! Small JSON files only the hub's user may read, written atomically: the
//! enrollment records, the revocation list and the group list.
//!
//! Owns the write (a 0600 temporary file in the same directory, synced,
//! then renamed over the target) and the error type of the hub's files.
//! Knows nothing of what the files mean.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use flotilla_actors::pki::{PkiError, files::KEY_MODE};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a hub record could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file system failed.
    #[error("cannot use {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
    /// A record is not valid JSON of its kind.
    #[error("{path} is damaged ({reason}); move it away and retry")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// The parser's reason.
        reason: String,
    },
    /// A directory could not be made private.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// The system's random source failed.
    #[error("the system random source failed; retry")]
    Random,
}

/// Reads a JSON file; `Ok(None)` when it does not exist.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| StoreError::Damaged {
            path: path.to_owned(),
            reason: e.to_string(),
        })
}

/// Writes `value` as JSON to `path` atomically, mode 0600.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Damaged {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    write_bytes(path, &bytes)
}

/// Writes `bytes` to `path` atomically, mode 0600.
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_owned(),
        source,
    };
    let name = path
        .file_name()
        .map_or_else(|| "record".into(), |n| n.to_string_lossy().into_owned());
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{name}.{}.{unique}.tmp", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(KEY_MODE)
        .open(&tmp)
        .map_err(io)?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}
