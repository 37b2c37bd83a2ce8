//! Claims (issue 10): each claim's lane works in its own branch and
//! worktree, a push to a protected branch is refused by the worktree's own
//! hook, the policy's concurrency and permission ceiling hold, and a fresh
//! host with only a clone rebuilds the board from the run records.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

/// Runs git in `dir`, which must succeed; returns its stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A repository with one commit on `main`, pushed to a bare `origin`.
pub(crate) fn repo_with_remote(root: &Path) -> (PathBuf, PathBuf) {
    let (repo, remote) = (root.join("repo"), root.join("origin.git"));
    std::fs::create_dir_all(&repo).expect("repo dir");
    git(
        root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &remote.display().to_string(),
        ],
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "hello\n").expect("file");
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    git(
        &repo,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    git(&repo, &["push", "-q", "origin", "main"]);
    (repo, remote)
}

pub(crate) fn daemon_and_repo(policy: Option<&str>) -> (TestHome, PathBuf, PathBuf) {
    let mut home = TestHome::new();
    if let Some(policy) = policy {
        std::fs::write(home.path().join("policy.toml"), policy).expect("policy");
    }
    home.spawn_daemon("laptop");
    let (repo, remote) = repo_with_remote(home.path());
    (home, repo, remote)
}

pub(crate) fn add(home: &TestHome, repo: &Path, title: &str) -> String {
    let v = home.json(&["claim", "add", &repo.display().to_string(), title]);
    assert_eq!(v["schema"], "flotilla.claim.v1", "{v}");
    v["claim"]["id"].as_str().expect("id").to_owned()
}

/// A lane on `claim` that writes FILE, waits for `go` (so two run at once),
/// commits, tries to push to main and then its own branch; the exits go to
/// files in `out`.
fn start_claim_lane(home: &TestHome, repo: &Path, claim: &str, out: &Path) {
    let script = format!(
        "pwd > {o}/{c}.pwd; echo {c} > {c}.txt; \
         for i in $(seq 200); do [ -e {o}/go ] && break; sleep 0.1; done; \
         git add {c}.txt && git -c user.name=L -c user.email=l@x commit -qm {c}; \
         git push origin HEAD:main 2> {o}/{c}.main.err; echo $? > {o}/{c}.main; \
         git push -q origin HEAD; echo $? > {o}/{c}.own",
        o = out.display(),
        c = claim
    );
    let repo = repo.display().to_string();
    home.ok(&claim_lane(
        "start",
        &repo,
        claim,
        &["-n", claim],
        &["sh", "-c", &script],
    ));
}

/// `lane VERB --cli exec FLAGS -C REPO --claim ID --prompt x -- CMD`.
pub(crate) fn claim_lane<'a>(
    verb: &'a str,
    repo: &'a str,
    id: &'a str,
    flags: &[&'a str],
    cmd: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["lane", verb, "--cli", "exec"];
    args.extend_from_slice(flags);
    args.extend(["-C", repo, "--claim", id, "--prompt", "x", "--"]);
    args.extend_from_slice(cmd);
    args
}

