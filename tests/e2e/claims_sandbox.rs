//! The policy's sandbox rule (issue 10): a claim's lane runs only in a
//! mode where its CLI's commands are confined, unless the user's own
//! policy.toml turns that off for the CLI; a repository's file cannot. A
//! lane needs no shell to commit: what its completed turn leaves
//! uncommitted is committed for it, through the worktree's hooks.

use flotilla_tests::TestHome;

use crate::claims::{add, git, repo_with_remote};

fn claim_lane_of<'a>(cli: &'a str, repo: &'a str, id: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["lane", "run", "--cli", cli, "-C", repo, "--claim", id];
    args.extend_from_slice(flags);
    args.extend(["--prompt", "x"]);
    args
}

#[test]
fn a_claims_lane_runs_confined_unless_the_users_own_policy_says_otherwise() {
    let mut home = TestHome::new();
    // No vendor program runs here: each start that passes the rules stops
    // at the program, which is not installed.
    home.write_config("[clis]\npi = \"/nonexistent/pi\"\ngrok = \"/nonexistent/grok\"\n");
    home.spawn_daemon("laptop");
    let (repo, _) = repo_with_remote(home.path());
    let r = repo.display().to_string();
    let id = add(&home, &repo, "Confined");

    let err = home.fails(&claim_lane_of("pi", &r, &id, &[]), 5);
    assert!(
        err.contains("pi runs bash unasked") && err.contains("requires a sandbox"),
        "{err}"
    );
    assert!(
        err.contains("--permissions workspace")
            && err.contains("[cli.pi] permissions = \"workspace\""),
        "the hint names the confined mode and the ceiling it needs: {err}"
    );
    let err = home.fails(&claim_lane_of("grok", &r, &id, &[]), 5);
    assert!(
        err.contains("use another CLI"),
        "no mode confines grok: {err}"
    );

    let policy = home.path().join("policy.toml");
    std::fs::write(&policy, "[cli.pi]\npermissions = \"workspace\"\n").expect("policy");
    let err = home.fails(
        &claim_lane_of("pi", &r, &id, &["--permissions", "workspace"]),
        4,
    );
    assert!(
        err.contains("/nonexistent/pi is not installed"),
        "confined, so allowed: {err}"
    );

    std::fs::create_dir_all(repo.join(".flotilla")).expect("dir");
    std::fs::write(
        repo.join(".flotilla/policy.toml"),
        "[cli.grok]\nsandbox = \"off\"\n",
    )
    .expect("repo policy");
    let err = home.fails(&claim_lane_of("grok", &r, &id, &[]), 2);
    assert!(
        err.contains(".flotilla/policy.toml") && err.contains("only your own policy.toml"),
        "{err}"
    );
    std::fs::remove_file(repo.join(".flotilla/policy.toml")).expect("rm");
    std::fs::write(&policy, "[cli.grok]\nsandbox = \"off\"\n").expect("policy");
    let err = home.fails(&claim_lane_of("grok", &r, &id, &[]), 4);
    assert!(
        err.contains("/nonexistent/grok is not installed"),
        "the user's own word: {err}"
    );
    let shown = home.json(&["policy", "show", &r]);
    assert_eq!(shown["policy"]["cli"]["grok"]["sandbox"], "off", "{shown}");
}

#[test]
fn what_a_turn_leaves_uncommitted_is_committed_for_the_lane_unless_a_hook_refuses() {
    let (home, repo, _) = crate::claims::daemon_and_repo(Some("sensitive = [\"config/*.toml\"]\n"));
    let r = repo.display().to_string();
    let id = add(&home, &repo, "Left over");
    let branch = format!("flotilla/{id}");
    // First turn: a new file, never committed by the lane. Second turn: a
    // sensitive one, which the worktree's pre-commit hook refuses.
    let script = "if [ -e made.txt ]; then mkdir -p config; echo 'x = 1' > config/new.toml; \
                  else echo made > made.txt; fi";
    home.ok(&[
        "lane", "run", "--cli", "exec", "-n", "writer", "-C", &r, "--claim", &id, "--prompt", "x",
        "--", "sh", "-c", script,
    ]);
    let last = git(&repo, &["log", "-1", "--format=%an|%s", &branch]);
    assert_eq!(
        last, "laptop/writer|laptop/writer turn 1",
        "committed as the lane"
    );
    let files = git(&repo, &["show", "--name-only", "--format=", &branch]);
    assert_eq!(files, "made.txt");
    let events = home.ok(&["lane", "events", "writer"]);
    assert!(
        events.contains("committed what the turn left uncommitted"),
        "{events}"
    );

    home.ok(&["lane", "resume", "writer", "--prompt", "y", "--wait"]);
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%s", &branch]),
        "laptop/writer turn 1",
        "the sensitive path was not committed"
    );
    let events = home.ok(&["lane", "events", "writer"]);
    assert!(
        events.contains("left uncommitted")
            && events.contains("config/new.toml is a sensitive path"),
        "{events}"
    );
    let shown = home.json(&["claim", "show", &id, "-C", &r]);
    let worktree = shown["claim"]["worktree"].as_str().expect("worktree");
    assert!(
        std::path::Path::new(worktree)
            .join("config/new.toml")
            .exists(),
        "the refused change stays in the worktree, unstaged"
    );
    assert_eq!(
        git(
            std::path::Path::new(worktree),
            &["diff", "--cached", "--name-only"]
        ),
        ""
    );
}
