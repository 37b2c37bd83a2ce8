//! The user's policy for claims: `policy.toml` in the user's config,
//! optionally overlaid by the repository's `.flotilla/policy.toml`, where
//! the user's file wins on every key both set.
//!
//! Owns the keys, their defaults (the safest: nothing merges without a
//! person, one claim in flight, lanes at their CLI's own default
//! permissions), the overlay and validation. Must not read files: the host
//! hands in each layer's path and text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::lane::Permissions;

/// Largest `concurrency`.
pub const MAX_CONCURRENCY: u32 = 64;

/// One claim policy, every layer applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// The branch claims start from; none: the branch checked out in the
    /// repository when the claim is added.
    pub base: Option<String>,
    /// Branches no lane may push to (`*` matches anything, `/` included).
    /// A claim's base is always protected too.
    pub protected: Vec<String>,
    /// Claims in flight at once per repository.
    pub concurrency: u32,
    /// The remote that run records and claim branches are pushed to, when
    /// the repository has it.
    pub remote: String,
    /// Who may merge.
    pub merge: MergePolicy,
    /// Per CLI: the most a lane in a claim may be allowed.
    pub cli: BTreeMap<String, CliPolicy>,
}

/// Who may merge a claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MergePolicy {
    /// `human` (the default) or `coordinator`.
    pub authority: MergeAuthority,
}

/// Who may merge.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MergeAuthority {
    /// Only a person.
    #[default]
    Human,
    /// The coordinator, when the gate passed and checks are green.
    Coordinator,
}

/// What one CLI's lanes in claims may be allowed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CliPolicy {
    /// The most permissive mode a claim's lane of this CLI may ask for.
    pub permissions: Permissions,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            base: None,
            protected: vec!["main".into(), "master".into()],
            concurrency: 1,
            remote: "origin".into(),
            merge: MergePolicy::default(),
            cli: BTreeMap::new(),
        }
    }
}

impl Default for MergePolicy {
    fn default() -> Self {
        Self {
            authority: MergeAuthority::Human,
        }
    }
}

/// One file of policy: where it is and what it says.
#[derive(Debug, Clone)]
pub struct Layer<'a> {
    /// Its path, for messages.
    pub path: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// Why a policy cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A file is not TOML, or has a key or value this version does not take.
    #[error("{path}: {detail} (fix the file; `flotilla policy check` checks it again)")]
    File {
        /// The file.
        path: String,
        /// What is wrong, from the TOML parser.
        detail: String,
    },
    /// The layers together break a rule.
    #[error("the policy ({paths}) is not valid: {detail}")]
    Invalid {
        /// The files it came from.
        paths: String,
        /// Which rule, and how to mend it.
        detail: String,
    },
}

impl Policy {
    /// The policy of `repo`'s file overlaid by the user's (the user's wins);
    /// the defaults where neither says.
    pub fn from_layers(
        user: Option<Layer<'_>>,
        repo: Option<Layer<'_>>,
    ) -> Result<Self, PolicyError> {
        let mut merged = toml::Table::new();
        let mut paths = Vec::new();
        for layer in [repo, user].into_iter().flatten() {
            let table = parse_layer(&layer)?;
            overlay(&mut merged, table);
            paths.push(layer.path.to_owned());
        }
        let policy: Policy =
            toml::Value::Table(merged)
                .try_into()
                .map_err(|e: toml::de::Error| PolicyError::Invalid {
                    paths: paths.join(" over "),
                    detail: e.message().to_owned(),
                })?;
        policy.validate().map_err(|detail| PolicyError::Invalid {
            paths: if paths.is_empty() {
                "defaults".into()
            } else {
                paths.join(" over ")
            },
            detail,
        })?;
        Ok(policy)
    }

    /// Whether `branch` is protected for a claim based on `base`.
    pub fn is_protected(&self, branch: &str, base: &str) -> bool {
        branch == base || self.protected.iter().any(|p| wildcard(p, branch))
    }

    /// The most permissive mode a claim's lane of `cli` may ask for.
    pub fn permissions_for(&self, cli: &str) -> Permissions {
        self.cli.get(cli).map(|c| c.permissions).unwrap_or_default()
    }

    fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(format!(
                "concurrency is {}; it must be 1 to {MAX_CONCURRENCY}",
                self.concurrency
            ));
        }
        if let Some(bad) = self.protected.iter().find(|p| p.trim().is_empty()) {
            return Err(format!(
                "protected has an empty branch pattern {bad:?}; remove it"
            ));
        }
        if self.base.as_deref().is_some_and(|b| b.trim().is_empty()) {
            return Err("base is empty; name a branch, or leave base out".into());
        }
        if self.remote.trim().is_empty() {
            return Err("remote is empty; name a remote (default origin)".into());
        }
        Ok(())
    }
}

/// Parses one file and checks it alone, so an unknown key is named with
/// the file it is in.
fn parse_layer(layer: &Layer<'_>) -> Result<toml::Table, PolicyError> {
    let bad = |detail: String| PolicyError::File {
        path: layer.path.to_owned(),
        detail,
    };
    let table: toml::Table = toml::from_str(layer.text).map_err(|e| bad(e.message().to_owned()))?;
    let alone: Result<Policy, toml::de::Error> = toml::Value::Table(table.clone()).try_into();
    alone.map_err(|e| bad(e.message().to_owned()))?;
    Ok(table)
}

/// Sets every key of `top` in `base`, merging tables key by key; any other
/// value (arrays included) replaces what `base` had.
fn overlay(base: &mut toml::Table, top: toml::Table) {
    for (key, value) in top {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(below)), toml::Value::Table(above)) => overlay(below, above),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// `*` matches any run of characters (`/` included); all else literally.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| wildcard(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