/// Waits until claim `id` has the run record of its lane's last turn
/// (written in the background once the turn's notice is out).
pub(crate) fn wait_turn_record(home: &TestHome, repo: &str, id: &str) {
    wait_until("the turn's run record", Duration::from_secs(30), || {
        home.json(&["claim", "show", id, "-C", repo])["claim"]["last_turn"].is_string()
    });
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

#[test]
fn two_claims_run_at_once_in_their_own_worktrees_and_a_push_to_main_is_refused() {
    let (home, repo, remote) = daemon_and_repo(Some("concurrency = 2\n"));
    let out = home.path().join("out");
    std::fs::create_dir_all(&out).expect("out");
    let (a, b) = (
        add(&home, &repo, "Context meter"),
        add(&home, &repo, "Flaky test"),
    );
    assert_eq!((a.as_str(), b.as_str()), ("context-meter", "flaky-test"));
    start_claim_lane(&home, &repo, &a, &out);
    start_claim_lane(&home, &repo, &b, &out);
    // Both lanes are running, each waiting in its own worktree.
    wait_until(
        "both lanes in their worktrees",
        Duration::from_secs(30),
        || out.join(format!("{a}.pwd")).exists() && out.join(format!("{b}.pwd")).exists(),
    );
    let (pa, pb) = (
        read(&out.join(format!("{a}.pwd"))),
        read(&out.join(format!("{b}.pwd"))),
    );
    assert_ne!(pa, pb);
    let board = home.json(&["board", &repo.display().to_string()]);
    let running = board["claims"].as_array().expect("claims").iter();
    assert_eq!(
        running.filter(|c| c["lane_phase"] == "running").count(),
        2,
        "{board}"
    );
    // A third claim waits for the policy's concurrency.
    let c = add(&home, &repo, "Third");
    let err = home.fails(
        &claim_lane("run", &repo.display().to_string(), &c, &[], &["true"]),
        6,
    );
    assert!(err.contains("concurrency of 2"), "{err}");

    std::fs::write(out.join("go"), "").expect("go");
    for claim in [&a, &b] {
        wait_until("the lane pushed", Duration::from_secs(30), || {
            out.join(format!("{claim}.own")).exists()
        });
        assert_eq!(
            read(&out.join(format!("{claim}.main"))),
            "1",
            "the push to main was refused"
        );
        let why = read(&out.join(format!("{claim}.main.err")));
        assert!(
            why.contains("refusing to push to main: it is protected"),
            "{why}"
        );
        assert_eq!(
            read(&out.join(format!("{claim}.own"))),
            "0",
            "its own branch is pushed"
        );
        let files = git(
            &remote,
            &["ls-tree", "--name-only", &format!("flotilla/{claim}")],
        );
        assert_eq!(
            files.lines().collect::<Vec<_>>(),
            ["README", &format!("{claim}.txt")]
        );
    }
    assert_eq!(
        git(&remote, &["rev-list", "--count", "main"]),
        "1",
        "main is untouched"
    );
    assert_eq!(
        git(&repo, &["status", "--porcelain"]),
        "",
        "the checkout is untouched"
    );
}

#[test]
fn a_claims_worktree_holds_one_lane_and_is_gone_when_the_claim_is_dropped() {
    let (home, repo, _) = daemon_and_repo(None);
    let id = add(&home, &repo, "One lane only");
    let r = repo.display().to_string();
    home.ok(&claim_lane(
        "run",
        &r,
        &id,
        &["-n", "first", "--persistent"],
        &["true"],
    ));
    wait_turn_record(&home, &r, &id);
    let err = home.fails(&claim_lane("run", &r, &id, &[], &["true"]), 6);
    assert!(
        err.contains("worktree is lane laptop/first's") && err.contains("lane resume first"),
        "{err}"
    );
    let shown = home.json(&["claim", "show", &id, "-C", &r]);
    let worktree = shown["claim"]["worktree"]
        .as_str()
        .expect("worktree")
        .to_owned();
    assert!(Path::new(&worktree).join(".git").exists(), "{shown}");
    let err = home.fails(
        &[
            "lane", "run", "--cli", "exec", "-C", &worktree, "--prompt", "x", "--", "true",
        ],
        6,
    );
    assert!(
        err.contains("must take the claim") && err.contains(&format!("--claim {id}")),
        "{err}"
    );

    home.ok(&["lane", "rm", "first", "--force"]);
    let dropped = home.json(&["claim", "drop", &id, "-C", &r]);
    assert_eq!(dropped["claim"]["status"], "dropped", "{dropped}");
    assert!(!Path::new(&worktree).exists(), "the worktree is removed");
    let history: Vec<&str> = dropped["history"]
        .as_array()
        .expect("history")
        .iter()
        .filter_map(|h| h["kind"].as_str())
        .collect();
    assert_eq!(history, ["claim", "lane", "turn", "drop"]);
    let err = home.fails(&claim_lane("run", &r, &id, &[], &["true"]), 6);
    assert!(err.contains("was dropped"), "{err}");
}

#[test]
fn claims_refuse_what_the_policy_or_the_repository_does_not_allow() {
    let (home, repo, _) = daemon_and_repo(None);
    let r = repo.display().to_string();
    let id = add(&home, &repo, "Careful");
    let err = home.fails(
        &claim_lane("run", &r, &id, &["--permissions", "bypass"], &["true"]),
        5,
    );
    assert!(
        err.contains("at most --permissions default") && err.contains("[cli.exec]"),
        "{err}"
    );
    let err = home.fails(&["claim", "show", "nope", "-C", &r], 4);
    assert!(
        err.contains("no claim nope") && err.contains("claim list"),
        "{err}"
    );
    let err = home.fails(&["claim", "show", "Bad Id", "-C", &r], 2);
    assert!(err.contains("not a claim id"), "{err}");
    let plain = home.path().join("plain");
    std::fs::create_dir_all(&plain).expect("dir");
    let err = home.fails(&["claim", "add", &plain.display().to_string(), "x"], 4);
    assert!(err.contains("not inside a git repository"), "{err}");
    std::fs::create_dir_all(repo.join(".flotilla")).expect("dir");
    std::fs::write(repo.join(".flotilla/policy.toml"), "concurency = 3\n").expect("policy");
    let err = home.fails(&["claim", "add", &r, "y"], 2);
    assert!(
        err.contains(".flotilla/policy.toml") && err.contains("concurency"),
        "{err}"
    );
}

/// The fields of a board a successor must see the same.
fn summary(board: &Value) -> Vec<Value> {
    let keys = [
        "id",
        "title",
        "branch",
        "base",
        "status",
        "lane",
        "cli",
        "last_turn",
        "head",
        "records",
        "added_at",
    ];
    let claims = board["claims"].as_array().expect("claims");
    claims
        .iter()
        .map(|c| keys.iter().map(|k| c[*k].clone()).collect())
        .collect()
}

#[test]
fn a_fresh_host_with_only_a_clone_rebuilds_the_board_from_the_run_records() {
    let (home, repo, remote) = daemon_and_repo(None);
    let r = repo.display().to_string();
    let kept = add(&home, &repo, "Kept claim");
    let gone = add(&home, &repo, "Gone claim");
    home.ok(&claim_lane("run", &r, &kept, &["-n", "worker"], &["true"]));
    wait_turn_record(&home, &r, &kept);
    home.ok(&["claim", "drop", &gone, "-C", &r]);
    let before = home.json(&["board", &r]);
    assert_eq!(before["records"], 5, "{before}");
    wait_until("the records are pushed", Duration::from_secs(30), || {
        let out = Command::new("git")
            .arg("-C")
            .arg(&remote)
            .args(["rev-list", "--count", "refs/flotilla/records"])
            .output();
        out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "5")
    });

    let mut fresh = TestHome::new();
    fresh.spawn_daemon("successor");
    let clone = fresh.path().join("clone");
    git(
        fresh.path(),
        &[
            "clone",
            "-q",
            &remote.display().to_string(),
            &clone.display().to_string(),
        ],
    );
    let c = clone.display().to_string();
    let empty = fresh.json(&["board", &c]);
    assert_eq!(
        empty["claims"],
        serde_json::json!([]),
        "a clone does not fetch the records: {empty}"
    );
    let rebuilt = fresh.json(&["board", "--rebuild", &c]);
    assert_eq!(rebuilt["fetched_from"], "origin", "{rebuilt}");
    assert_eq!(summary(&rebuilt), summary(&before));
    assert_eq!(rebuilt["claims"][0]["worktree_here"], false, "{rebuilt}");
    let text = fresh.ok(&["board", &c]);
    assert!(
        text.contains("worker") && text.contains("flotilla/kept-claim") && text.contains("dropped"),
        "{text}"
    );
}
