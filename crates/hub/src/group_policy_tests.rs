use super::*;
use flotilla_actors::model::{PeerKind, Timestamp};
use flotilla_actors::names::PeerId;

fn host(s: &str) -> HostName {
    HostName::new(s).expect("host")
}

fn group(s: &str) -> GroupName {
    GroupName::new(s).expect("group")
}

fn pattern(s: &str) -> HostPattern {
    HostPattern::new(s).expect("pattern")
}

fn policy(entries: &[(&str, &[&str])]) -> GroupPolicy {
    let owned: Vec<(String, Vec<String>)> = entries
        .iter()
        .map(|(g, ps)| (g.to_string(), ps.iter().map(|p| p.to_string()).collect()))
        .collect();
    GroupPolicy::parse(owned.iter().map(|(g, ps)| (g.as_str(), ps.as_slice()))).expect("policy")
}

fn peer(id: &str, groups: &[&str]) -> PeerRecord {
    PeerRecord {
        id: PeerId::parse(id).expect("id"),
        kind: PeerKind::Mailbox,
        product: None,
        groups: groups.iter().map(|g| group(g)).collect(),
        joined_at: Timestamp(0),
    }
}

#[test]
fn patterns_match_whole_host_names() {
    let p = pattern("workstation-*");
    assert!(p.matches(&host("workstation-1")));
    assert!(p.matches(&host("workstation-")));
    assert!(!p.matches(&host("workstation")));
    assert!(!p.matches(&host("my-workstation-1")));
    assert!(pattern("*").matches(&host("anything")));
    assert!(pattern("lap?op").matches(&host("laptop")));
    assert!(!pattern("lap?op").matches(&host("lapop")));
    assert!(pattern("*-*-x").matches(&host("a-b-c-x")));
    assert!(!pattern("*a").matches(&host("ab")));
    assert!(pattern("a*b*c").matches(&host("aXXbYYbc")));
}

#[test]
fn an_exact_name_matches_only_itself() {
    let p = pattern("laptop");
    assert!(p.matches(&host("laptop")));
    assert!(!p.matches(&host("laptop2")));
    assert!(
        !p.matches(&host("Laptop")),
        "case-sensitive, as certificates are"
    );
    assert!(!p.matches(&host("lapto")));
}

#[test]
fn bad_patterns_and_groups_are_refused_with_what_is_allowed() {
    for bad in ["", "a.b", "host/x", "with space", &"x".repeat(49)] {
        let err = HostPattern::new(bad).expect_err(bad);
        assert!(err.to_string().contains("host name pattern"), "{err}");
    }
    assert!(matches!(
        listable("no spaces"),
        Err(PolicyError::BadGroup(_))
    ));
    let err = listable("session:work/lead").expect_err("private");
    assert!(err.to_string().contains("own rule"), "{err}");
    let entries = [("proj".to_owned(), vec!["ok".to_owned(), "b@d".to_owned()])];
    let parsed = GroupPolicy::parse(entries.iter().map(|(g, p)| (g.as_str(), p.as_slice())));
    assert_eq!(parsed, Err(PolicyError::BadPattern("b@d".into())));
}

#[test]
fn a_listed_group_lets_in_only_matching_hosts() {
    let p = policy(&[("proj", &["laptop", "workstation-*"])]);
    assert!(p.allows(&host("laptop"), &group("proj")));
    assert!(p.allows(&host("workstation-2"), &group("proj")));
    let err = p.check(&host("liar"), &group("proj")).expect_err("refused");
    assert_eq!(err.allowed, "laptop, workstation-*");
    let text = err.to_string();
    assert!(
        text.contains("hub groups") && text.contains("liar"),
        "{text}"
    );
}

#[test]
fn groups_not_listed_stay_open_and_nothing_listed_is_the_default() {
    let open = GroupPolicy::default();
    assert!(open.listed().is_empty());
    assert!(open.allows(&host("anyone"), &group("proj")));
    let p = policy(&[("proj", &["laptop"])]);
    assert!(p.allows(&host("liar"), &group("other")));
}

#[test]
fn private_groups_are_exempt() {
    let mut p = policy(&[("proj", &["laptop"])]);
    // Even if one slipped in, a private group is never judged by the list.
    p.groups.insert(group("session:work/lead"), BTreeSet::new());
    assert!(p.allows(&host("liar"), &group("session:work/lead")));
    let (kept, dropped) = p.screen(
        &host("liar"),
        &peer("liar/x", &["session:liar/own", "proj"]),
    );
    assert!(kept.groups.contains(&group("session:liar/own")));
    assert_eq!(dropped, BTreeSet::from([group("proj")]));
}

#[test]
fn screening_drops_only_the_memberships_not_allowed() {
    let p = policy(&[("proj", &["work"]), ("ops", &["liar"])]);
    let (kept, dropped) = p.screen(&host("liar"), &peer("liar/spy", &["proj", "ops", "open"]));
    let names: Vec<&str> = kept.groups.iter().map(GroupName::as_str).collect();
    assert_eq!(names, ["open", "ops"]);
    assert_eq!(dropped, BTreeSet::from([group("proj")]));
    assert_eq!(kept.id, PeerId::parse("liar/spy").expect("id"));
}

#[test]
fn allow_deny_and_open_edit_the_list() {
    let mut p = GroupPolicy::default();
    assert!(p.allow(group("proj"), [pattern("work")]));
    assert!(!p.allow(group("proj"), [pattern("work")]), "already there");
    assert!(p.allow(group("proj"), [pattern("lap*")]));
    assert!(p.deny(group("proj"), &[pattern("work")]));
    assert!(!p.allows(&host("work"), &group("proj")));
    assert!(p.allows(&host("laptop"), &group("proj")));
    assert!(p.deny(group("proj"), &[]));
    assert!(
        !p.allows(&host("laptop"), &group("proj")),
        "listed with nobody: closed"
    );
    assert_eq!(
        p.check(&host("x"), &group("proj"))
            .expect_err("closed")
            .allowed,
        "none"
    );
    assert!(p.open(&group("proj")));
    assert!(p.allows(&host("x"), &group("proj")));
    assert!(!p.open(&group("proj")));
}
