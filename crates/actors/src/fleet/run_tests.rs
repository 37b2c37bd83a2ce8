#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::*;
use crate::fleet::acceptance::Shortfall;
use crate::fleet::budget::BudgetCard;

pub(crate) struct Fixture {
    workers: Vec<String>,
    accounts: BTreeMap<String, String>,
    budget: BudgetCard,
    max_busy: Option<usize>,
    pub(crate) chains: BTreeMap<String, Vec<String>>,
    pub(crate) now_ms: u64,
    picks: BTreeMap<String, (crate::lane::CliKind, Option<String>)>,
    matrix: Vec<crate::fleet::matrix::CapabilityCell>,
}

impl Fixture {
    pub(crate) fn new(n: usize) -> Self {
        let workers: Vec<String> = (1..=n).map(|i| format!("worker-{i}")).collect();
        let mut accounts: BTreeMap<String, String> =
            workers.iter().map(|w| (w.clone(), "exec".into())).collect();
        accounts.insert(SUPERVISOR.into(), "claude".into());
        Self {
            workers,
            accounts,
            budget: BudgetCard::default(),
            max_busy: None,
            chains: BTreeMap::new(),
            now_ms: 1,
            picks: BTreeMap::new(),
            matrix: Vec::new(),
        }
    }

    pub(crate) fn rules(&self) -> Rules<'_> {
        Rules {
            workers: &self.workers,
            accounts: &self.accounts,
            max_busy: self.max_busy,
            budget: &self.budget,
            elapsed: Duration::from_secs(1),
            now_ms: self.now_ms,
            rotate_at_pct: 60.0,
            rotate_now_at_pct: 90.0,
            chains: &self.chains,
            wall_wait_ms: 60_000,
            matrix: &self.matrix,
            picks: &self.picks,
        }
    }
}

pub(crate) fn task() -> Task {
    Task::parse(r#"{"goal": "a report", "artifacts": [{"path": "r.md"}]}"#).unwrap()
}

pub(crate) fn ok(text: &str) -> TurnEnd {
    TurnEnd {
        ok: true,
        text: text.into(),
        tokens: 10,
        ..TurnEnd::default()
    }
}

fn roles(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Run { role, .. } => Some(role.clone()),
            _ => None,
        })
        .collect()
}

pub(crate) fn prompt_of(actions: &[Action], who: &str) -> String {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Run { role, prompt, .. } if role == who => Some(prompt.clone()),
            _ => None,
        })
        .unwrap()
}

pub(crate) const ONE_STEP: &str = r#"{"dispatch": [{"to": "worker-1", "step": "s1", "prompt": "write r.md",
    "artifacts": [{"path": "r.md", "contains": ["Conclusion"]}]}]}"#;

fn missing() -> Verdict {
    Verdict::Bounced(vec![Shortfall::Missing {
        path: "r.md".into(),
    }])
}

#[test]
fn a_round_runs_from_the_plan_to_the_daemons_acceptance() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    let a = run.give(task(), &f.rules()).unwrap();
    assert!(prompt_of(&a, SUPERVISOR).contains("a report"));
    run.started(SUPERVISOR, 1);
    let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    assert!(prompt_of(&a, "worker-1").contains("Conclusion"));
    let a = run.ended("worker-1", ok("written"), &f.rules());
    let [Action::Judge { step, task }] = a.as_slice() else {
        panic!("{a:?}")
    };
    assert_eq!(step, "s1");
    assert!(task.checks.is_empty(), "a step is judged on its artifacts");
    let a = run.judged("s1", Verdict::Accepted(Evidence::default()), &f.rules());
    assert!(prompt_of(&a, SUPERVISOR).contains("step s1 (worker-1) was accepted"));
    let a = run.ended(SUPERVISOR, ok(r#"{"done": true}"#), &f.rules());
    let [Action::Judge { step, task }] = a.as_slice() else {
        panic!("{a:?}")
    };
    assert_eq!(step, "final");
    assert_eq!(
        task.artifacts[0].contains,
        vec!["Conclusion"],
        "additions kept"
    );
    let a = run.judged("final", Verdict::Accepted(Evidence::default()), &f.rules());
    assert_eq!(a, vec![Action::Ended(TaskState::Completed)]);
    assert_eq!(run.spent.model_calls, 3);
    assert_eq!(run.spent.rounds, 2);
    assert_eq!(run.spent.tokens, 30);
    assert!(run.idle());
}

#[test]
fn a_missing_artifact_bounces_with_its_reason_three_times_then_blocks() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    for bounce in 1..=2 {
        run.ended("worker-1", ok("done"), &f.rules());
        let a = run.judged("s1", missing(), &f.rules());
        let prompt = prompt_of(&a, "worker-1");
        assert!(
            prompt.contains(&format!("bounce {bounce} of 3")),
            "{prompt}"
        );
        assert!(prompt.contains("r.md does not exist"), "{prompt}");
    }
    run.ended("worker-1", ok("done"), &f.rules());
    let a = run.judged("s1", missing(), &f.rules());
    assert_eq!(a, vec![Action::Ended(TaskState::Blocked)]);
    assert!(run.log.last().unwrap().text.contains("r.md does not exist"));
    assert!(run.idle());
}

