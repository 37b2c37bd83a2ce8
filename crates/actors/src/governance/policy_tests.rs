use super::*;

fn layer<'a>(path: &'a str, text: &'a str) -> Option<Layer<'a>> {
    Some(Layer { path, text })
}

#[test]
fn no_policy_is_the_safest_defaults() {
    let policy = Policy::from_layers(None, None).expect("defaults");
    assert_eq!(policy, Policy::default());
    assert_eq!(policy.merge.authority, MergeAuthority::Human);
    assert_eq!(policy.concurrency, 1);
    assert_eq!(policy.permissions_for("claude"), Permissions::Default);
}

#[test]
fn the_users_file_wins_over_the_repositorys_key_by_key() {
    let repo = "concurrency = 4\nprotected = [\"trunk\"]\n[merge]\nauthority = \"coordinator\"\n\
                [cli.claude]\npermissions = \"bypass\"\n[cli.codex]\npermissions = \"workspace\"\n";
    let user = "concurrency = 2\n[cli.claude]\npermissions = \"workspace\"\n";
    let policy =
        Policy::from_layers(layer("user.toml", user), layer("repo.toml", repo)).expect("ok");
    assert_eq!(policy.concurrency, 2, "the user's");
    assert_eq!(
        policy.protected,
        vec!["trunk".to_owned()],
        "only the repository set it"
    );
    assert_eq!(policy.merge.authority, MergeAuthority::Coordinator);
    assert_eq!(
        policy.permissions_for("claude"),
        Permissions::Workspace,
        "the user's"
    );
    assert_eq!(policy.permissions_for("codex"), Permissions::Workspace);
}

#[test]
fn a_bad_file_is_named_with_what_is_wrong() {
    let err =
        Policy::from_layers(layer("/u/policy.toml", "concurency = 2\n"), None).expect_err("typo");
    let text = err.to_string();
    assert!(
        text.starts_with("/u/policy.toml: ") && text.contains("concurency"),
        "{text}"
    );
    let err =
        Policy::from_layers(None, layer("/r/.flotilla/policy.toml", "base = [")).expect_err("toml");
    assert!(
        err.to_string().starts_with("/r/.flotilla/policy.toml: "),
        "{err}"
    );
    let err = Policy::from_layers(layer("u", "[merge]\nauthority = \"robot\"\n"), None)
        .expect_err("value");
    assert!(
        err.to_string().contains("robot") || err.to_string().contains("authority"),
        "{err}"
    );
}

#[test]
fn rules_across_layers_are_checked() {
    let err = Policy::from_layers(layer("u", "concurrency = 0\n"), None).expect_err("zero");
    assert!(err.to_string().contains("concurrency is 0"), "{err}");
    let err = Policy::from_layers(layer("u", "protected = [\"\"]\n"), None).expect_err("empty");
    assert!(err.to_string().contains("empty branch pattern"), "{err}");
}

#[test]
fn protected_branches_match_their_patterns_and_the_base() {
    let policy = Policy::from_layers(layer("u", "protected = [\"release/*\", \"main\"]\n"), None)
        .expect("ok");
    assert!(policy.is_protected("main", "develop"));
    assert!(policy.is_protected("release/1.2", "develop"));
    assert!(
        policy.is_protected("develop", "develop"),
        "the base is always protected"
    );
    assert!(!policy.is_protected("flotilla/fix", "develop"));
    assert!(!policy.is_protected("releases", "develop"));
    assert!(wildcard("*", "") && wildcard("a*b*c", "a/x/b/c") && !wildcard("a*b", "a/c"));
}

#[test]
fn a_repositorys_tier_rules_can_never_drop_the_builtin_postures() {
    let repo = "[tiers]\npaths = [{ glob = \"docs/**\", tier = \"low\" }]\n";
    let policy = Policy::from_layers(None, layer(".flotilla/policy.toml", repo)).expect("ok");
    let globs: Vec<&str> = policy.tiers.paths.iter().map(|r| r.glob.as_str()).collect();
    assert!(
        globs.contains(&"docs/**") && globs.contains(&"security/**"),
        "{globs:?}"
    );
    let decision = crate::governance::decide(&policy.tiers, &["security/key.rs"], Some("low"))
        .expect("decide");
    assert_eq!(decision.tier, "max");
    let err =
        Policy::from_layers(layer("u", "[tiers]\ndefault = \"nope\"\n"), None).expect_err("tier");
    assert!(
        err.to_string().contains("[tiers]") && err.to_string().contains("nope"),
        "{err}"
    );
}

#[test]
fn a_reviewer_is_of_another_model_family_unless_the_policy_allows_it() {
    let review = ReviewPolicy::default();
    assert_eq!(review.reviewer_for("claude", None), Ok("codex".into()));
    assert_eq!(review.reviewer_for("codex", None), Ok("claude".into()));
    assert_eq!(
        review.reviewer_for("exec", None),
        Ok("codex".into()),
        "a command has no family"
    );
    let err = review
        .reviewer_for("claude", Some("claude"))
        .expect_err("same family");
    assert!(
        err.contains("same model family") && err.contains("allow_same_family"),
        "{err}"
    );
    let err = review
        .reviewer_for("claude", Some("pi"))
        .expect_err("no family");
    assert!(err.contains("pi has no model family"), "{err}");
    let allowed =
        Policy::from_layers(layer("u", "[review]\nallow_same_family = true\n"), None).expect("ok");
    assert_eq!(
        allowed.review.reviewer_for("claude", Some("claude")),
        Ok("claude".into())
    );
}

#[test]
fn sensitive_paths_match_their_globs_at_any_depth_where_asked() {
    let p = Policy::default();
    assert!(p.is_sensitive(".env") && p.is_sensitive("app/.env") && p.is_sensitive("secrets/a/b"));
    assert!(p.is_sensitive("certs/host.key") && !p.is_sensitive("src/env.rs"));
    let p = Policy::from_layers(layer("u", "sensitive = [\"config/*.toml\"]\n"), None).expect("ok");
    assert!(p.is_sensitive("config/secret.toml") && !p.is_sensitive("config/deep/x.toml"));
    let err = Policy::from_layers(layer("u", "sensitive = [\"a[\"]\n"), None).expect_err("glob");
    assert!(
        err.to_string().contains("sensitive has a bad glob"),
        "{err}"
    );
}

#[test]
fn only_the_users_own_file_turns_a_clis_sandbox_off() {
    use super::super::sandbox::SandboxRule;
    let defaults = Policy::from_layers(None, None).expect("defaults");
    assert_eq!(defaults.sandbox_for("pi"), SandboxRule::Required);
    let off = "[cli.pi]\nsandbox = \"off\"\n";
    let err = Policy::from_layers(None, layer(".flotilla/policy.toml", off))
        .expect_err("a repository turns it off");
    let said = err.to_string();
    assert!(
        said.contains(".flotilla/policy.toml") && said.contains("only your own policy.toml"),
        "{said}"
    );
    let err = Policy::from_layers(layer("user.toml", off), layer("repo.toml", off))
        .expect_err("the repository still may not");
    assert!(
        err.to_string().contains("repo.toml"),
        "the user's word does not launder the repository's: {err}"
    );
    let policy = Policy::from_layers(layer("user.toml", off), None).expect("the user's own");
    assert_eq!(policy.sandbox_for("pi"), SandboxRule::Off);
    let required = "[cli.codex]\nsandbox = \"required\"\n";
    let policy = Policy::from_layers(None, layer("repo.toml", required))
        .expect("a repository may require it");
    assert_eq!(policy.sandbox_for("codex"), SandboxRule::Required);
}
