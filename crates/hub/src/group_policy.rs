//! Who may be in a group across hosts, without IO: the hub operator's
//! allow-list (`flotilla hub groups`, kept in `hub-groups.toml`).
//!
//! Group names are self-declared: any enrolled host can put a peer in
//! `proj`. For a group the operator lists, only hosts whose CA-issued name
//! matches one of its patterns (an exact name, or a glob with `*` and `?`)
//! may have peers in it as far as the hub is concerned; the hub drops any
//! other host's membership in it and refuses messages scoped to it from or
//! to such a host. A group not listed stays open to every enrolled host
//! (the default: nothing listed). Private `session:` groups are never
//! listed here; their own rule is [`crate::grants`].
//!
//! Owns the patterns, the list and the decisions; the file lives in
//! `crate::groups_file`, the enforcement in the roster. Must not touch
//! sockets, files or the clock.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use flotilla_actors::model::PeerRecord;
use flotilla_actors::names::{GroupName, HostName, MAX_HOST_NAME};

/// Why an entry of the list is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// Not a group name a peer can join.
    #[error("{0:?} is not a group name (letters, digits and . _ : / -, at most 192)")]
    BadGroup(String),
    /// A private group: those have their own rule.
    #[error(
        "{0:?} is a private group; private groups follow their own rule (only their host and the hub's grants) and cannot be listed"
    )]
    PrivateGroup(String),
    /// Not a host name pattern.
    #[error(
        "{0:?} is not a host name pattern (letters, digits, - and _, with * for any run and ? for one character, at most 48)"
    )]
    BadPattern(String),
}

/// A host name, or a glob on host names (`*` any run, `?` one character).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostPattern(String);

impl HostPattern {
    /// Checks a pattern.
    pub fn new(s: &str) -> Result<Self, PolicyError> {
        let ok = !s.is_empty()
            && s.len() <= MAX_HOST_NAME
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_*?".contains(c));
        match ok {
            true => Ok(Self(s.to_owned())),
            false => Err(PolicyError::BadPattern(s.to_owned())),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `host` matches (case-sensitive, the whole name).
    pub fn matches(&self, host: &HostName) -> bool {
        glob(self.0.as_bytes(), host.as_str().as_bytes())
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Glob match with `*` and `?`, backtracking to the last `*` only.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    p = sp + 1;
                    t = st + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// A membership the list refused: `host` may not have peers in `group`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the hub's group allow-list (`flotilla hub groups`) lets only hosts matching {allowed} have peers in {group}; {host} is not one of them"
)]
pub struct NotAllowed {
    /// The host refused.
    pub host: HostName,
    /// The listed group.
    pub group: GroupName,
    /// The group's patterns, as the operator wrote them (`none` if empty).
    pub allowed: String,
}

/// The operator's allow-list: listed groups and the hosts that may be in
/// each. Empty (the default) lets every enrolled host use any group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupPolicy {
    groups: BTreeMap<GroupName, BTreeSet<HostPattern>>,
}

impl GroupPolicy {
    /// A list from text entries (as the file holds them), each checked.
    pub fn parse<'a>(
        entries: impl IntoIterator<Item = (&'a str, &'a [String])>,
    ) -> Result<Self, PolicyError> {
        let mut policy = Self::default();
        for (group, patterns) in entries {
            let group = listable(group)?;
            let patterns = patterns
                .iter()
                .map(|p| HostPattern::new(p))
                .collect::<Result<Vec<_>, _>>()?;
            policy.allow(group, patterns);
        }
        Ok(policy)
    }

    /// The listed groups and their patterns.
    pub fn listed(&self) -> &BTreeMap<GroupName, BTreeSet<HostPattern>> {
        &self.groups
    }

    /// Whether `host` may have peers in `group`: always for a group not
    /// listed and for private groups.
    pub fn allows(&self, host: &HostName, group: &GroupName) -> bool {
        if group.is_session() {
            return true;
        }
        self.groups
            .get(group)
            .is_none_or(|patterns| patterns.iter().any(|p| p.matches(host)))
    }

    /// Why `host` may not have peers in `group`, if it may not.
    pub fn check(&self, host: &HostName, group: &GroupName) -> Result<(), NotAllowed> {
        if self.allows(host, group) {
            return Ok(());
        }
        let patterns = self.groups.get(group).into_iter().flatten();
        let allowed: Vec<&str> = patterns.map(HostPattern::as_str).collect();
        Err(NotAllowed {
            host: host.clone(),
            group: group.clone(),
            allowed: match allowed.is_empty() {
                true => "none".to_owned(),
                false => allowed.join(", "),
            },
        })
    }

    /// A roster entry of `host` with only the memberships it may have, and
    /// the ones dropped.
    pub fn screen(&self, host: &HostName, peer: &PeerRecord) -> (PeerRecord, BTreeSet<GroupName>) {
        let (kept, dropped): (BTreeSet<GroupName>, BTreeSet<GroupName>) = peer
            .groups
            .iter()
            .cloned()
            .partition(|g| self.allows(host, g));
        let record = PeerRecord {
            groups: kept,
            ..peer.clone()
        };
        (record, dropped)
    }

    /// Adds patterns to `group` (listing it); whether anything changed.
    pub fn allow(
        &mut self,
        group: GroupName,
        patterns: impl IntoIterator<Item = HostPattern>,
    ) -> bool {
        let listed = self.groups.contains_key(&group);
        let entry = self.groups.entry(group).or_default();
        let before = entry.len();
        entry.extend(patterns);
        !listed || entry.len() != before
    }

    /// Takes patterns out of `group`'s list, or all of them when none are
    /// given: the group stays listed, so only the hosts left may use it
    /// (none, when the list is empty). Whether anything changed.
    pub fn deny(&mut self, group: GroupName, patterns: &[HostPattern]) -> bool {
        let listed = self.groups.contains_key(&group);
        let entry = self.groups.entry(group).or_default();
        let before = entry.len();
        match patterns.is_empty() {
            true => entry.clear(),
            false => entry.retain(|p| !patterns.contains(p)),
        }
        !listed || entry.len() != before
    }

    /// Takes `group` off the list: every host may use it again. Whether it
    /// was listed.
    pub fn open(&mut self, group: &GroupName) -> bool {
        self.groups.remove(group).is_some()
    }
}

/// A group the operator may list: a valid name, not a private group.
pub fn listable(group: &str) -> Result<GroupName, PolicyError> {
    let name = GroupName::new(group).map_err(|_| PolicyError::BadGroup(group.to_owned()))?;
    match name.is_session() {
        true => Err(PolicyError::PrivateGroup(group.to_owned())),
        false => Ok(name),
    }
}

#[cfg(test)]
#[path = "group_policy_tests.rs"]
mod tests;
