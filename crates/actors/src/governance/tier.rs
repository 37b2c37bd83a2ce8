//! Risk tiers: how strict a review a change gets, decided from the paths it
//! touches. The rules (a project's `[governance.tiers]` table, or
//! [`TierRules::default`]) name the tiers from least to most strict, map
//! path globs to tiers and give each tier its checklist. A rule with a
//! [`Posture`] also sets a floor that no requested tier may go below.
//!
//! This module owns the rules' format (`tier_decision` owns [`decide`]); it never lists the
//! touched paths itself (the caller reads them from git) and never looks
//! at the disk.

use std::collections::{BTreeMap, BTreeSet};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

pub use super::tier_decision::{TierDecision, TierReason, decide};

/// Why a path rule holds its tier no matter what is requested.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Posture {
    /// Code that guards secrets, keys or trust.
    Security,
    /// Who may change or approve what (CODEOWNERS, Flotilla's own config).
    Permissions,
    /// What decides a merge (CI workflows).
    MergeBoundary,
}

impl Posture {
    /// The posture's name as written in the rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Security => "security",
            Self::Permissions => "permissions",
            Self::MergeBoundary => "merge-boundary",
        }
    }
}

impl std::fmt::Display for Posture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One path rule: paths matching `glob` need at least `tier`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathRule {
    /// A glob over repository-relative paths with `/` separators: `*`
    /// stays within a directory, `**` crosses directories.
    pub glob: String,
    /// The tier a matching path needs; one of [`TierRules::order`].
    pub tier: String,
    /// Set when the rule is a floor no requested tier may go below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posture: Option<Posture>,
}

/// A project's tier rules. Every field has a default, so a partial table
/// keeps the rest of [`TierRules::default`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TierRules {
    /// The tiers' names, from least to most strict.
    pub order: Vec<String>,
    /// The tier of a path no rule matches.
    pub default: String,
    /// Path rules; a path gets the strictest tier among those it matches.
    pub paths: Vec<PathRule>,
    /// What the reviewer must check, per tier.
    pub checklist: BTreeMap<String, Vec<String>>,
}

/// Why tier rules, or a requested tier, were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TierError {
    /// `order` lists no tier.
    #[error(
        "the tier rules' \"order\" is empty; list the tiers from least to most strict, e.g. order = [\"low\", \"medium\", \"high\", \"max\"]"
    )]
    NoTiers,
    /// A tier's name is empty.
    #[error("tier {index} in \"order\" has an empty name; give every tier a name")]
    EmptyName {
        /// Its position in `order`, from 0.
        index: usize,
    },
    /// A tier is listed twice.
    #[error("tier {name:?} appears twice in \"order\"; list each tier once")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// A rule names a tier that `order` does not list.
    #[error(
        "{what} names tier {name:?}, which is not in \"order\" ({known}); use one of those or add it to \"order\""
    )]
    UnknownTier {
        /// Where the name was written (`"default"`, a path rule, a checklist).
        what: String,
        /// The name as written.
        name: String,
        /// The tiers `order` lists, comma-separated.
        known: String,
    },
    /// A path rule's glob does not compile.
    #[error(
        "the path rule glob {glob:?} is not a valid glob ({detail}); fix the pattern (`*` stays within a directory, `**` crosses directories)"
    )]
    BadGlob {
        /// The glob as written.
        glob: String,
        /// What the glob parser said.
        detail: String,
    },
    /// The requested tier is not one the rules know.
    #[error("there is no tier {name:?}; request one of {known}")]
    Requested {
        /// The name requested.
        name: String,
        /// The tiers `order` lists, comma-separated.
        known: String,
    },
}

impl Default for TierRules {
    fn default() -> Self {
        let rule = |glob: &str, posture| PathRule {
            glob: glob.to_owned(),
            tier: "max".to_owned(),
            posture: Some(posture),
        };
        Self {
            order: DEFAULT_ORDER.map(str::to_owned).to_vec(),
            default: "medium".to_owned(),
            paths: vec![
                rule("security/**", Posture::Security),
                rule("**/security/**", Posture::Security),
                rule(".github/workflows/**", Posture::MergeBoundary),
                rule(".gitlab-ci.yml", Posture::MergeBoundary),
                rule("**/CODEOWNERS", Posture::Permissions),
                rule(".flotilla/**", Posture::Permissions),
            ],
            checklist: default_checklist(),
        }
    }
}

