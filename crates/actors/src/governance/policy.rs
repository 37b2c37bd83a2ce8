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

use super::tier::TierRules;
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
    /// Where change requests go: `github`, `gitlab` or `none` (a local
    /// change record); default: the forge the remote's URL is on.
    pub forge: Option<String>,
    /// Who may merge.
    pub merge: MergePolicy,
    /// Per CLI: the most a lane in a claim may be allowed.
    pub cli: BTreeMap<String, CliPolicy>,
    /// Paths (globs; `*` within a directory, `**` across) no lane in a
    /// claim may change: tracked ones are read-only in its worktree, and
    /// its pre-commit hook refuses a commit that touches one.
    pub sensitive: Vec<String>,
    /// Risk tiers by path and posture. Rules given here add to the
    /// built-in posture rules, which cannot be removed.
    pub tiers: TierRules,
    /// Who reviews whom.
    pub review: ReviewPolicy,
}

/// Who reviews whom: the model family of each CLI, and the reviewers to
/// pick from when none is named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewPolicy {
    /// The model family of each CLI (`claude = "anthropic"`...). A CLI
    /// with none (pi, opencode: any provider) cannot review until given one.
    pub families: BTreeMap<String, String>,
    /// The reviewers to try, in order, when `--reviewer` is not given: the
    /// first of another family than the author's.
    pub reviewers: Vec<String>,
    /// Let a CLI review a change of its own model family.
    pub allow_same_family: bool,
}

impl Default for ReviewPolicy {
    fn default() -> Self {
        let families = [
            ("claude", "anthropic"),
            ("codex", "openai"),
            ("gemini", "google"),
            ("qwen", "alibaba"),
            ("grok", "xai"),
        ];
        Self {
            families: families
                .iter()
                .map(|(c, f)| ((*c).into(), (*f).into()))
                .collect(),
            reviewers: ["codex", "claude", "gemini", "qwen", "grok"]
                .map(String::from)
                .to_vec(),
            allow_same_family: false,
        }
    }
}

impl ReviewPolicy {
    /// The model family of `cli`, if it has one.
    pub fn family(&self, cli: &str) -> Option<&str> {
        self.families.get(cli).map(String::as_str)
    }

    /// The reviewer for a change by `author`: `named` if given, else the
    /// first of `reviewers` of another family. Refused when the families
    /// are the same (unless allowed) or the reviewer has none.
    pub fn reviewer_for(&self, author: &str, named: Option<&str>) -> Result<String, String> {
        let author_family = self.family(author);
        let differs = |cli: &str| {
            self.allow_same_family || author_family.is_none() || self.family(cli) != author_family
        };
        let Some(cli) = named else {
            return (self.reviewers.iter())
                .find(|cli| self.family(cli).is_some() && differs(cli))
                .cloned()
                .ok_or_else(|| format!(
                    "no reviewer in policy.toml's [review] reviewers is of another model family than {author}'s; name one with --reviewer CLI"
                ));
        };
        let Some(family) = self.family(cli) else {
            return Err(format!(
                "{cli} has no model family in policy.toml's [review] families, so it cannot review; give it one (e.g. {cli} = \"openai\") or pick another reviewer"
            ));
        };
        if !differs(cli) {
            return Err(format!(
                "{cli} ({family}) is of the same model family as the author, {author}; pick a reviewer of another family, or set [review] allow_same_family = true"
            ));
        }
        Ok(cli.to_owned())
    }
}

/// Who may merge a claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MergePolicy {
    /// `human` (the default) or `coordinator`.
    pub authority: MergeAuthority,
    /// The strictest tier at which the coordinator may merge a passed
    /// change (default: the least strict tier).
    pub max_tier: Option<String>,
    /// Commands that must pass (exit 0) in the claim's worktree before the
    /// coordinator merges: "checks are green".
    pub checks: Vec<String>,
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
    /// Whether its commands must be confined (`required`, the default) or
    /// not (`off`, only in the user's own file).
    pub sandbox: super::sandbox::SandboxRule,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            base: None,
            protected: vec!["main".into(), "master".into()],
            concurrency: 1,
            remote: "origin".into(),
            forge: None,
            merge: MergePolicy::default(),
            cli: BTreeMap::new(),
            sensitive: ["**/.env", "**/*.pem", "**/*.key", "secrets/**"]
                .map(String::from)
                .to_vec(),
            tiers: TierRules::default(),
            review: ReviewPolicy::default(),
        }
    }
}

