//! Fuzzing the hub's group list (`hub-groups.toml`): [`GroupsFile::parse`]
//! on whatever the file holds, the writer's round trip, and host-name
//! patterns checked against a reference glob matcher.

use flotilla_actors::fuzzing::{Target, TestCaseError, fuzz, text};
use flotilla_actors::names::HostName;
use proptest::prop_assert_eq;

use super::*;
use crate::group_policy::{HostPattern, listable};

fn file() -> GroupsFile {
    GroupsFile::new("/etc/flotilla/hub-groups.toml")
}

/// Lists as an operator writes them (docs/config.md) and as `hub groups
/// allow` saves them.
fn seeds() -> Vec<Vec<u8>> {
    let by_hand =
        "[groups]\nproj = [\"laptop\", \"workstation-*\"]   # only these hosts\nops = []\n";
    let mut policy = GroupPolicy::default();
    let pattern = |p: &str| HostPattern::new(p).expect("pattern");
    policy.allow(
        listable("proj").expect("group"),
        [pattern("build-??"), pattern("*-ci")],
    );
    policy.allow(
        listable("team/alpha.1").expect("group"),
        [pattern("laptop")],
    );
    let saved = file().render(&policy).expect("render");
    vec![by_hand.as_bytes().to_vec(), saved.into_bytes()]
}

/// Whether `text` matches `pattern` (`*` any run, `?` one byte), by the
/// definition: tried at every split.
fn reference(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| reference(rest, &text[i..])),
        Some((&c, rest)) => text
            .split_first()
            .is_some_and(|(&t, more)| (c == b'?' || c == t) && reference(rest, more)),
    }
}

/// Host names to match `pattern` against: some that it should match
/// (its wildcards filled in) and some fixed ones.
fn hosts(pattern: &str) -> Vec<HostName> {
    let mut names = vec![
        "laptop".to_owned(),
        "workstation-2".to_owned(),
        "a".to_owned(),
    ];
    for fill in ["", "x", "ab-9"] {
        names.push(pattern.replace('*', fill).replace('?', "q"));
    }
    names.iter().filter_map(|n| HostName::new(n).ok()).collect()
}

fn check(input: &[u8]) -> Result<(), TestCaseError> {
    let file = file();
    let Ok(policy) = file.parse(&text(input)) else {
        return Ok(());
    };
    let saved = file.render(&policy).expect("an accepted list renders");
    prop_assert_eq!(file.parse(&saved).ok(), Some(policy.clone()));
    for pattern in policy.listed().values().flatten() {
        for host in hosts(pattern.as_str()) {
            let want = reference(pattern.as_str().as_bytes(), host.as_str().as_bytes());
            prop_assert_eq!(pattern.matches(&host), want, "{} on {}", pattern, host);
        }
    }
    Ok(())
}

#[test]
fn fuzz_groups_file() {
    let seeds = seeds();
    for seed in &seeds {
        let policy = file()
            .parse(&text(seed))
            .expect("every seed is a valid list");
        assert!(!policy.listed().is_empty());
    }
    let target = Target {
        name: "hub-groups-file",
        seeds: &seeds,
        dictionary: &[
            b"\n",
            b"=",
            b"\"",
            b"[",
            b"]",
            b",",
            b"*",
            b"?",
            b"**",
            b"*?*",
            b"[groups]\n",
            b"session:laptop/lead",
            b"\"a.b\"",
            b"\\u0000",
            b"'''",
        ],
    };
    fuzz(target, check);
}

#[test]
fn the_reference_glob_agrees_with_the_examples() {
    assert!(reference(b"work-*", b"work-1"));
    assert!(reference(b"*-ci", b"build-ci"));
    assert!(reference(b"b?ild*", b"build"));
    assert!(!reference(b"b?ild", b"bild"));
    assert!(!reference(b"*a", b"bbb"));
}
