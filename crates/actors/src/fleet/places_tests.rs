use super::*;
use crate::fleet::{Artifact, Check, MemberSpec};
use crate::lane::CliKind;

fn worker(claim: Option<&str>) -> MemberSpec {
    MemberSpec {
        cli: CliKind::Exec,
        model: None,
        command: Some("true".into()),
        fallback_models: Vec::new(),
        permissions: Default::default(),
        host: None,
        claim: claim.map(|c| ClaimId::parse(c).unwrap_or_else(|e| panic!("{e}"))),
    }
}

fn spec(claims: &[Option<&str>]) -> FleetSpec {
    let mut spec: FleetSpec = serde_json::from_value(serde_json::json!({
        "name": "gov",
        "supervisor": {"cli": "exec", "command": "true"},
        "workers": [],
        "dir": "/tmp",
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    spec.workers = claims.iter().map(|c| worker(*c)).collect();
    spec
}

fn claim(id: &str) -> Place {
    Place::Claim(ClaimId::parse(id).unwrap_or_else(|e| panic!("{e}")))
}

fn task() -> Task {
    Task {
        goal: "g".into(),
        hours: None,
        artifacts: vec![
            Artifact {
                path: "a.md".into(),
                min_chars: 0,
                contains: Vec::new(),
            },
            Artifact {
                path: "b.md".into(),
                min_chars: 0,
                contains: Vec::new(),
            },
        ],
        checks: vec![Check {
            run: "make test".into(),
            cwd: ".".into(),
        }],
    }
}

fn ran(exit: i32) -> Option<Vec<CheckRan>> {
    Some(vec![CheckRan {
        run: "make test".into(),
        exit: Some(exit),
        timed_out: false,
        tail: "out".into(),
    }])
}

#[test]
fn a_worker_with_a_claim_works_in_its_worktree_and_the_rest_in_the_fleets_directory() {
    let spec = spec(&[Some("fix-a"), None]);
    assert_eq!(spec.place_of("worker-1"), claim("fix-a"));
    assert_eq!(spec.place_of("worker-2"), Place::FleetDir);
    assert_eq!(spec.place_of("supervisor"), Place::FleetDir);
    assert_eq!(spec.places(), vec![claim("fix-a"), Place::FleetDir]);
    assert!(spec.worked_in(&claim("fix-a")));
    assert!(spec.worked_in(&Place::FleetDir));
    assert!(!spec.worked_in(&claim("fix-b")));
    let all_claimed = self::spec(&[Some("fix-a"), Some("fix-b")]);
    assert!(
        !all_claimed.worked_in(&Place::FleetDir),
        "no checks where no worker works"
    );
}

#[test]
fn an_artifact_counts_where_it_is_first_found_and_is_missing_only_when_nowhere() {
    let text = |t: &str| ArtifactSeen::Text(t.into());
    let facts = [
        PlaceFacts {
            place: claim("fix-a"),
            seen: vec![text("from a"), ArtifactSeen::Missing],
            ran: ran(0),
        },
        PlaceFacts {
            place: Place::FleetDir,
            seen: vec![text("from the fleet's directory"), ArtifactSeen::Missing],
            ran: None,
        },
    ];
    let Verdict::Bounced(why) = judge_across(&task(), &facts) else {
        panic!("b.md is nowhere");
    };
    assert_eq!(
        why,
        vec![Shortfall::Missing {
            path: "b.md".into()
        }]
    );
    let mut found = facts.clone();
    found[1].seen[1] = text("b");
    let Verdict::Accepted(evidence) = judge_across(&task(), &found) else {
        panic!("every artifact is somewhere and the check passed");
    };
    assert_eq!(evidence.artifacts.len(), 2);
    assert_eq!(evidence.checks.len(), 1, "checks ran in the claim only");
}

#[test]
fn every_place_a_worker_works_must_pass_the_checks_and_a_failure_names_its_claim() {
    let seen = vec![
        ArtifactSeen::Text("a".into()),
        ArtifactSeen::Text("b".into()),
    ];
    let facts = [
        PlaceFacts {
            place: claim("fix-a"),
            seen: seen.clone(),
            ran: ran(0),
        },
        PlaceFacts {
            place: claim("fix-b"),
            seen: seen.clone(),
            ran: ran(2),
        },
        PlaceFacts {
            place: Place::FleetDir,
            seen,
            ran: Some(Vec::new()),
        },
    ];
    let Verdict::Bounced(why) = judge_across(&task(), &facts) else {
        panic!("fix-b's check failed and the fleet's directory never ran it");
    };
    assert_eq!(why.len(), 2, "{why:?}");
    let Shortfall::CheckFailed { exit, tail, .. } = &why[0] else {
        panic!("{why:?}");
    };
    assert_eq!(*exit, Some(2));
    assert!(tail.starts_with("(in claim fix-b's worktree)"), "{tail}");
    assert!(
        matches!(&why[1], Shortfall::CheckFailed { tail, .. } if tail == "the check did not run"),
        "a check that did not run is a failure: {why:?}"
    );
}
