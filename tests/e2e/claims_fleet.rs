//! A fleet's workers with claims (issue 10): each worker works on its own
//! claim's branch in its own worktree, the daemon judges its step there
//! and the whole task across the worktrees, the board shows the workers'
//! lanes, a fleet whose claims break a rule starts nothing, and a real
//! Claude Code worker's turns and handoff note become run records.

use std::path::Path;
use std::time::Duration;

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, wait_until, write_executable};
use serde_json::Value;

use crate::claims::{add, daemon_and_repo, git};
use crate::lanes::code;

/// Dispatches `a.md` to worker-1 and `b.md` to worker-2; done once the
/// round's steps were accepted.
const SUPERVISOR: &str = r#"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"was accepted"*) echo '{"done": true}' ;;
  *) echo '{"dispatch": [
        {"to": "worker-1", "step": "a", "prompt": "write a.md", "artifacts": [{"path": "a.md", "contains": ["claim fix-a"]}]},
        {"to": "worker-2", "step": "b", "prompt": "write b.md", "artifacts": [{"path": "b.md", "contains": ["claim fix-b"]}]}]}' ;;
esac
"#;

/// Writes the file its prompt names with the claim its prompt names, and
/// commits it on the branch it is on.
const WORKER: &str = r#"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"write a.md"*) f=a.md ;;
  *) f=b.md ;;
esac
printf '%s\n' "$prompt" | grep -o 'claim fix-[ab]' | head -n 1 > "$f"
pwd >> "$f"
git add "$f" && git commit -q -m "$f"
echo "committed $f"
"#;

/// Every artifact, and every claim's worktree committed clean.
const TASK: &str = r#"{"goal": "two fixes",
  "artifacts": [{"path": "a.md", "contains": ["claim fix-a"]}, {"path": "b.md", "contains": ["claim fix-b"]}],
  "checks": [{"run": "git diff --quiet HEAD"}]}"#;