#[test]
fn a_failed_worker_turn_bounces_with_its_error_class() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    let failed = TurnEnd {
        text: "400 bad request".into(),
        class: Some("model_error".into()),
        ..TurnEnd::default()
    };
    let a = run.ended("worker-1", failed, &f.rules());
    assert!(prompt_of(&a, "worker-1").contains("the turn failed (model_error)"));
}

#[test]
fn a_budget_of_three_calls_stops_the_fourth_dispatch_before_it_happens() {
    let mut f = Fixture::new(2);
    f.budget.model_calls = Some(3);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let two = r#"{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "p"},
                              {"to": "worker-2", "step": "b", "prompt": "p"}]}"#;
    let a = run.ended(SUPERVISOR, ok(two), &f.rules());
    assert_eq!(roles(&a), vec!["worker-1", "worker-2"]);
    run.ended("worker-1", ok("done"), &f.rules());
    let a = run.ended("worker-2", ok("done"), &f.rules());
    let [Action::Paused(reason)] = a.as_slice() else {
        panic!("{a:?}")
    };
    assert!(reason.contains("3 model calls"), "{reason}");
    assert_eq!(run.spent.model_calls, 3);
    assert_eq!(run.ledger.state, TaskState::OutOfBudget);
    f.budget.model_calls = Some(10);
    let a = run.resume(&f.rules());
    assert_eq!(roles(&a), vec![SUPERVISOR]);
    assert_eq!(run.ledger.state, TaskState::Running);
}

#[test]
fn max_busy_holds_turns_until_one_ends() {
    let mut f = Fixture::new(2);
    f.max_busy = Some(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let two = r#"{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "p"},
                              {"to": "worker-2", "step": "b", "prompt": "p"}]}"#;
    let a = run.ended(SUPERVISOR, ok(two), &f.rules());
    assert_eq!(roles(&a), vec!["worker-1"]);
    let a = run.ended("worker-1", ok("done"), &f.rules());
    assert_eq!(roles(&a), vec!["worker-2"]);
}

#[test]
fn a_saved_run_continues_and_never_accepts_a_step_twice() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    run.started("worker-1", 4);
    let saved = serde_json::to_string(&run).unwrap();
    let mut back: FleetRun = serde_json::from_str(&saved).unwrap();
    assert_eq!(back, run);
    assert_eq!(back.working["worker-1"].turn, Some(4));
    back.ended("worker-1", ok("done"), &f.rules());
    back.judged("s1", Verdict::Accepted(Evidence::default()), &f.rules());
    assert!(back.judged("s1", missing(), &f.rules()).is_empty());
    assert!(back.ledger.steps["s1"].accepted.is_some());
}

