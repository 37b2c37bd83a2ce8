#![allow(clippy::unwrap_used)]

use super::*;
use crate::fleet::acceptance::{Evidence, Verdict};

fn task() -> Task {
    Task::parse(r#"{"goal": "a report", "artifacts": [{"path": "r.md", "min_chars": 10}]}"#)
        .unwrap()
}

fn workers() -> Vec<String> {
    vec!["worker-1".into(), "worker-2".into()]
}

fn parse(reply: &str, busy: &[String], ledger: &StepLedger) -> Result<Plan, Vec<String>> {
    parse_plan(reply, &task(), &workers(), busy, ledger, &|_, _, _| Ok(()))
}

#[test]
fn a_good_plan_dispatches_and_adds_the_steps_artifacts_to_the_task() {
    let reply = r#"```json
{"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "write it",
  "artifacts": [{"path": "r.md", "min_chars": 50}, {"path": "notes.md"}]}]}
```"#;
    let plan = parse(reply, &[], &StepLedger::default()).unwrap();
    assert!(!plan.done);
    assert_eq!(plan.dispatch.len(), 1);
    assert_eq!(plan.dispatch[0].artifacts.len(), 2);
    assert_eq!(plan.task.artifacts.len(), 2);
    assert_eq!(
        plan.task.artifacts[0].min_chars, 50,
        "the stricter rule holds"
    );
    assert!(work_prompt(&plan.dispatch[0]).contains("notes.md"));
}

#[test]
fn a_supervisor_adding_a_command_is_refused_wherever_it_hides() {
    for reply in [
        r#"{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "p", "run": "rm -rf ."}]}"#,
        r#"{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "p",
            "artifacts": [{"path": "x", "checks": [{"run": "true"}]}]}]}"#,
    ] {
        let faults = parse(reply, &[], &StepLedger::default()).unwrap_err();
        assert!(faults[0].contains("never a command"), "{faults:?}");
    }
}

#[test]
fn every_fault_of_a_plan_is_named() {
    let mut ledger = StepLedger::default();
    ledger.record("old", Verdict::Accepted(Evidence::default()));
    let reply = r#"{"dispatch": [
        {"to": "worker-9", "step": "a", "prompt": "p"},
        {"to": "worker-1", "step": "old", "prompt": "p"},
        {"to": "worker-2", "step": "final", "prompt": "p"},
        {"to": "worker-1", "step": "b c", "prompt": "p"},
        {"to": "worker-1", "step": "b", "prompt": "p", "artifacts": [{"path": "../x"}]}]}"#;
    let faults = parse(reply, &[], &ledger).unwrap_err();
    assert_eq!(faults.len(), 5, "{faults:?}");
    assert!(faults[0].contains("not a worker"));
    assert!(faults[1].contains("already accepted"));
    assert!(faults[2].contains("reserved"));
    assert!(faults[3].contains("letters"));
    assert!(faults[4].contains("../x"), "{}", faults[4]);
}

#[test]
fn a_busy_or_repeated_worker_an_empty_plan_and_prose_are_refused() {
    let two = r#"{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "p"},
                              {"to": "worker-1", "step": "b", "prompt": "p"}]}"#;
    assert!(parse(two, &[], &StepLedger::default()).unwrap_err()[0].contains("already has"));
    let one = r#"{"dispatch": [{"to": "worker-2", "step": "a", "prompt": "p"}]}"#;
    assert!(
        parse(one, &["worker-2".into()], &StepLedger::default()).unwrap_err()[0]
            .contains("already has")
    );
    assert!(parse("{}", &[], &StepLedger::default()).unwrap_err()[0].contains("nothing"));
    assert!(
        parse("Sure! Here is the plan.", &[], &StepLedger::default()).unwrap_err()[0]
            .contains("not one plan object")
    );
    let done = parse(r#"{"done": true}"#, &[], &StepLedger::default()).unwrap();
    assert!(done.done && done.dispatch.is_empty());
}

#[test]
fn the_kickoff_names_the_goal_the_workers_and_the_definition_of_done() {
    let text = kickoff(&task(), &workers(), "");
    assert!(text.contains("a report"));
    assert!(text.contains("worker-1, worker-2"));
    assert!(text.contains("r.md"));
    assert!(text.contains("\"done\": true"));
}

#[test]
fn a_pick_the_route_refuses_is_refused_with_its_reason() {
    let route = |to: &str, domain: Option<&str>, kind: Option<&str>| {
        if to == "worker-1" && domain == Some("docs") && kind == Some("write") {
            Ok(())
        } else {
            Err("not in the matrix".to_owned())
        }
    };
    let good = r#"{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "p", "domain": "docs", "task_type": "write"}]}"#;
    assert!(
        parse_plan(
            good,
            &task(),
            &workers(),
            &[],
            &StepLedger::default(),
            &route
        )
        .is_ok()
    );
    let bad = r#"{"dispatch": [{"to": "worker-2", "step": "a", "prompt": "p", "domain": "docs", "task_type": "write"}]}"#;
    let faults = parse_plan(
        bad,
        &task(),
        &workers(),
        &[],
        &StepLedger::default(),
        &route,
    )
    .unwrap_err();
    assert!(
        faults[0].contains("worker-2 may not take step \"a\": not in the matrix"),
        "{faults:?}"
    );
}
