//! The review gate (issue 10): a change built by one model family's CLI is
//! reviewed by another's, both real CLIs against the scripted model server;
//! the verdict is recorded bound to the commit and the diff's hash, a new
//! commit voids it, a posture path holds its tier against `--tier low`, and
//! a malformed verdict is bounced.

use std::path::Path;

use flotilla_actors::governance::diff_sha256;
use flotilla_tests::TestHome;
use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use serde_json::Value;

use crate::claims::{git, repo_with_remote};

const POLICY: &str = "[cli.claude]\npermissions = \"bypass\"\nsandbox = \"off\"\n[cli.codex]\npermissions = \"bypass\"\nsandbox = \"off\"\n";

struct Rig {
    server: ModelServer,
    env: VendorEnv,
    home: TestHome,
    repo: std::path::PathBuf,
}

impl Rig {
    /// A daemon, a repository and a claim `feature`; `None` without the CLIs.
    fn new() -> Option<Self> {
        let server = ModelServer::start(Script::default());
        let env = VendorEnv::new(&server);
        env.bin(CliKind::Claude)?;
        env.bin(CliKind::Codex)?;
        let mut home = TestHome::new();
        home.env.extend(env.env());
        std::fs::write(home.path().join("policy.toml"), POLICY).expect("policy");
        home.spawn_daemon("laptop");
        let (repo, _) = repo_with_remote(home.path());
        home.json(&["claim", "add", &repo.display().to_string(), "Feature"]);
        Some(Self {
            server,
            env,
            home,
            repo,
        })
    }

    fn r(&self) -> String {
        self.repo.display().to_string()
    }

