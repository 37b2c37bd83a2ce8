//! Readiness (issue 10): `flotilla ready` detects a repository's profile
//! and writes it only when asked, fails a check whose tool is missing,
//! routes a missing clippy to `cargo check` (a stub cargo on the daemon's
//! PATH makes clippy missing whatever this machine has), and has a real
//! claude lane review a plan against the profile, passing and failing, and
//! standing in for a reviewer that is not installed.

use std::path::{Path, PathBuf};

use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, write_executable};
use serde_json::Value;

use crate::claims::git;

/// A git repository with a Cargo.toml and one commit.
fn rust_repo(root: &Path) -> PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("src")).expect("repo dir");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("Cargo.toml"), "[package]\nname = \"app\"\n").expect("file");
    std::fs::write(repo.join("src/main.rs"), "fn main() {}\n").expect("file");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

/// A `cargo` that answers `--version` as version 9.9.9-stub, and
/// `clippy --version` only when `clippy`; in a directory of its own.
fn stub_cargo(root: &Path, clippy: bool) -> PathBuf {
    let dir = root.join("stub-bin");
    std::fs::create_dir_all(&dir).expect("stub dir");
    let clippy_line = if clippy {
        "echo 'clippy 9.9.9-stub'"
    } else {
        "echo \"error: 'cargo-clippy' is not installed for the toolchain 'stub'\" >&2; exit 1"
    };
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n--version) echo 'cargo 9.9.9-stub (flotilla test)' ;;\nclippy) {clippy_line} ;;\n*) echo \"stub cargo: $*\" >&2; exit 1 ;;\nesac\n"
    );
    write_executable(&dir.join("cargo"), &script);
    dir
}

/// Puts `dir` first on the daemon's PATH (after any vendor environment).
fn path_first(home: &mut TestHome, dir: &Path) {
    let rest = (home.env.iter().rev())
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| std::env::var("PATH").unwrap_or_default());
    home.env
        .push(("PATH".into(), format!("{}:{rest}", dir.display())));
}

/// `flotilla --json ready ARGS...`: its exit code and document, which
/// must match the shipped schema.
fn ready(home: &TestHome, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json", "ready"];
    all.extend_from_slice(args);
    let out = home.run(&all);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(v.is_object(), "{}", String::from_utf8_lossy(&out.stderr));
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schemas/flotilla.ready.v1.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema).expect("schema")).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    if let Some(e) = validator.iter_errors(&v).next() {
        panic!("the reply does not match flotilla.ready.v1: {e}\n{v}");
    }
    (out.status.code().unwrap_or(-1), v)
}

/// The check named `name`.
fn check<'v>(v: &'v Value, name: &str) -> &'v Value {
    (v["checks"].as_array().expect("checks").iter())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name:?}: {v}"))
}

/// The names of the checks that keep the repository from being ready.
fn blocking(v: &Value) -> Vec<&str> {
    (v["checks"].as_array().expect("checks").iter())
        .filter(|c| c["required"] == true && c["ok"] == false && c["routed_to"].is_null())
        .filter_map(|c| c["name"].as_str())
        .collect()
}

#[test]
fn a_cargo_repository_is_detected_as_rust_and_write_writes_the_profile_once() {
    let mut home = TestHome::new();
    home.spawn_daemon("laptop");
    let repo = rust_repo(home.path());
    let r = repo.display().to_string();
    let file = repo.join(".flotilla/profile.toml");

    let (code, v) = ready(&home, &[&r]);
    assert!(code == 0 || code == 1, "{code}: {v}");
    assert_eq!(v["schema"], "flotilla.ready.v1");
    assert_eq!(v["repo"], r.as_str());
    assert_eq!(v["profile_source"], "detected");
    assert_eq!(v["profile_written"], false);
    let p = &v["profile"];
    assert_eq!(p["languages"], serde_json::json!(["rust"]), "{v}");
    assert_eq!(p["build"], serde_json::json!(["cargo build"]));
    assert_eq!(p["test"], serde_json::json!(["cargo test"]));
    assert_eq!(
        p["lint"],
        serde_json::json!(["cargo clippy --all-targets -- -D warnings"])
    );
    assert!(!file.exists(), "nothing is written without --write");
    for name in [
        "git",
        "policy",
        "profile",
        "agent CLIs",
        "build: cargo build",
    ] {
        check(&v, name);
    }

    // Shown for confirmation, from a directory inside the repository.
    let out = home
        .command(&["ready"])
        .current_dir(repo.join("src"))
        .output()
        .expect("ready");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("detected, not written: check it"), "{text}");
    assert!(
        text.contains("lint = [\"cargo clippy --all-targets -- -D warnings\"]"),
        "{text}"
    );
    assert!(text.contains("flotilla ready --write"), "{text}");

    let (_, v) = ready(&home, &[&r, "--write"]);
    assert_eq!(v["profile_written"], true, "{v}");
    let written = std::fs::read_to_string(&file).expect("the profile was written");
    assert!(
        written.starts_with("# Flotilla's project profile"),
        "{written}"
    );
    assert!(
        written.contains("cargo clippy --all-targets -- -D warnings"),
        "{written}"
    );

    let (_, v) = ready(&home, &[&r, "--write"]);
    assert_eq!(
        (v["profile_source"].as_str(), v["profile_written"].as_bool()),
        (Some("file"), Some(false)),
        "{v}"
    );
    assert_eq!(std::fs::read_to_string(&file).expect("file"), written);

    // A bad policy or profile fails its check; the command still answers.
    std::fs::write(repo.join(".flotilla/policy.toml"), "concurrency = 0\n").expect("policy");
    std::fs::write(&file, "lint = [\"x\"]\nformat = [\"y\"]\n").expect("profile");
    let (code, v) = ready(&home, &[&r, "--write"]);
    assert_eq!((code, v["ready"].as_bool()), (1, Some(false)), "{v}");
    for name in ["policy", "profile"] {
        assert!(blocking(&v).contains(&name), "{name}: {v}");
    }
    let said =
        check(&v, "policy")["detail"].to_string() + &check(&v, "profile")["detail"].to_string();
    assert!(
        said.contains("concurrency") && said.contains("format"),
        "{v}"
    );
    assert_eq!(
        (v["profile_source"].as_str(), v["profile_written"].as_bool()),
        (Some("detected"), Some(false)),
        "the detected profile is checked, and the file left alone: {v}"
    );
    assert!(
        std::fs::read_to_string(&file)
            .expect("file")
            .contains("format")
    );
}

