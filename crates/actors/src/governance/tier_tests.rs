#![allow(clippy::unwrap_used)]

use super::*;

fn rules(extra: &str) -> TierRules {
    let text = format!(
        r#"
        paths = [
          {{ glob = "security/**", tier = "max", posture = "security" }},
          {{ glob = "src/db/**", tier = "high" }},
          {{ glob = "docs/*.md", tier = "low" }},
          {{ glob = "src/**/*.rs", tier = "medium" }},
        ]
        {extra}
        "#
    );
    let rules: TierRules = toml::from_str(&text).unwrap();
    rules.validate().unwrap();
    rules
}

#[test]
fn the_default_rules_are_valid_and_put_security_and_ci_at_max() {
    let rules = TierRules::default();
    rules.validate().unwrap();
    assert_eq!(rules.order, ["low", "medium", "high", "max"]);
    for path in [
        "security/keys.rs",
        "crates/x/security/mod.rs",
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        "CODEOWNERS",
        "docs/CODEOWNERS",
        ".flotilla/config.toml",
    ] {
        let d = decide(&rules, &[path], Some("low")).unwrap();
        assert_eq!(
            (d.tier.as_str(), d.floor.as_deref()),
            ("max", Some("max")),
            "{path}"
        );
    }
    let d = decide(&rules, &["src/lib.rs"], None).unwrap();
    assert_eq!(
        (d.tier.as_str(), d.floor, d.held_by.len()),
        ("medium", None, 0)
    );
    let d = decide(&rules, &[], None).unwrap();
    assert_eq!(d.tier, "medium", "nothing touched: the default");
}

#[test]
fn each_tier_checklist_extends_the_one_below() {
    let rules = TierRules::default();
    let low = rules.checklist_for("low");
    assert_eq!(
        low,
        [
            "the change does what the brief asks",
            "tests cover the change"
        ]
    );
    let max = rules.checklist_for("max");
    assert!(max.starts_with(rules.checklist_for("high")));
    assert!(max.iter().any(|item| item.contains("secret")));
    assert!(rules.checklist_for("nope").is_empty());
}

#[test]
fn a_partial_table_keeps_the_other_defaults() {
    let rules: TierRules = toml::from_str(r#"default = "high""#).unwrap();
    assert_eq!(rules.default, "high");
    assert_eq!(rules.paths, TierRules::default().paths);
    assert!(
        toml::from_str::<TierRules>("tiers = []").is_err(),
        "unknown field"
    );
}

#[test]
fn the_strictest_path_wins() {
    let rules = rules("");
    let d = decide(&rules, &["docs/a.md", "src/db/pool.rs", "src/x.rs"], None).unwrap();
    assert_eq!((d.tier.as_str(), d.computed.as_str()), ("high", "high"));
    assert_eq!(
        d.held_by.len(),
        1,
        "src/**/*.rs (medium) did not set the tier"
    );
    assert_eq!(
        d.held_by[0].to_string(),
        "high because src/db/pool.rs matched src/db/**"
    );
    let d = decide(&rules, &["docs/a.md"], None).unwrap();
    assert_eq!(d.tier, "low");
    let d = decide(&rules, &["docs/a.md", "README.md"], None).unwrap();
    assert_eq!(d.tier, "medium", "an unmatched path gets the default");
}

#[test]
fn a_posture_floor_beats_a_lower_requested_tier() {
    let rules = rules("");
    let d = decide(&rules, &["./security/x.rs", "docs/a.md"], Some("low")).unwrap();
    assert_eq!(d.tier, "max");
    assert_eq!(d.requested.as_deref(), Some("low"));
    assert_eq!(d.floor.as_deref(), Some("max"));
    assert_eq!(
        d.held_by
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["max because ./security/x.rs matched security/** (security)"]
    );
}

#[test]
fn a_requested_tier_replaces_the_computed_one_above_the_floor() {
    let rules = rules("");
    let d = decide(&rules, &["docs/a.md"], Some("high")).unwrap();
    assert_eq!((d.tier.as_str(), d.computed.as_str()), ("high", "low"));
    let d = decide(&rules, &["src/db/pool.rs"], Some("low")).unwrap();
    assert_eq!(d.tier, "low", "no posture, no floor: the request stands");
}

#[test]
fn an_unknown_requested_tier_is_refused() {
    let err = decide(&rules(""), &["docs/a.md"], Some("lowest")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "there is no tier \"lowest\"; request one of low, medium, high, max"
    );
}

#[test]
fn bad_rules_are_refused_naming_the_value() {
    let cases = [
        ("order = []", "\"order\" is empty"),
        (
            r#"order = ["low", ""]"#,
            "tier 1 in \"order\" has an empty name",
        ),
        (r#"order = ["low", "low"]"#, "tier \"low\" appears twice"),
        (r#"default = "huge""#, "\"default\" names tier \"huge\""),
        (
            r#"checklist = { urgent = ["x"] }"#,
            "the checklist names tier \"urgent\"",
        ),
    ];
    for (extra, needle) in cases {
        let rules: TierRules = toml::from_str(extra).unwrap();
        let err = rules.validate().unwrap_err().to_string();
        assert!(err.contains(needle), "{extra}: {err}");
    }
    let mut rules = TierRules::default();
    rules.paths.push(PathRule {
        glob: "src/[a".into(),
        tier: "high".into(),
        posture: None,
    });
    let err = rules.validate().unwrap_err().to_string();
    assert!(err.contains("\"src/[a\" is not a valid glob"), "{err}");
    rules.paths.last_mut().unwrap().glob = "src/**".into();
    rules.paths.last_mut().unwrap().tier = "extreme".into();
    let err = decide(&rules, &[], None).unwrap_err().to_string();
    assert!(
        err.contains("the path rule \"src/**\" names tier \"extreme\""),
        "{err}"
    );
}

#[test]
fn a_star_stays_in_its_directory_and_two_stars_cross() {
    let rules = rules("");
    assert_eq!(decide(&rules, &["docs/a.md"], None).unwrap().tier, "low");
    let d = decide(&rules, &["docs/deep/a.md"], None).unwrap();
    assert_eq!(d.tier, "medium", "docs/*.md does not reach docs/deep/");
    let d = decide(&rules, &["src/a/b/c.rs"], None).unwrap();
    assert_eq!(d.held_by[0].glob, "src/**/*.rs");
    let d = decide(&rules, &["src/a/b/c.toml"], None).unwrap();
    assert!(d.held_by.is_empty());
}

#[test]
fn at_most_compares_by_order_and_refuses_unknown_names() {
    let rules = TierRules::default();
    assert!(rules.at_most("low", "medium"));
    assert!(rules.at_most("medium", "medium"));
    assert!(!rules.at_most("max", "high"));
    assert!(!rules.at_most("nope", "max"));
    assert_eq!((rules.rank("low"), rules.rank("max")), (Some(0), Some(3)));
}