    /// The claim's lane of `cli` commits `file` through its own shell tool.
    fn build(&self, cli: CliKind, file: &str) -> String {
        let command = format!(
            "mkdir -p $(dirname {file}) && echo built > {file} && git add {file} && \
             git -c user.name=A -c user.email=a@x commit -qm 'add {file}'"
        );
        self.server.push(Reply::Shell { command });
        self.server.push(Reply::text("committed"));
        let r = self.r();
        let cli_name = cli.as_str();
        let out = self.home.run(&[
            "--json",
            "lane",
            "run",
            "--cli",
            cli_name,
            "-n",
            "author",
            "-m",
            default_model(cli),
            "--permissions",
            "bypass",
            "-C",
            &r,
            "--claim",
            "feature",
            "--prompt",
            "build it",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let head = git(&self.repo, &["rev-parse", "flotilla/feature"]);
        let main = git(&self.repo, &["rev-parse", "main"]);
        assert_ne!(
            head, main,
            "the {cli_name} lane committed on the claim's branch"
        );
        crate::claims::wait_turn_record(&self.home, &r, "feature");
        head
    }

    /// `review feature` with `args`: its exit code and document.
    fn review(&self, reviewer: CliKind, args: &[&str]) -> (i32, Value) {
        let r = self.r();
        let mut all = vec![
            "--json",
            "review",
            "feature",
            "-C",
            &r,
            "--reviewer",
            reviewer.as_str(),
            "-m",
            default_model(reviewer),
        ];
        all.extend_from_slice(args);
        let out = self.home.run(&all);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert!(v.is_object(), "{}", String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), v)
    }

    /// The diff the reviewer must have been shown, and its hash.
    fn diff_of(&self, head: &str) -> String {
        let base = git(&self.repo, &["merge-base", "main", head]);
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args([
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-renames",
                &base,
                head,
            ])
            .output()
            .expect("git diff");
        diff_sha256(&String::from_utf8_lossy(&out.stdout))
    }
}

const PASS: &str = "Reviewed.\n```json\n{\"verdict\": \"pass\", \"blocking\": [], \"notes\": [\"small and clear\"]}\n```";

#[test]
fn a_claude_built_commit_passes_codex_review_bound_to_its_sha_until_a_new_commit_voids_it() {
    let Some(rig) = Rig::new() else { return };
    let head = rig.build(CliKind::Claude, "feature.txt");
    let r = rig.r();
    let err = rig
        .home
        .fails(&["review", "feature", "-C", &r, "--reviewer", "claude"], 5);
    assert!(err.contains("same model family"), "{err}");

    rig.server.push(Reply::text(PASS));
    let (code, v) = rig.review(CliKind::Codex, &[]);
    assert_eq!((code, v["status"].as_str()), (0, Some("passed")), "{v}");
    assert_eq!(v["schema"], "flotilla.gate.v1");
    let gate = &v["gate"];
    assert_eq!(gate["commit"], head.as_str(), "bound to the commit: {v}");
    assert_eq!(
        gate["diff_sha256"],
        rig.diff_of(&head).as_str(),
        "and to the diff shown: {v}"
    );
    assert_eq!(
        (gate["author"].as_str(), gate["author_family"].as_str()),
        (Some("claude"), Some("anthropic"))
    );
    assert_eq!(
        (gate["reviewer"].as_str(), gate["reviewer_family"].as_str()),
        (Some("codex"), Some("openai"))
    );
    assert_eq!(
        (gate["tier"].as_str(), gate["round"].as_u64()),
        (Some("medium"), Some(1)),
        "{v}"
    );
    let asked = rig
        .server
        .model_requests()
        .last()
        .expect("the reviewer's request")
        .body
        .to_string();
    assert!(
        asked.contains("feature.txt") && asked.contains("tests cover the change"),
        "the packet: {asked}"
    );
    assert_eq!(
        rig.home.run(&["gate", "feature", "-C", &r]).status.code(),
        Some(0)
    );

    // A new commit on the branch voids the gate.
    let board = rig.home.json(&["board", &r]);
    let worktree = board["claims"][0]["worktree"]
        .as_str()
        .expect("worktree")
        .to_owned();
    std::fs::write(Path::new(&worktree).join("more.txt"), "more\n").expect("file");
    git(Path::new(&worktree), &["add", "more.txt"]);
    git(Path::new(&worktree), &["commit", "-qm", "more"]);
    let out = rig.home.run(&["--json", "gate", "feature", "-C", &r]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (out.status.code(), v["status"].as_str()),
        (Some(1), Some("void")),
        "{v}"
    );
    assert!(
        v["why"]
            .as_str()
            .unwrap_or_default()
            .contains("a new commit voids the gate"),
        "{v}"
    );
    let text = rig.home.ok(&["board", &r]);
    assert!(text.contains("gate void · R1"), "{text}");
    drop(rig.env);
}

#[test]
fn a_codex_built_security_change_is_reviewed_by_claude_at_max_and_a_malformed_verdict_is_bounced() {
    let Some(rig) = Rig::new() else { return };
    let head = rig.build(CliKind::Codex, "security/keys.rs");
    rig.server.push(Reply::text("Looks fine to me."));
    rig.server.push(Reply::text(
        "```json\n{\"verdict\": \"fail\", \"blocking\": [{\"file\": \"security/keys.rs\", \"line\": 1, \"finding\": \"a key in the tree\"}]}\n```",
    ));
    let (code, v) = rig.review(CliKind::Claude, &["--tier", "low"]);
    assert_eq!((code, v["status"].as_str()), (1, Some("failed")), "{v}");
    let gate = &v["gate"];
    assert_eq!(
        (gate["tier"].as_str(), gate["requested_tier"].as_str()),
        (Some("max"), Some("low")),
        "{v}"
    );
    assert_eq!(
        (gate["author"].as_str(), gate["reviewer"].as_str()),
        (Some("codex"), Some("claude"))
    );
    assert_eq!(gate["commit"], head.as_str());
    assert_eq!(gate["blocking"][0]["file"], "security/keys.rs", "{v}");
    let asked = rig
        .server
        .model_requests()
        .last()
        .expect("request")
        .body
        .to_string();
    assert!(
        asked.contains("not a well-formed verdict"),
        "the bounce said why: {asked}"
    );

    // Twice malformed: recorded as bounced, round 2.
    rig.server.push(Reply::text("no verdict"));
    rig.server.push(Reply::text("still none"));
    let (code, v) = rig.review(CliKind::Claude, &[]);
    assert_eq!((code, v["status"].as_str()), (1, Some("bounced")), "{v}");
    assert_eq!(v["gate"]["round"], 2, "{v}");
    let shown = rig.home.json(&["claim", "show", "feature", "-C", &rig.r()]);
    let kinds: Vec<&str> = shown["history"]
        .as_array()
        .expect("history")
        .iter()
        .filter_map(|h| h["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["claim", "lane", "turn", "gate", "gate"], "{shown}");
}

fn set_policy(rig: &Rig, extra: &str) {
    std::fs::write(
        rig.home.path().join("policy.toml"),
        format!("{POLICY}{extra}"),
    )
    .expect("policy");
}

#[test]
fn the_coordinator_merges_only_what_the_policy_allows_after_a_passed_review_and_green_checks() {
    let Some(rig) = Rig::new() else { return };
    let head = rig.build(CliKind::Claude, "feature.txt");
    rig.server.push(Reply::text(PASS));
    let (code, v) = rig.review(CliKind::Codex, &[]);
    assert_eq!(
        (code, v["gate"]["tier"].as_str()),
        (0, Some("medium")),
        "{v}"
    );
    let r = rig.r();
    let merge = ["merge", "feature", "-C", r.as_str(), "--by", "coordinator"];
    let err = rig.home.fails(&merge, 5);
    assert!(
        err.contains("only a person merges"),
        "no policy, no coordinator: {err}"
    );
    set_policy(&rig, "[merge]\nauthority = \"coordinator\"\n");
    let err = rig.home.fails(&merge, 5);
    assert!(err.contains("above [merge] max_tier low"), "{err}");
    set_policy(
        &rig,
        "[merge]\nauthority = \"coordinator\"\nmax_tier = \"medium\"\nchecks = [\"test -f feature.txt\", \"echo red; false\"]\n",
    );
    let err = rig.home.fails(&merge, 5);
    assert!(
        err.contains("the check `echo red; false` failed") && err.contains("red"),
        "{err}"
    );
    assert_eq!(
        git(&rig.repo, &["rev-list", "--count", "main"]),
        "1",
        "nothing merged"
    );
    set_policy(
        &rig,
        "[merge]\nauthority = \"coordinator\"\nmax_tier = \"medium\"\nchecks = [\"test -f feature.txt\"]\n",
    );
    git(&rig.repo, &["checkout", "-q", "-b", "elsewhere"]);
    let v = rig.home.json(&merge);
    assert_eq!(v["claim"]["status"], "merged", "{v}");
    let merged = git(&rig.repo, &["rev-parse", "main"]);
    assert_eq!(
        git(&rig.repo, &["rev-parse", "main^2"]),
        head,
        "main merged the reviewed head"
    );
    assert_eq!(
        git(&rig.repo, &["show", "-s", "--format=%an", &merged]),
        "Flotilla coordinator"
    );
    assert_eq!(
        git(&rig.repo, &["status", "--porcelain"]),
        "",
        "the checkout on another branch is untouched"
    );
    let text = rig.home.ok(&["board", &r]);
    assert!(
        text.contains("merged") && text.contains("gate passed"),
        "{text}"
    );
}