#[test]
fn three_refused_plans_block_the_task_and_a_second_task_waits_for_the_first() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    assert!(run.give(task(), &f.rules()).is_err());
    for _ in 0..2 {
        let a = run.ended(SUPERVISOR, ok("I will think about it."), &f.rules());
        assert!(prompt_of(&a, SUPERVISOR).contains("refused"));
    }
    let a = run.ended(SUPERVISOR, ok("still prose"), &f.rules());
    assert_eq!(a, vec![Action::Ended(TaskState::Blocked)]);
    assert!(
        run.give(task(), &f.rules()).is_ok(),
        "a new task may follow"
    );
}

fn fresh_of(actions: &[Action], who: &str) -> bool {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Run { role, fresh, .. } if role == who => Some(*fresh),
            _ => None,
        })
        .unwrap()
}

fn full(text: &str) -> TurnEnd {
    TurnEnd {
        context_used_pct: Some(75.0),
        ..ok(text)
    }
}

#[test]
fn a_member_past_the_threshold_hands_over_to_a_fresh_session_with_its_note() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let a = run.ended(SUPERVISOR, full(ONE_STEP), &f.rules());
    assert!(!fresh_of(&a, "worker-1"));
    run.ended("worker-1", ok("written"), &f.rules());
    let a = run.judged("s1", Verdict::Accepted(Evidence::default()), &f.rules());
    let ask = prompt_of(&a, SUPERVISOR);
    assert!(
        ask.contains("handoff note"),
        "the note is asked for first: {ask}"
    );
    assert!(
        !fresh_of(&a, SUPERVISOR),
        "the note comes from the old session"
    );
    run.started(SUPERVISOR, 2);
    let note = "## Done\nplanned s1\n## In progress\nnothing\n## Next\nsay done";
    let a = run.ended(SUPERVISOR, full(note), &f.rules());
    let first = prompt_of(&a, SUPERVISOR);
    assert!(fresh_of(&a, SUPERVISOR), "the successor is a fresh session");
    assert!(first.contains("your predecessor in this role"), "{first}");
    assert!(first.contains("planned s1"), "{first}");
    assert!(
        first.contains("step s1 (worker-1) was accepted"),
        "the held turn follows: {first}"
    );
    assert_eq!(run.handoffs.len(), 1);
    assert!(run.handoffs[0].note.from_member);
    assert!(
        run.rotate.is_empty(),
        "the note turn's own context does not rotate again"
    );
    let a = run.ended(SUPERVISOR, ok(r#"{"done": true}"#), &f.rules());
    assert!(matches!(a.as_slice(), [Action::Judge { .. }]), "{a:?}");
    assert_eq!(run.spent.model_calls, 4, "the note request is a model call");
}

#[test]
fn with_no_note_the_daemons_skeleton_starts_the_successor() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    let a = run.ended("worker-1", full("done"), &f.rules());
    assert!(matches!(a.as_slice(), [Action::Judge { .. }]));
    let a = run.judged("s1", missing(), &f.rules());
    assert!(prompt_of(&a, "worker-1").contains("handoff note"));
    let a = run.ended("worker-1", ok("I would rather not."), &f.rules());
    let first = prompt_of(&a, "worker-1");
    assert!(fresh_of(&a, "worker-1"));
    assert!(first.contains("left no note"), "{first}");
    assert!(first.contains("## In progress\ns1"), "{first}");
    assert!(
        first.contains("bounce 1 of 3"),
        "the bounced step follows: {first}"
    );
    assert!(!run.handoffs[0].note.from_member);
    assert!(
        run.working["worker-1"].fresh,
        "saved, for a restart mid-turn"
    );
}