impl Default for MergePolicy {
    fn default() -> Self {
        Self {
            authority: MergeAuthority::Human,
            max_tier: None,
            checks: Vec::new(),
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
        if let Some(layer) = &repo {
            refuse_sandbox_off(layer)?;
        }
        for layer in [repo, user].into_iter().flatten() {
            let table = parse_layer(&layer)?;
            overlay(&mut merged, table);
            paths.push(layer.path.to_owned());
        }
        let mut policy: Policy =
            toml::Value::Table(merged)
                .try_into()
                .map_err(|e: toml::de::Error| PolicyError::Invalid {
                    paths: paths.join(" over "),
                    detail: e.message().to_owned(),
                })?;
        policy.keep_builtin_postures();
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

    /// Whether `path` (repository-relative) is sensitive.
    pub fn is_sensitive(&self, path: &str) -> bool {
        let glob = |g: &str| globset::GlobBuilder::new(g).literal_separator(true).build();
        self.sensitive
            .iter()
            .filter_map(|g| glob(g).ok())
            .any(|g| g.compile_matcher().is_match(path))
    }

    /// The most permissive mode a claim's lane of `cli` may ask for.
    pub fn permissions_for(&self, cli: &str) -> Permissions {
        self.cli.get(cli).map(|c| c.permissions).unwrap_or_default()
    }

    /// The sandbox rule for a claim's lane of `cli`.
    pub fn sandbox_for(&self, cli: &str) -> super::sandbox::SandboxRule {
        self.cli.get(cli).map(|c| c.sandbox).unwrap_or_default()
    }

    /// Adds back every built-in posture rule the configured `paths` left
    /// out, at the strictest configured tier: a repository's file (or a
    /// model editing it) can never drop them.
    fn keep_builtin_postures(&mut self) {
        let strictest = self.tiers.order.last().cloned().unwrap_or_default();
        for mut rule in TierRules::default().paths {
            if !self
                .tiers
                .paths
                .iter()
                .any(|r| r.glob == rule.glob && r.posture.is_some())
            {
                rule.tier = strictest.clone();
                self.tiers.paths.push(rule);
            }
        }
    }

    fn validate(&self) -> Result<(), String> {
        self.tiers.validate().map_err(|e| format!("[tiers]: {e}"))?;
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(format!(
                "concurrency is {}; it must be 1 to {MAX_CONCURRENCY}",
                self.concurrency
            ));
        }
        for g in &self.sensitive {
            globset::Glob::new(g).map_err(|e| format!("sensitive has a bad glob {g:?}: {e}"))?;
        }
        if let Some(bad) = self.protected.iter().find(|p| p.trim().is_empty()) {
            return Err(format!(
                "protected has an empty branch pattern {bad:?}; remove it"
            ));
        }
        if self.base.as_deref().is_some_and(|b| b.trim().is_empty()) {
            return Err("base is empty; name a branch, or leave base out".into());
        }
        if let Some(tier) = &self.merge.max_tier
            && self.tiers.rank(tier).is_none()
        {
            return Err(format!(
                "[merge] max_tier is {tier:?}, not a tier of [tiers] order ({})",
                self.tiers.order.join(", ")
            ));
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

/// A repository's file may require a CLI's sandbox, never turn it off:
/// that is the user's own decision.
fn refuse_sandbox_off(layer: &Layer<'_>) -> Result<(), PolicyError> {
    let table = parse_layer(layer)?;
    let Some(toml::Value::Table(clis)) = table.get("cli") else {
        return Ok(());
    };
    for (cli, value) in clis {
        if value.get("sandbox").and_then(toml::Value::as_str) == Some("off") {
            return Err(PolicyError::File {
                path: layer.path.to_owned(),
                detail: format!(
                    "[cli.{cli}] sandbox = \"off\": a repository's file cannot turn a CLI's \
                     sandbox off; only your own policy.toml can"
                ),
            });
        }
    }
    Ok(())
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
