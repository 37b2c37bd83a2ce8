//! The tier a change gets from the paths it touches, and the rules that
//! held it there: [`decide`] over a project's [`TierRules`]. Owns the
//! decision and its reasons; the rules' format and defaults are `tier`'s.
//! Never lists the touched paths itself and never looks at the disk.

use globset::GlobSet;
use serde::{Deserialize, Serialize};

use super::tier::{PathRule, Posture, TierError, TierRules};

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
