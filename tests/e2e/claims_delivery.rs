//! Claims' delivery (issue 10): a person's merge and who counts as one,
//! the sensitive-path guard, and change requests (a local change record,
//! and a pull request through a stand-in `gh`).

use std::path::Path;

use flotilla_tests::TestHome;

use crate::claims::{
    add, claim_lane, daemon_and_repo, git, read, repo_with_remote, wait_turn_record,
};

/// An exec lane on `claim` that commits `file`.
fn commit_in_claim(home: &TestHome, repo: &Path, claim: &str, file: &str) {
    let script = format!(
        "echo built > {file} && git add {file} && git -c user.name=L -c user.email=l@x commit -qm 'add {file}'"
    );
    let r = repo.display().to_string();
    home.ok(&claim_lane(
        "run",
        &r,
        claim,
        &["-n", "builder", "--persistent"],
        &["sh", "-c", &script],
    ));
}

#[test]
fn a_person_merges_a_claim_without_a_passed_gate_only_by_saying_so_and_a_lane_never_as_a_person() {
    let (home, repo, _) = daemon_and_repo(None);
    let r = repo.display().to_string();
    let id = add(&home, &repo, "Quick fix");
    commit_in_claim(&home, &repo, &id, "fix.txt");
    wait_turn_record(&home, &r, &id);
    let err = home.fails(&["merge", &id, "-C", &r], 5);
    assert!(
        err.contains("never reviewed") && err.contains("--without-gate"),
        "{err}"
    );
    let err = home.fails(&["merge", &id, "-C", &r, "--by", "coordinator"], 5);
    assert!(err.contains("only a person merges"), "{err}");
    let mut as_lane = home.command(&["merge", &id, "-C", &r, "--without-gate"]);
    let out = as_lane
        .env("FLOTILLA_PEER", "builder")
        .output()
        .expect("merge");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("a lane merges as the coordinator"), "{err}");
    std::fs::write(repo.join("README"), "dirty\n").expect("edit");
    let err = home.fails(&["merge", &id, "-C", &r, "--without-gate"], 6);
    assert!(err.contains("uncommitted changes"), "{err}");
    git(&repo, &["checkout", "--", "README"]);

    let merged = home.json(&["merge", &id, "-C", &r, "--without-gate"]);
    assert_eq!(merged["claim"]["status"], "merged", "{merged}");
    assert_eq!(
        git(&repo, &["show", "-s", "--format=%s", "main"]),
        format!("Merge claim {id}: Quick fix")
    );
    assert!(
        repo.join("fix.txt").exists(),
        "merged into the checkout of main"
    );
    let worktree = merged["claim"]["worktree"].as_str().expect("worktree");
    assert!(!Path::new(worktree).exists(), "the worktree is gone");
    let summary = merged["history"]
        .as_array()
        .expect("history")
        .last()
        .expect("merge")["summary"]
        .clone();
    assert!(
        summary
            .as_str()
            .unwrap_or_default()
            .contains("by the person, without a passed gate"),
        "{summary}"
    );
    let err = home.fails(&["merge", &id, "-C", &r, "--without-gate"], 6);
    assert!(err.contains("was merged"), "{err}");
}

#[test]
fn a_lane_cannot_change_a_sensitive_path_and_is_told_why() {
    let (home, repo, _) = daemon_and_repo(Some("sensitive = [\"config/*.toml\"]\n"));
    std::fs::create_dir_all(repo.join("config")).expect("dir");
    std::fs::write(repo.join("config/secret.toml"), "key = 1\n").expect("file");
    git(&repo, &["add", "config/secret.toml"]);
    git(&repo, &["commit", "-qm", "config"]);
    let r = repo.display().to_string();
    let id = add(&home, &repo, "Touchy");
    let out = home.path().join("out");
    std::fs::create_dir_all(&out).expect("out");
    let script = format!(
        "echo 'key = 2' > config/secret.toml 2> {o}/write.err; echo $? > {o}/write; \
         echo 'x = 1' > config/new.toml; git add config/new.toml; \
         git -c user.name=L -c user.email=l@x commit -qm sneaky 2> {o}/commit.err; echo $? > {o}/commit",
        o = out.display()
    );
    home.ok(&claim_lane("run", &r, &id, &[], &["sh", "-c", &script]));
    // Read-only holds for everyone but root (CI machines may run tests as root).
    if rustix::process::geteuid().as_raw() != 0 {
        assert_ne!(
            read(&out.join("write")),
            "0",
            "the tracked sensitive file is read-only"
        );
        let why = read(&out.join("write.err"));
        assert!(why.contains("Permission denied"), "{why}");
    }
    assert_eq!(read(&out.join("commit")), "1", "the commit is refused");
    let why = read(&out.join("commit.err"));
    assert!(why.contains("config/new.toml is a sensitive path"), "{why}");
    assert_eq!(
        git(&repo, &["rev-list", "--count", "flotilla/touchy"]),
        "2",
        "nothing was committed"
    );
}

