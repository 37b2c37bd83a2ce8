//! The host store's file, and the record that this home has had one.
//!
//! When the daemon opens the store it writes `state/store-created` (0600,
//! when the store was first seen) unless it exists. From then on a start
//! that finds the store missing (or empty) while that record exists is
//! refused: a store that vanished (deleted, left out of a restore, a disk
//! swapped) is not silently replaced by an empty one, which would drop
//! every peer, message and lane without a word. `--new-store` allows the
//! fresh start. A home whose store predates the record gets it at its next
//! start. Pure file checks: nothing here opens the store.

use std::path::PathBuf;

use flotilla_actors::model::Timestamp;
use flotilla_actors::private_file;

use crate::home::Home;

/// The record's file name, in the state directory.
pub const MARKER: &str = "store-created";

/// Why the store's file may not be used as it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreFileError {
    /// The store is gone but the home shows it had one.
    #[error(
        "the store {} is missing or empty, but this home had one ({since}, recorded in {}); \
         refusing to start with an empty store, which would lose every peer, message and lane",
        store.display(),
        marker.display()
    )]
    Lost {
        /// The store's path.
        store: PathBuf,
        /// The record that shows earlier use.
        marker: PathBuf,
        /// What the record says.
        since: String,
    },
    /// The record could not be written.
    #[error("cannot record the store in {}: {source}", path.display())]
    Io {
        /// The record's path.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

impl StoreFileError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Lost { store, .. } => Some(format!(
                "put {} back (from a backup), or start anew with an empty store by passing \
                 --new-store (`flotilla up --new-store`)",
                store.display()
            )),
            Self::Io { .. } => None,
        }
    }
}

/// The record of `home`.
pub fn marker(home: &Home) -> PathBuf {
    home.state_dir.join(MARKER)
}

/// Refuses to go on when the store is missing or empty while the home shows
/// it had one, unless `new_store`.
pub fn check(home: &Home, new_store: bool) -> Result<(), StoreFileError> {
    let store = home.store_file();
    let marker = marker(home);
    if new_store || private_file::has_content(&store) {
        return Ok(());
    }
    match std::fs::read_to_string(&marker) {
        Ok(text) => Err(StoreFileError::Lost {
            store,
            since: first_line(&text),
            marker,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(StoreFileError::Io {
            path: marker,
            source,
        }),
    }
}

/// Writes the record once the store is open, unless it exists.
pub fn record(home: &Home) -> Result<(), StoreFileError> {
    let path = marker(home);
    if path.exists() {
        return Ok(());
    }
    let text = format!("first opened {}\n", Timestamp::now());
    private_file::write(&path, text.as_bytes())
        .map_err(|source| StoreFileError::Io { path, source })
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.is_empty() {
        "its record is empty".into()
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::at(tmp.path());
        home.prepare().expect("prepare");
        (tmp, home)
    }

    #[test]
    fn a_fresh_home_may_create_its_store_and_then_records_it() {
        let (_tmp, home) = home();
        check(&home, false).expect("nothing recorded yet");
        std::fs::write(home.store_file(), b"db").expect("store");
        record(&home).expect("record");
        let text = std::fs::read_to_string(marker(&home)).expect("marker");
        assert!(text.starts_with("first opened 20"), "{text}");
        check(&home, false).expect("store present");
    }

    #[test]
    fn issue_13_a_lost_store_is_refused_unless_new_store() {
        let (_tmp, home) = home();
        std::fs::write(home.store_file(), b"db").expect("store");
        record(&home).expect("record");
        std::fs::remove_file(home.store_file()).expect("rm");
        let err = check(&home, false).expect_err("lost");
        let text = err.to_string();
        assert!(text.contains("host.redb is missing"), "{text}");
        assert!(text.contains("store-created"), "{text}");
        assert!(err.hint().is_some_and(|h| h.contains("--new-store")));
        std::fs::write(home.store_file(), b"").expect("empty store");
        check(&home, false).expect_err("an empty file is as good as lost");
        check(&home, true).expect("--new-store");
    }
}