/// A daemon with the vendor CLIs (against `server`) and a stub cargo on its
/// PATH; `None` without Claude Code (outside CI).
fn vendor_home(
    server: &ModelServer,
    clippy: bool,
    config: Option<&str>,
) -> Option<(TestHome, VendorEnv)> {
    let env = VendorEnv::new(server);
    env.bin(CliKind::Claude)?;
    let mut home = TestHome::new();
    home.env.extend(env.env());
    let stubs = stub_cargo(home.path(), clippy);
    path_first(&mut home, &stubs);
    if let Some(config) = config {
        home.write_config(config);
    }
    home.spawn_daemon("laptop");
    Some((home, env))
}

fn write_profile(repo: &Path, text: &str) {
    std::fs::create_dir_all(repo.join(".flotilla")).expect("dir");
    std::fs::write(repo.join(".flotilla/profile.toml"), text).expect("profile");
}

#[test]
fn a_missing_tool_fails_its_check_and_a_missing_clippy_is_routed_to_cargo_check() {
    let server = ModelServer::start(Script::default());
    let Some((home, _env)) = vendor_home(&server, false, None) else {
        return;
    };
    let repo = rust_repo(home.path());
    let r = repo.display().to_string();

    write_profile(
        &repo,
        "build = [\"cargo build\"]\nlint = [\"nosuchlinter --all\"]\n",
    );
    let (code, v) = ready(&home, &[&r]);
    assert_eq!((code, v["ready"].as_bool()), (1, Some(false)), "{v}");
    assert_eq!(v["profile_source"], "file");
    assert_eq!(blocking(&v), ["lint: nosuchlinter --all"], "{v}");
    let nosuch = check(&v, "lint: nosuchlinter --all");
    assert!(
        nosuch["detail"]
            .as_str()
            .is_some_and(|d| d.contains("not found")),
        "{nosuch}"
    );
    assert_eq!(
        check(&v, "build: cargo build")["detail"],
        "cargo 9.9.9-stub (flotilla test)",
        "the stub cargo is the one probed"
    );
    let out = home.run(&["ready", &r]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("✗  lint: nosuchlinter --all") && text.contains("not ready"),
        "{text}"
    );

    write_profile(
        &repo,
        "build = [\"cargo build\"]\nlint = [\"cargo clippy --all-targets -- -D warnings\"]\n",
    );
    let (code, v) = ready(&home, &[&r]);
    let clippy = check(&v, "lint: cargo clippy --all-targets -- -D warnings");
    assert_eq!(
        (clippy["ok"].as_bool(), clippy["routed_to"].as_str()),
        (Some(false), Some("cargo check --all-targets")),
        "{v}"
    );
    assert!(
        clippy["detail"]
            .as_str()
            .is_some_and(|d| d.contains("cargo-clippy' is not installed")),
        "the stub's own words: {clippy}"
    );
    assert!(
        clippy["why"]
            .as_str()
            .is_some_and(|w| w.contains("rustup component add clippy")),
        "{clippy}"
    );
    assert_eq!((code, v["ready"].as_bool()), (0, Some(true)), "{v}");
    let out = home.run(&["ready", &r]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("→  lint: cargo clippy")
            && text.contains("`cargo check --all-targets` stands in"),
        "{text}"
    );
}