fn fleet_args<'a>(home: &'a TestHome, repo: &'a str, extra: &[&'a str]) -> Vec<String> {
    let file = |name: &str| home.path().join(name).display().to_string();
    let mut args: Vec<String> = [
        "fleet",
        "start",
        "gov",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
    ]
    .map(String::from)
    .to_vec();
    args.push(file("sup.sh"));
    args.extend(["--workers", "2", "--worker-cli", "exec", "--worker-cmd"].map(String::from));
    args.push(file("work.sh"));
    args.extend(["--task".into(), file("task.json"), "-C".into(), repo.into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn governed_fleet(policy: &str) -> (TestHome, std::path::PathBuf) {
    let (home, repo, _remote) = daemon_and_repo(Some(policy));
    write_executable(&home.path().join("sup.sh"), SUPERVISOR);
    write_executable(&home.path().join("work.sh"), WORKER);
    std::fs::write(home.path().join("task.json"), TASK).expect("task");
    assert_eq!(add(&home, &repo, "Fix A"), "fix-a");
    assert_eq!(add(&home, &repo, "Fix B"), "fix-b");
    (home, repo)
}

fn claim_of<'a>(board: &'a Value, id: &str) -> &'a Value {
    board["claims"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no claim {id}: {board}"))
}

#[test]
fn each_worker_commits_in_its_claims_worktree_and_the_daemon_judges_there() {
    let (home, repo) = governed_fleet("concurrency = 2\n");
    let r = repo.display().to_string();
    let args = fleet_args(&home, &r, &["--claim", "fix-a", "--claim", "fix-b"]);
    let started = home.json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(started["schema"], "flotilla.fleet.v1", "{started}");
    let mut status = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(90), || {
        status = home.json(&["fleet", "status", "gov"]);
        status["state"] != "running" && status["state"] != "planning"
    });
    assert_eq!(status["state"], "completed", "{status}");
    assert_eq!(status["members"][1]["claim"], "fix-a", "{status}");
    assert_eq!(status["members"][2]["claim"], "fix-b", "{status}");
    let text = home.ok(&["fleet", "status", "gov"]);
    assert!(
        text.contains("worker-2 works on claim fix-b (branch flotilla/fix-b)"),
        "{text}"
    );

    let board = home.json(&["board", &r]);
    for (id, file, other, lane) in [
        ("fix-a", "a.md", "b.md", "gov-worker-1"),
        ("fix-b", "b.md", "a.md", "gov-worker-2"),
    ] {
        let claim = claim_of(&board, id);
        assert!(claim["lane"].to_string().contains(lane), "{board}");
        let shown = home.json(&["claim", "show", id, "-C", &r]);
        let worktree = shown["claim"]["worktree"].as_str().expect("worktree");
        let text = std::fs::read_to_string(Path::new(worktree).join(file)).expect("artifact");
        assert!(text.starts_with(&format!("claim {id}\n")), "{text}");
        assert!(text.contains(worktree), "written in the worktree: {text}");
        assert!(
            !Path::new(worktree).join(other).exists(),
            "{id} saw {other}"
        );
        let branch = format!("flotilla/{id}");
        let changed = git(
            &repo,
            &[
                "log",
                "--name-only",
                "--format=",
                &format!("main..{branch}"),
            ],
        );
        assert_eq!(changed, file, "{branch} holds its worker's commit only");
    }
    for file in ["a.md", "b.md"] {
        assert!(
            !repo.join(file).exists(),
            "{file} reached the main checkout"
        );
    }
}

#[test]
fn a_fleet_whose_claims_break_a_rule_starts_nothing() {
    let (home, repo) = governed_fleet("concurrency = 1\n");
    let r = repo.display().to_string();
    let start = |extra: &[&str]| {
        let args = fleet_args(&home, &r, extra);
        code(&home, &args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (c, v) = start(&["--claim", "fix-a", "--claim", "fix-b"]);
    assert_eq!(c, 6, "two claims at once over a concurrency of 1: {v}");
    assert!(v["error"].to_string().contains("concurrency of 1"), "{v}");
    let (c, v) = start(&["--claim", "fix-a", "--claim", "fix-a"]);
    assert_eq!(c, 2, "one claim for two workers: {v}");
    assert!(v["error"].to_string().contains("two workers"), "{v}");
    let (c, v) = start(&["--claim", "no-such"]);
    assert_eq!(c, 4, "{v}");
    let (c, v) = start(&["--claim", "Not An Id"]);
    assert_eq!(c, 2, "{v}");
    assert!(v["error"].to_string().contains("not a claim id"), "{v}");
    let (c, v) = start(&["--claim", "fix-a", "--claim", "fix-b", "--claim", "fix-c"]);
    assert_eq!(c, 2, "three claims for two workers: {v}");
    let (c, v) = start(&["--claim", "fix-a", "--worker-permissions", "bypass"]);
    assert_eq!(
        c, 5,
        "above the policy's ceiling, refused before any turn: {v}"
    );
    assert!(
        v["error"]
            .to_string()
            .contains("at most --permissions default"),
        "{v}"
    );
    let sub = repo.join("sub");
    std::fs::create_dir_all(&sub).expect("sub");
    let sub = sub.display().to_string();
    let args = fleet_args(&home, &sub, &["--claim", "fix-a"]);
    let (c, v) = code(&home, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(c, 2, "-C inside the repository: {v}");
    assert!(v["error"].to_string().contains(&format!("-C {r}")), "{v}");
    let lanes = home.json(&["lane", "list"]);
    assert_eq!(lanes["lanes"].as_array().map(Vec::len), Some(0), "{lanes}");
    let board = home.json(&["board", &r]);
    assert_eq!(claim_of(&board, "fix-a")["status"], "open", "{board}");
}

/// Dispatches step `a`, then step `b`, to worker-1 (one per round), then
/// says done; counts its turns in `COUNT`.
const TWO_ROUNDS: &str = r#"#!/bin/sh
cat > /dev/null
n=$(cat COUNT 2>/dev/null || echo 0); n=$((n+1)); echo $n > COUNT
case $n in
  1) echo '{"dispatch": [{"to": "worker-1", "step": "a", "prompt": "say a"}]}' ;;
  2) echo '{"dispatch": [{"to": "worker-1", "step": "b", "prompt": "say b"}]}' ;;
  *) echo '{"done": true}' ;;
esac
"#;

#[test]
fn a_claude_worker_on_a_claim_edits_without_a_shell_and_its_turns_and_handoff_are_run_records() {
    let server = ModelServer::start(Script::default());
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    let mut home = TestHome::new();
    home.env.extend(env.env());
    // workspace for claude is acceptEdits: edits, no shell (the sandbox rule holds).
    std::fs::write(
        home.path().join("policy.toml"),
        "[cli.claude]\npermissions = \"workspace\"\n",
    )
    .expect("policy");
    home.spawn_daemon("laptop");
    let (repo, _) = crate::claims::repo_with_remote(home.path());
    let r = repo.display().to_string();
    assert_eq!(add(&home, &repo, "Feature"), "feature");
    // An exec lane makes the claim's worktree (so its path is known), then goes.
    home.ok(&[
        "lane", "run", "--cli", "exec", "-n", "maker", "-C", &r, "--claim", "feature", "--prompt",
        "x", "--", "true",
    ]);
    home.ok(&["lane", "rm", "maker", "--force"]);
    let shown = home.json(&["claim", "show", "feature", "-C", &r]);
    let worktree = std::path::PathBuf::from(shown["claim"]["worktree"].as_str().expect("worktree"));
    let note = "## Done\nNOTE-MARK said a\n## In progress\nnothing\n## Next\nsay b";
    for reply in [
        Reply::WriteFile {
            path: worktree.join("notes.md"),
            content: "NOTES-MARK\n".into(),
        },
        Reply::text("SUMMARY-MARK a"),
        Reply::text(note),
        Reply::text("said b"),
    ] {
        server.push(reply);
    }
    let sup = home.path().join("sup.sh");
    write_executable(
        &sup,
        &TWO_ROUNDS.replace("COUNT", &home.path().join("count").display().to_string()),
    );
    std::fs::write(
        home.path().join("task.json"),
        r#"{"goal": "say a, then b"}"#,
    )
    .expect("task");
    let task = home.path().join("task.json").display().to_string();
    let sup = sup.display().to_string();
    home.json(&[
        "fleet",
        "start",
        "gov",
        "--supervisor",
        "exec",
        "--supervisor-cmd",
        &sup,
        "--workers",
        "1",
        "--worker-cli",
        "claude",
        "-m",
        default_model(CliKind::Claude),
        "--worker-permissions",
        "workspace",
        "--claim",
        "feature",
        "--rotate-at",
        "0.0001",
        "--task",
        &task,
        "-C",
        &r,
    ]);
    let mut status = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(120), || {
        status = home.json(&["fleet", "status", "gov"]);
        status["state"] != "running" && status["state"] != "planning"
    });
    assert_eq!(status["state"], "completed", "{status}");
    assert_eq!(
        server.model_requests().len(),
        4,
        "the write, a, the note, b"
    );

    let committed = git(
        &repo,
        &[
            "log",
            "-1",
            "--format=%an",
            "flotilla/feature",
            "--",
            "notes.md",
        ],
    );
    assert_eq!(
        committed, "laptop/gov-worker-1",
        "the daemon committed claude's edit as its lane"
    );
    assert_eq!(
        git(&repo, &["show", "flotilla/feature:notes.md"]),
        "NOTES-MARK"
    );
    let mut records = String::new();
    wait_until("the handoff's run record", Duration::from_secs(30), || {
        records = git(&repo, &["log", "--format=%B", "refs/flotilla/records"]);
        records.contains("\"kind\":\"handoff\"")
    });
    assert!(
        records.contains("NOTE-MARK said a")
            && records.contains("\"lane\":\"laptop/gov-worker-1\""),
        "{records}"
    );
    assert!(
        records.contains("\"summary\":\"SUMMARY-MARK a\""),
        "the turn's summary: {records}"
    );
    let shown = home.ok(&["claim", "show", "feature", "-C", &r]);
    assert!(
        shown.contains("handed over to a fresh session with its own note"),
        "{shown}"
    );
}