fn spec() -> crate::fleet::reply::ReplySpec {
    serde_json::from_str(r#"{"required": ["verdict"], "allowed": {"verdict": ["ok", "bad"]}}"#)
        .unwrap()
}

#[test]
fn a_service_reply_is_checked_bounced_with_its_faults_then_passes() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    let body = serde_json::json!({"review": "x"});
    let (id, a) = run
        .request(Some("worker-1".into()), body, spec(), &f.rules())
        .unwrap();
    assert!(prompt_of(&a, "worker-1").contains("verdict may only be one of"));
    let a = run.ended("worker-1", ok(r#"{"verdict": "maybe"}"#), &f.rules());
    let again = prompt_of(&a, "worker-1");
    assert!(
        again.contains("refused") && again.contains("\"maybe\""),
        "{again}"
    );
    let a = run.ended(
        "worker-1",
        ok("```json\n{\"verdict\": \"ok\"}\n```"),
        &f.rules(),
    );
    let [Action::Answered(got, crate::fleet::service::Answer::Passed { reply, bounces })] =
        a.as_slice()
    else {
        panic!("{a:?}")
    };
    assert_eq!((*got, *bounces), (id, 1));
    assert_eq!(reply["verdict"], "ok");
    assert!(run.idle());
}

#[test]
fn a_third_bad_reply_fails_the_request_and_an_unknown_member_is_refused() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    assert!(
        run.request(
            Some("worker-7".into()),
            serde_json::json!({}),
            spec(),
            &f.rules()
        )
        .is_err()
    );
    let (id, _) = run
        .request(None, serde_json::json!({}), spec(), &f.rules())
        .unwrap();
    run.ended(SUPERVISOR, ok("{}"), &f.rules());
    run.ended(SUPERVISOR, ok("no"), &f.rules());
    let a = run.ended(SUPERVISOR, ok(r#"{"other": 1}"#), &f.rules());
    let [Action::Answered(got, crate::fleet::service::Answer::Failed(faults))] = a.as_slice()
    else {
        panic!("{a:?}")
    };
    assert_eq!(*got, id);
    assert!(faults[0].contains("verdict"), "{faults:?}");
}

#[test]
fn requests_run_beside_a_task_and_after_it_ended() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    run.give(task(), &f.rules()).unwrap();
    let (_, a) = run
        .request(
            Some("worker-1".into()),
            serde_json::json!({}),
            spec(),
            &f.rules(),
        )
        .unwrap();
    assert_eq!(
        roles(&a),
        vec!["worker-1"],
        "the worker is free while the supervisor plans"
    );
    let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    assert!(
        roles(&a).is_empty(),
        "the step waits for the worker's request"
    );
    let a = run.ended("worker-1", ok(r#"{"verdict": "bad"}"#), &f.rules());
    assert!(matches!(a[0], Action::Answered(..)), "{a:?}");
    assert_eq!(roles(&a), vec!["worker-1"], "then the step starts");
}

#[test]
fn with_a_capability_matrix_a_pick_it_does_not_support_bounces_the_plan() {
    let mut f = Fixture::new(1);
    f.picks
        .insert("worker-1".into(), (crate::lane::CliKind::Exec, None));
    f.matrix.push(crate::fleet::matrix::CapabilityCell {
        domain: "docs".into(),
        task: "write".into(),
        cli: crate::lane::CliKind::Exec,
        model: None,
        evidence: "tests/e2e/fleet_run.rs".into(),
    });
    let mut run = FleetRun::default();
    let a = run.give(task(), &f.rules()).unwrap();
    assert!(prompt_of(&a, SUPERVISOR).contains("- worker-1 (exec): docs × write"));
    let a = run.ended(SUPERVISOR, ok(ONE_STEP), &f.rules());
    assert!(prompt_of(&a, SUPERVISOR).contains("name the step's domain and task"));
    let routed = r#"{"dispatch": [{"to": "worker-1", "step": "s1", "prompt": "p",
        "domain": "docs", "task_type": "write"}]}"#;
    let a = run.ended(SUPERVISOR, ok(routed), &f.rules());
    assert_eq!(roles(&a), vec!["worker-1"]);
}

#[test]
fn a_turn_the_daemon_lost_runs_again_and_is_no_bounce() {
    let f = Fixture::new(1);
    let mut run = FleetRun::default();
    let a = run.give(task(), &f.rules()).unwrap();
    let kickoff = prompt_of(&a, SUPERVISOR);
    let lost = TurnEnd {
        text: "the daemon stopped before the turn's process started".into(),
        lost: true,
        ..TurnEnd::default()
    };
    let a = run.ended(SUPERVISOR, lost, &f.rules());
    assert_eq!(prompt_of(&a, SUPERVISOR), kickoff);
    assert!(run.ledger.steps.is_empty(), "{:?}", run.ledger);
}