const PASS: &str = "Reviewed.\n```json\n{\"verdict\": \"pass\", \"blocking\": [], \"notes\": [\"small enough\"]}\n```";
const FAIL: &str = "```json\n{\"verdict\": \"fail\", \"blocking\": [{\"file\": \"plan.md\", \"line\": 2, \"finding\": \"adding tokio breaks the constraint: no new dependencies\"}], \"notes\": []}\n```";
const PLAN: &str = "1. add a cache in front of the store\n2. add tokio for the cache's timer\n";
const PROFILE: &str = "languages = [\"rust\"]\nbuild = [\"cargo build\"]\nlint = [\"cargo clippy --all-targets\"]\nconstraints = [\"no new dependencies\"]\n";

/// The plan in a file beside the repository.
fn plan_file(home: &TestHome) -> String {
    let path = home.path().join("plan.md");
    std::fs::write(&path, PLAN).expect("plan");
    path.display().to_string()
}

#[test]
fn a_claude_lane_passes_a_plan_then_fails_one_that_breaks_a_constraint() {
    let server = ModelServer::start(Script::default());
    let Some((home, _env)) = vendor_home(&server, true, None) else {
        return;
    };
    let repo = rust_repo(home.path());
    write_profile(&repo, PROFILE);
    let (r, plan) = (repo.display().to_string(), plan_file(&home));
    let before = git(&repo, &["status", "--porcelain", "--ignored"]);
    let model = default_model(CliKind::Claude);
    let args = [
        r.as_str(),
        "--plan",
        &plan,
        "--reviewer",
        "claude",
        "-m",
        model,
    ];

    server.push(Reply::text(PASS));
    let (code, v) = ready(&home, &args);
    let review = &v["plan_review"];
    assert_eq!(
        (
            code,
            review["outcome"].as_str(),
            review["reviewer"].as_str()
        ),
        (0, Some("pass"), Some("claude")),
        "{v}"
    );
    assert!(
        review["routed_from"].is_null() && review["note"].is_null(),
        "{v}"
    );
    assert_eq!(review["verdict"]["notes"][0], "small enough");
    let asked = server
        .model_requests()
        .last()
        .expect("a request")
        .body
        .to_string();
    assert!(
        asked.contains("no new dependencies") && asked.contains("add tokio for the cache"),
        "the prompt holds the profile's constraints and the plan: {asked}"
    );
    let lane = review["lane"]
        .as_str()
        .expect("the lane")
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let status = home.json(&["lane", "status", &lane]);
    let cwd = status["cwd"].as_str().unwrap_or_default();
    assert!(
        cwd.contains("/.ready/") && !cwd.starts_with(&r),
        "a scratch directory: {status}"
    );

    server.push(Reply::text(FAIL));
    let (code, v) = ready(&home, &args);
    let review = &v["plan_review"];
    assert_eq!((code, review["outcome"].as_str()), (1, Some("fail")), "{v}");
    assert_eq!(v["ready"], false);
    assert_eq!(review["verdict"]["blocking"][0]["file"], "plan.md", "{v}");
    assert_eq!(review["verdict"]["blocking"][0]["line"], 2);
    let next = v["next"].to_string();
    assert!(next.contains("revise the plan"), "{v}");
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--ignored"]),
        before,
        "the repository's checkout is untouched"
    );
}

#[test]
fn a_reviewer_that_is_not_installed_is_routed_to_an_installed_one_and_said_so() {
    let server = ModelServer::start(Script::default());
    let config = "[clis]\ngemini = \"/nonexistent/gemini\"\n";
    let Some((home, _env)) = vendor_home(&server, true, Some(config)) else {
        return;
    };
    std::fs::write(
        home.path().join("policy.toml"),
        "[review]\nreviewers = [\"claude\"]\n",
    )
    .expect("policy");
    let repo = rust_repo(home.path());
    write_profile(&repo, PROFILE);
    let (r, plan) = (repo.display().to_string(), plan_file(&home));

    server.push(Reply::text(PASS));
    let (code, v) = ready(
        &home,
        &[
            &r,
            "--plan",
            &plan,
            "--reviewer",
            "gemini",
            "-m",
            "gemini-2.5-flash",
        ],
    );
    let review = &v["plan_review"];
    assert_eq!(
        (review["reviewer"].as_str(), review["routed_from"].as_str()),
        (Some("claude"), Some("gemini")),
        "{v}"
    );
    assert!(
        review["note"]
            .as_str()
            .is_some_and(|n| n.contains("gemini is not installed")),
        "{v}"
    );
    assert_eq!((code, review["outcome"].as_str()), (0, Some("pass")), "{v}");
    assert_eq!(check(&v, "cli gemini")["detail"], "not installed", "{v}");
    let asked = server
        .model_requests()
        .last()
        .expect("a request")
        .body
        .clone();
    assert_ne!(
        asked["model"], "gemini-2.5-flash",
        "the model was gemini's: dropped"
    );
    let text = home.run(&["ready", &r]).stdout;
    assert!(
        String::from_utf8_lossy(&text).contains("·  cli gemini"),
        "optional, marked ·"
    );
}
