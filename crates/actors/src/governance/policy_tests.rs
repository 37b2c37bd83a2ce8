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
