//! Risk tiers: how strict a review a change gets, decided from the paths it
//! touches. The rules (a project's `[governance.tiers]` table, or
//! [`TierRules::default`]) name the tiers from least to most strict, map
//! path globs to tiers and give each tier its checklist. A rule with a
//! [`Posture`] also sets a floor that no requested tier may go below.
//!
//! This module owns the rules' format and [`decide`]; it never lists the
//! touched paths itself (the caller reads them from git) and never looks
//! at the disk.

use std::collections::{BTreeMap, BTreeSet};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

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
    fn compile(&self) -> Result<GlobSet, TierError> {
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
    fn requested(&self, name: &str) -> Result<usize, TierError> {
        self.rank(name).ok_or_else(|| TierError::Requested {
            name: name.to_owned(),
            known: self.order.join(", "),
        })
    }

    /// The rank of `name`, or an error saying where the unknown name was.
    fn known(&self, what: &str, name: &str) -> Result<usize, TierError> {
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

/// One path rule that held a decision up: `path` matched `glob`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TierReason {
    /// The touched path, as given.
    pub path: String,
    /// The rule's glob.
    pub glob: String,
    /// The rule's tier.
    pub tier: String,
    /// The rule's posture, when it is a floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posture: Option<Posture>,
}

impl std::fmt::Display for TierReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (path, glob, tier) = (&self.path, &self.glob, &self.tier);
        match self.posture {
            Some(posture) => write!(f, "{tier} because {path} matched {glob} ({posture})"),
            None => write!(f, "{tier} because {path} matched {glob}"),
        }
    }
}

/// The tier a change gets, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TierDecision {
    /// The tier the review runs at.
    pub tier: String,
    /// The strictest tier among the touched paths (the default when none).
    pub computed: String,
    /// The tier asked for (a `--tier` flag or a model's suggestion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// The strictest tier of a path matched by a rule with a posture: the
    /// least `tier` may be, whatever was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<String>,
    /// The rules that set `computed` or `floor`.
    pub held_by: Vec<TierReason>,
}

/// One touched path matching one rule.
struct Hit<'a> {
    path: &'a str,
    rule: &'a PathRule,
    rank: usize,
}

/// Decides the tier of a change touching `touched` (repository-relative
/// paths with `/` separators; a leading `./` is ignored). `requested`,
/// when given, replaces the tier computed from the paths but never goes
/// below the floor set by rules with a posture.
pub fn decide(
    rules: &TierRules,
    touched: &[&str],
    requested: Option<&str>,
) -> Result<TierDecision, TierError> {
    let globs = rules.compile()?;
    let default = rules.known("\"default\"", &rules.default)?;
    let asked = requested.map(|name| rules.requested(name)).transpose()?;
    let (hits, computed) = match_paths(rules, &globs, touched, default);
    let floor = hits
        .iter()
        .filter(|h| h.rule.posture.is_some())
        .map(|h| h.rank)
        .max();
    let tier = asked.unwrap_or(computed).max(floor.unwrap_or(0));
    let held_by = hits
        .iter()
        .filter(|h| h.rank == computed || (h.rule.posture.is_some() && Some(h.rank) == floor))
        .map(reason)
        .collect();
    let name = |rank: usize| rules.order[rank].clone();
    Ok(TierDecision {
        tier: name(tier),
        computed: name(computed),
        requested: requested.map(str::to_owned),
        floor: floor.map(name),
        held_by,
    })
}

/// Every (path, rule) match, and the strictest tier over the paths (each
/// path at its strictest match, or `default` when it matches none).
fn match_paths<'a>(
    rules: &'a TierRules,
    globs: &GlobSet,
    touched: &[&'a str],
    default: usize,
) -> (Vec<Hit<'a>>, usize) {
    let mut hits = Vec::new();
    let mut computed = None;
    for path in touched {
        let before = hits.len();
        for rule in globs
            .matches(strip_dots(path))
            .into_iter()
            .filter_map(|i| rules.paths.get(i))
        {
            if let Some(rank) = rules.rank(&rule.tier) {
                hits.push(Hit { path, rule, rank });
            }
        }
        let own = hits[before..]
            .iter()
            .map(|h| h.rank)
            .max()
            .unwrap_or(default);
        computed = computed.max(Some(own));
    }
    (hits, computed.unwrap_or(default))
}

fn strip_dots(mut path: &str) -> &str {
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path
}

fn reason(hit: &Hit<'_>) -> TierReason {
    TierReason {
        path: hit.path.to_owned(),
        glob: hit.rule.glob.clone(),
        tier: hit.rule.tier.clone(),
        posture: hit.rule.posture,
    }
}

#[cfg(test)]
#[path = "tier_tests.rs"]
mod tests;