/// The default tiers, from least to most strict.
const DEFAULT_ORDER: [&str; 4] = ["low", "medium", "high", "max"];

/// The default checklist's items, each with the least tier that needs it:
/// each tier's list repeats the one below it and adds its own.
const DEFAULT_CHECKS: [(&str, &str); 9] = [
    ("low", "the change does what the brief asks"),
    ("low", "tests cover the change"),
    ("medium", "errors say what was wrong and what to do"),
    ("medium", "nothing unrelated rides along"),
    ("high", "failure paths and edge cases are tested"),
    ("high", "changed behaviour is documented"),
    ("max", "no secret or key is added, logged or weakened"),
    ("max", "outside input is validated before use"),
    ("max", "permissions, CI and merge rules hold"),
];

fn default_checklist() -> BTreeMap<String, Vec<String>> {
    let rank = |tier: &str| DEFAULT_ORDER.iter().position(|t| *t == tier);
    let items_up_to = |top| {
        DEFAULT_CHECKS
            .iter()
            .filter(|(from, _)| rank(from) <= Some(top))
            .map(|(_, item)| (*item).to_owned())
            .collect()
    };
    (DEFAULT_ORDER.iter().enumerate())
        .map(|(top, tier)| ((*tier).to_owned(), items_up_to(top)))
        .collect()
}

impl TierRules {
    /// Checks the rules: tiers named, unique and known wherever they are
    /// used, and every glob valid.
    pub fn validate(&self) -> Result<(), TierError> {
        self.compile().map(|_| ())
    }

    /// A tier's position in [`TierRules::order`] (0 is the least strict);
    /// `None` for a name the rules do not know.
    pub fn rank(&self, tier: &str) -> Option<usize> {
        self.order.iter().position(|t| t == tier)
    }

    /// Whether `tier` is no stricter than `limit` ("tier ≤ limit"); false
    /// when either name is unknown, so an unknown tier is never let through.
    pub fn at_most(&self, tier: &str, limit: &str) -> bool {
        match (self.rank(tier), self.rank(limit)) {
            (Some(t), Some(l)) => t <= l,
            _ => false,
        }
    }

    /// What the reviewer must check at `tier` (empty for a tier with no
    /// checklist or an unknown one).
    pub fn checklist_for(&self, tier: &str) -> &[String] {
        self.checklist.get(tier).map_or(&[], Vec::as_slice)
    }

    /// Validates the rules and builds their glob set (the i-th glob is
    /// `paths[i]`).
    pub(super) fn compile(&self) -> Result<GlobSet, TierError> {
        self.check_order()?;
        self.known("\"default\"", &self.default)?;
        let mut set = GlobSetBuilder::new();
        for rule in &self.paths {
            self.known(&format!("the path rule {:?}", rule.glob), &rule.tier)?;
            let glob = GlobBuilder::new(&rule.glob)
                .literal_separator(true)
                .build()
                .map_err(|e| bad_glob(&rule.glob, &e))?;
            set.add(glob);
        }
        for tier in self.checklist.keys() {
            self.known("the checklist", tier)?;
        }
        set.build().map_err(|e| bad_glob("(the set)", &e))
    }

    fn check_order(&self) -> Result<(), TierError> {
        if self.order.is_empty() {
            return Err(TierError::NoTiers);
        }
        let mut seen = BTreeSet::new();
        for (index, name) in self.order.iter().enumerate() {
            if name.trim().is_empty() {
                return Err(TierError::EmptyName { index });
            }
            if !seen.insert(name.as_str()) {
                return Err(TierError::Duplicate { name: name.clone() });
            }
        }
        Ok(())
    }

    /// The rank of a requested tier, or an error listing the known ones.
    pub(super) fn requested(&self, name: &str) -> Result<usize, TierError> {
        self.rank(name).ok_or_else(|| TierError::Requested {
            name: name.to_owned(),
            known: self.order.join(", "),
        })
    }

    /// The rank of `name`, or an error saying where the unknown name was.
    pub(super) fn known(&self, what: &str, name: &str) -> Result<usize, TierError> {
        self.rank(name).ok_or_else(|| TierError::UnknownTier {
            what: what.to_owned(),
            name: name.to_owned(),
            known: self.order.join(", "),
        })
    }
}

fn bad_glob(glob: &str, e: &globset::Error) -> TierError {
    TierError::BadGlob {
        glob: glob.to_owned(),
        detail: e.kind().to_string(),
    }
}

#[cfg(test)]
#[path = "tier_tests.rs"]
mod tests;