#[test]
fn a_change_request_is_a_local_change_record_without_a_forge_and_a_pull_request_through_gh_on_one()
{
    let mut home = TestHome::new();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let asked = home.path().join("gh-args");
    flotilla_tests::write_executable(
        &bin.join("gh"),
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\necho 'https://github.com/acme/app/pull/7'\n",
            asked.display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    home.env.push(("PATH".into(), path));
    home.spawn_daemon("laptop");
    let (repo, remote) = repo_with_remote(home.path());
    let r = repo.display().to_string();
    let id = add(&home, &repo, "Local change");
    commit_in_claim(&home, &repo, &id, "one.txt");
    let v = home.json(&["change", "open", &id, "-C", &r]);
    assert_eq!(
        v["claim"]["change"]["forge"], "local",
        "a bare remote is no forge: {v}"
    );
    let head = git(&repo, &["rev-parse", &format!("flotilla/{id}")]);
    assert_eq!(
        git(&remote, &["rev-parse", &format!("flotilla/{id}")]),
        head,
        "the branch is pushed"
    );
    let record = git(
        &repo,
        &["log", "-1", "--format=%B", "refs/flotilla/records"],
    );
    assert!(
        record.contains("\"kind\":\"change\"")
            && record.contains(&head)
            && record.contains("sha256:"),
        "{record}"
    );

    std::fs::write(
        home.path().join("policy.toml"),
        "forge = \"github\"\nconcurrency = 2\n",
    )
    .expect("policy");
    home.ok(&["lane", "rm", "builder", "--force"]);
    let id = add(&home, &repo, "On a forge");
    commit_in_claim(&home, &repo, &id, "two.txt");
    let v = home.json(&["change", "open", &id, "-C", &r, "--draft"]);
    assert_eq!(v["claim"]["change"]["forge"], "github", "{v}");
    assert_eq!(
        v["claim"]["change"]["url"], "https://github.com/acme/app/pull/7",
        "{v}"
    );
    let args = read(&asked);
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(
        &args[..6],
        [
            "pr",
            "create",
            "--head",
            "flotilla/on-a-forge",
            "--base",
            "main"
        ],
        "{args:?}"
    );
    assert!(
        args.contains(&"--draft") && args.contains(&"On a forge"),
        "{args:?}"
    );
    let text = home.ok(&["claim", "show", &id, "-C", &r]);
    assert!(
        text.contains("change   https://github.com/acme/app/pull/7"),
        "{text}"
    );
}

#[test]
fn a_missing_forge_cli_is_exit_7_with_what_to_do_and_records_no_change() {
    let on_path = std::env::var("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&on_path).all(|d| !d.join("glab").exists()),
        "this test needs a machine without glab on PATH"
    );
    let (home, repo, _) = daemon_and_repo(Some("forge = \"gitlab\"\n"));
    let r = repo.display().to_string();
    let id = add(&home, &repo, "No glab");
    commit_in_claim(&home, &repo, &id, "one.txt");
    let err = home.fails(&["change", "open", &id, "-C", &r], 7);
    assert!(
        err.contains("glab is not installed") && err.contains("forge = \"none\""),
        "{err}"
    );
    let shown = home.json(&["claim", "show", &id, "-C", &r]);
    assert!(
        shown["claim"]["change"].is_null(),
        "no change recorded: {shown}"
    );
    std::fs::write(home.path().join("policy.toml"), "forge = \"none\"\n").expect("policy");
    let v = home.json(&["change", "open", &id, "-C", &r]);
    assert_eq!(v["claim"]["change"]["forge"], "local", "{v}");
}
