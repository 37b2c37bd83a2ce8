//! The operator's group list on disk (`hub-groups.toml`, next to the hub's
//! `config.toml`, 0600, written atomically), how `hub groups allow|deny|open`
//! edit it, and how a running hub follows it.
//!
//! ```toml
//! [groups]
//! proj = ["laptop", "workstation-*"]
//! ```
//!
//! A missing file is the default: nothing listed, every enrolled host may
//! use any group. Owns the file's shape and the watcher: [`watch`] polls
//! the file's modification time and hands each valid new list to the core
//! (an invalid one is logged and the list in force kept). The rule itself
//! is [`crate::group_policy`].

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::core::{CoreMsg, CoreRef};
use crate::group_policy::{GroupPolicy, PolicyError};
use crate::private_file::{self, StoreError};
use crate::revocation_list::POLL;

/// The file's name, next to `config.toml`.
pub const FILE_NAME: &str = "hub-groups.toml";

/// What heads the file when `hub groups` writes it.
const HEADER: &str = "# Which hosts may have peers in each group, as the hub enforces it\n\
# (`flotilla hub groups`). A group not listed here is open to every enrolled\n\
# host. Patterns match the host name in its certificate: exact, or with * and ?.\n\
# A running hub reloads this file within a second of a change.\n\n";

/// Why the group list could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GroupsFileError {
    /// The file could not be read or written.
    #[error(transparent)]
    File(#[from] StoreError),
    /// The file is not TOML of the expected shape.
    #[error("{path} is not a valid group list: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's reason.
        reason: String,
    },
    /// An entry is not usable.
    #[error("{path}: {source}")]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: PolicyError,
    },
}

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupsToml {
    /// Group to host name patterns.
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
}

/// The group list file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupsFile {
    path: PathBuf,
}

impl GroupsFile {
    /// The list at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The list; empty (everything open) when the file does not exist.
    pub fn load(&self) -> Result<GroupPolicy, GroupsFileError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GroupPolicy::default()),
            Err(source) => {
                let path = self.path.clone();
                return Err(StoreError::Io { path, source }.into());
            }
        };
        self.parse(&text)
    }

    /// Reads the list from the file's text; errors name the file.
    pub fn parse(&self, text: &str) -> Result<GroupPolicy, GroupsFileError> {
        let parsed: GroupsToml = toml::from_str(text).map_err(|e| GroupsFileError::Parse {
            path: self.path.clone(),
            reason: e.message().to_owned(),
        })?;
        let entries = parsed
            .groups
            .iter()
            .map(|(g, p)| (g.as_str(), p.as_slice()));
        GroupPolicy::parse(entries).map_err(|source| GroupsFileError::Policy {
            path: self.path.clone(),
            source,
        })
    }

    /// Writes `policy` (replacing the file, comments included).
    pub fn save(&self, policy: &GroupPolicy) -> Result<(), GroupsFileError> {
        let text = self.render(policy)?;
        private_file::write_bytes(&self.path, text.as_bytes())?;
        Ok(())
    }

    /// The file's text for `policy`, as [`GroupsFile::save`] writes it.
    pub fn render(&self, policy: &GroupPolicy) -> Result<String, GroupsFileError> {
        let groups = policy
            .listed()
            .iter()
            .map(|(g, ps)| {
                let patterns = ps.iter().map(|p| p.as_str().to_owned()).collect();
                (g.as_str().to_owned(), patterns)
            })
            .collect();
        let body = toml::to_string(&GroupsToml { groups }).map_err(|e| GroupsFileError::Parse {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        Ok(format!("{HEADER}{body}"))
    }

    /// Loads, changes with `edit`, and saves if `edit` says it changed
    /// something; returns the list and whether it changed.
    pub fn edit(
        &self,
        edit: impl FnOnce(&mut GroupPolicy) -> bool,
    ) -> Result<(GroupPolicy, bool), GroupsFileError> {
        let mut policy = self.load()?;
        let changed = edit(&mut policy);
        if changed {
            self.save(&policy)?;
        }
        Ok((policy, changed))
    }

    fn stamp(&self) -> Option<(SystemTime, u64)> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }
}

/// Follows `file` until `shutdown` resolves: each valid change is put in
/// force at the core; an invalid one is logged and ignored.
pub async fn watch(file: GroupsFile, core: CoreRef, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let mut seen = file.stamp();
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(POLL) => {}
        }
        let now = file.stamp();
        if now == seen {
            continue;
        }
        seen = now;
        match file.load() {
            Ok(policy) => {
                tracing::info!(file = %file.path().display(), "group list reloaded");
                let _ = core.send_message(CoreMsg::SetPolicy(policy));
            }
            Err(e) => tracing::warn!("{e}; the group list in force is kept"),
        }
    }
}

#[cfg(test)]
#[path = "groups_file_fuzz.rs"]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group_policy::{HostPattern, listable};

    #[test]
    fn a_missing_file_lists_nothing_and_edits_are_saved_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = GroupsFile::new(dir.path().join(FILE_NAME));
        assert!(file.load().expect("missing").listed().is_empty());
        let proj = listable("proj").expect("group");
        let (policy, changed) = file
            .edit(|p| p.allow(proj.clone(), [HostPattern::new("work-*").expect("p")]))
            .expect("edit");
        assert!(changed);
        assert_eq!(file.load().expect("reload"), policy);
        let text = std::fs::read_to_string(file.path()).expect("read");
        assert!(text.contains("proj = [\"work-*\"]"), "{text}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file.path())
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_bad_file_names_itself_and_the_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = GroupsFile::new(dir.path().join(FILE_NAME));
        std::fs::write(file.path(), "[groups]\nproj = [\"a.b\"]\n").expect("write");
        let err = file.load().expect_err("bad pattern").to_string();
        assert!(err.contains(FILE_NAME) && err.contains("a.b"), "{err}");
        std::fs::write(file.path(), "[groups]\n\"session:w/x\" = [\"w\"]\n").expect("write");
        assert!(file.load().is_err());
        std::fs::write(file.path(), "proj = [\"w\"]\n").expect("write");
        let err = file.load().expect_err("unknown key").to_string();
        assert!(err.contains("not a valid group list"), "{err}");
    }
}
