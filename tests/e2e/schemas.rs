//! Every `--json` shape, produced by the real binary, checked against its
//! shipped JSON Schema in docs/schemas/ (`flotilla schemas --out` writes
//! them; a unit test of flotilla-cli keeps them in step with the code).
//! Owns only these checks: it must not assert on the shapes' values, which
//! the tests of each command do.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use flotilla_tests::federation::{PATIENCE, hub_home_on, run_hub, wait_link};
use flotilla_tests::model_server::{ModelServer, Reply, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv, default_model};
use flotilla_tests::{TestHome, free_udp_port, stop_child, wait_until};
use serde_json::Value;

/// Shapes no single home can print here, each with what it needs.
const NOT_PRODUCED_HERE: &[(&str, &str)] = &[
    // Needs multicast DNS: `hub_shapes` runs `discover` while its hub
    // announces itself, and checks whatever it prints (the shape, or the
    // error envelope where the machine has no multicast).
    ("flotilla.discover.v1", "multicast DNS"),
];

/// The error envelope: known by its `error` key, it has no `schema` field.
const ERROR_SCHEMA: &str = "flotilla.error.v1";

/// The shipped schemas, compiled, and the ids real output exercised.
struct ShippedSchemas {
    validators: BTreeMap<String, jsonschema::Validator>,
    exercised: BTreeSet<String>,
}

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schemas")
}

impl ShippedSchemas {
    fn load() -> Self {
        let mut validators = BTreeMap::new();
        let dir = schemas_dir();
        for entry in std::fs::read_dir(&dir).expect("docs/schemas/ exists") {
            let path = entry.expect("a directory entry").path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            let text = std::fs::read_to_string(&path).expect("a schema file");
            let schema: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
            let validator = jsonschema::validator_for(&schema)
                .unwrap_or_else(|e| panic!("{} is not a valid schema: {e}", path.display()));
            validators.insert(id.to_owned(), validator);
        }
        assert!(!validators.is_empty(), "no schema in {}", dir.display());
        Self {
            validators,
            exercised: BTreeSet::new(),
        }
    }

    /// Checks one document printed by `command` against the schema it names.
    fn check(&mut self, command: &str, doc: &Value) {
        let id = match doc.get("schema").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None if doc.get("error").is_some() => ERROR_SCHEMA.to_owned(),
            None => panic!("`{command}` printed a document without a schema id: {doc}"),
        };
        let file = format!("docs/schemas/{id}.json");
        let validator = self
            .validators
            .get(&id)
            .unwrap_or_else(|| panic!("`{command}` printed schema {id}, but {file} is missing"));
        if let Some(first) = validator.iter_errors(doc).next() {
            panic!(
                "`{command}` does not match {file}: {first} (at {})\n{doc:#}",
                first.instance_path()
            );
        }
        self.exercised.insert(id);
    }

    /// Runs `flotilla --json ARGS` in `home` and checks its one document
    /// (a success or the error envelope); returns it.
    fn run(&mut self, home: &TestHome, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = home.run(&all);
        let command = format!("flotilla {}", all.join(" "));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "`{command}` printed no JSON document ({e}): {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        self.check(&command, &doc);
        doc
    }

    /// Like [`Self::run`] for a command printing JSON lines.
    fn run_lines(&mut self, home: &TestHome, args: &[&str]) -> usize {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let command = format!("flotilla {}", all.join(" "));
        let stdout = home.ok(&all);
        let mut lines = 0;
        for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
            let doc: Value = serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("`{command}` printed a line that is not JSON ({e}): {line}")
            });
            self.check(&command, &doc);
            lines += 1;
        }
        lines
    }
}

/// A daemon, peers, messages and lanes: the everyday shapes.
fn daemon_shapes(s: &mut ShippedSchemas, home: &TestHome) {
    s.run(home, &["up", "--name", "h"]);
    s.run(home, &["host", "status"]);
    s.run(home, &["peer", "join", "lead", "-g", "proj"]);
    s.run(home, &["peer", "join", "rev", "-g", "proj"]);
    s.run(home, &["peer", "join", "temp"]);
    s.run(home, &["peer", "rename", "temp", "gone"]);
    s.run(home, &["peer", "leave", "gone"]);
    s.run(home, &["peers", "--as", "lead"]);
    s.run(home, &["send", "--as", "lead", "--to", "rev", "hello"]);
    // `send --batch`: one line per message, a refused one included.
    let batch = "{\"to\": \"rev\", \"body\": \"one\"}\n{\"to\": [\"ghost\"], \"body\": \"two\"}\n";
    let mut child = home
        .command(&["--json", "send", "--as", "lead", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("batch");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), batch.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("batch");
    assert_eq!(
        out.status.code(),
        Some(5),
        "a refused line sets the exit code"
    );
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let doc: Value = serde_json::from_str(line).expect("a JSON line");
        s.check("flotilla --json send --batch", &doc);
    }
    s.run(home, &["inbox", "--as", "rev", "--peek"]);
    s.run(home, &["outbox", "--as", "lead"]);
    let run = s.run(
        home,
        &[
            "lane", "run", "--cli", "exec", "-n", "done", "--prompt", "ping", "--", "cat",
        ],
    );
    assert_eq!(run["type"], "turn.completed", "{run}");
    s.run(home, &["lane", "status", "done"]);
    s.run(
        home,
        &[
            "lane", "start", "--cli", "exec", "-n", "later", "--prompt", "p", "--", "cat",
        ],
    );
    s.run(home, &["lane", "wait", "later"]);
    let lines = s.run_lines(home, &["lane", "events", "done"]);
    assert!(lines >= 3, "lane events printed {lines} line(s)");
    s.run(home, &["lane", "list", "--all"]);
    s.run(home, &["lane", "doctor"]);
    let task = home.path().join("task.json");
    std::fs::write(
        &task,
        r#"{"goal": "g", "artifacts": [{"path": "config.toml"}]}"#,
    )
    .expect("task");
    let task = task.display().to_string();
    let dir = home.path().display().to_string();
    s.run(home, &["fleet", "check", &task, "-C", &dir]);
    ready_shape(s, home);
    fleet_shapes(s, home, &dir);
    s.run(home, &["roster"]);
    s.run(home, &["lane", "rm", "done"]);
    s.run(home, &["lane", "archive", "later"]);
    s.run(home, &["lane", "prune"]);
    lane_detached_shape(s, home);
    s.run(home, &["lane", "status", "no-such-lane"]);
    s.run(home, &["doctor"]);
    s.run(home, &["logs"]);
    first_line_shape(s, home, &["--json", "logs", "-n", "1", "--follow"]);
    s.run(home, &["down"]);
}

/// `ready` on a fresh git repository (ready or not: the shape is the same).
fn ready_shape(s: &mut ShippedSchemas, home: &TestHome) {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo)
        .status()
        .expect("git init");
    assert!(init.success(), "git init");
    std::fs::write(repo.join("go.mod"), "module x\n").expect("go.mod");
    s.run(home, &["ready", &repo.display().to_string()]);
}

/// A fleet whose exec supervisor says done at once: every fleet command.
fn fleet_shapes(s: &mut ShippedSchemas, home: &TestHome, dir: &str) {
    let task = home.path().join("fleet-task.json");
    std::fs::write(&task, r#"{"goal": "nothing to make"}"#).expect("task");
    let task = task.display().to_string();
    let sup = home.path().join("done.sh");
    flotilla_tests::write_executable(&sup, "#!/bin/sh\ncat >/dev/null\necho '{\"done\": true}'\n");
    let sup = sup.display().to_string();
    s.run(
        home,
        &[
            "fleet",
            "start",
            "sch",
            "--supervisor",
            "exec",
            "--supervisor-cmd",
            &sup,
            "--workers",
            "1",
            "--worker-cli",
            "exec",
            "--worker-cmd",
            "true",
            "-C",
            dir,
            "--task",
            &task,
        ],
    );
    let mut last = Value::Null;
    wait_until("the fleet to end", Duration::from_secs(30), || {
        last = home.json(&["fleet", "status", "sch"]);
        last["state"] != "running"
    });
    assert_eq!(last["state"], "completed", "{last}");
    s.run(home, &["fleet", "status", "sch"]);
    s.run(home, &["fleet", "list"]);
    s.run(home, &["fleet", "history", "sch"]);
    assert!(s.run_lines(home, &["fleet", "watch", "sch"]) >= 2);
    fleet_room_shape(s, home);
    s.run(home, &["fleet", "pairs"]);
    let request = home.path().join("request.json");
    std::fs::write(&request, r#"{"to": "worker-1", "body": {}}"#).expect("request");
    s.run(
        home,
        &["fleet", "request", "sch", &request.display().to_string()],
    );
    s.run(home, &["fleet", "pause", "sch"]);
    s.run(home, &["fleet", "resume", "sch"]);
    s.run(home, &["fleet", "stop", "sch"]);
    s.run(home, &["fleet", "rm", "sch"]);
    s.run(home, &["fleet", "status", "no-such-fleet"]);
}

/// `fleet watch --no-attach`: the control room, on a private tmux server.
fn fleet_room_shape(s: &mut ShippedSchemas, home: &TestHome) {
    let tmux = flotilla_tests::session::PrivateTmux::new(home.path());
    let command = "flotilla --json fleet watch sch --no-attach";
    let out = tmux
        .apply(&mut home.command(&["--json", "fleet", "watch", "sch", "--no-attach"]))
        .stdin(Stdio::null())
        .output()
        .expect("fleet watch");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "`{command}` printed no JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    s.check(command, &doc);
}

/// `lane run --json` detached by one Ctrl-C (SIGINT, as a terminal sends).
fn lane_detached_shape(s: &mut ShippedSchemas, home: &TestHome) {
    let sleep = format!("sleep {}", crate::lanes::unique(31));
    let run = home
        .command(&[
            "--json", "lane", "run", "-n", "detach", "--cli", "exec", "--prompt", "x", "--", "sh",
            "-c", &sleep,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start lane run");
    wait_until("the turn's process runs", PATIENCE, || {
        let out = home.run(&["--json", "lane", "status", "detach"]);
        serde_json::from_slice::<Value>(&out.stdout).is_ok_and(|v| v["pid"].is_u64())
    });
    // The attached command sets its Ctrl-C handler right after the start.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &run.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let out = run.wait_with_output().expect("lane run exits");
    assert_eq!(out.status.code(), Some(0), "a detach exits 0");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    s.check("flotilla --json lane run (one Ctrl-C)", &doc);
    home.ok(&["lane", "archive", "detach"]);
}

/// Starts a command that runs until stopped, checks its first line of
/// output, then stops it (`logs --follow`, `hub web`).
fn first_line_shape(s: &mut ShippedSchemas, home: &TestHome, args: &[&str]) {
    let command = format!("flotilla {}", args.join(" "));
    let mut follower = home
        .command(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{command}`: {e}"));
    let mut line = String::new();
    let read = follower
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut line));
    stop_child(&mut follower);
    assert!(
        matches!(read, Some(Ok(n)) if n > 0),
        "`{command}` printed nothing"
    );
    let doc: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("`{command}` printed a line that is not JSON ({e}): {line}"));
    s.check(&command, &doc);
}

/// Shapes that need no daemon: config, integrations, service, pages.
fn offline_shapes(s: &mut ShippedSchemas, home: &TestHome) {
    s.run(home, &["config", "path"]);
    s.run(home, &["config", "set", "max_message_bytes", "4096"]);
    s.run(home, &["config", "get", "max_message_bytes"]);
    s.run(home, &["config", "show"]);
    s.run(home, &["integrations", "status"]);
    s.run(
        home,
        &["host", "install", "--dry-run", "--binary", "/bin/true"],
    );
    s.run(
        home,
        &["host", "uninstall", "--dry-run", "--binary", "/bin/true"],
    );
    let pages = home.path().join("man1");
    let pages = pages.to_str().expect("utf-8 path");
    s.run(home, &["man", "--out", pages]);
    let schemas = home.path().join("schemas");
    s.run(
        home,
        &["schemas", "--out", schemas.to_str().expect("utf-8 path")],
    );
    s.run(home, &["schemas"]);
    s.run(home, &["roster", "--no-such-flag"]);
}

/// The benchmarks, with tiny parameters (only their shapes matter here).
fn bench_shapes(s: &mut ShippedSchemas, home: &TestHome) {
    s.run(
        home,
        &[
            "bench",
            "local",
            "--latency-messages",
            "5",
            "--throughput-messages",
            "20",
            "--queued-messages",
            "20",
        ],
    );
    s.run(
        home,
        &["bench", "lanes", "--runs", "1", "--idle-lanes", "1"],
    );
    s.run(
        home,
        &[
            "bench",
            "fleet",
            "--runs",
            "1",
            "--workers",
            "2",
            "--rounds",
            "1",
        ],
    );
    s.run(
        home,
        &[
            "bench",
            "federation",
            "--messages",
            "5",
            "--hosts",
            "3",
            "--peers-per-host",
            "2",
        ],
    );
}

/// A hub with its CA: certificates, an enrolled host, groups, revocation.
fn hub_shapes(s: &mut ShippedSchemas) {
    let addr = format!("127.0.0.1:{}", free_udp_port());
    let enroll = format!("127.0.0.1:{}", free_udp_port());
    let hub = hub_home_on(&addr, &enroll);
    s.run(&TestHome::new(), &["hub", "init", "--name", "other.test"]);
    s.run(&hub, &["certs", "show"]);
    let out = hub.path().join("issued-for-schemas");
    s.run(
        &hub,
        &[
            "certs",
            "issue",
            "--name",
            "spare",
            "--out",
            out.to_str().expect("utf-8 path"),
        ],
    );
    s.run(&hub, &["hub", "groups"]);
    let _running = run_hub(&hub);
    let log = hub.path().join("hub.stderr");
    wait_until("the hub to listen", PATIENCE, || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("hub listening"))
    });
    let invite = s.run(&hub, &["hub", "invite", "laptop", "--ttl", "1h"]);
    let token = invite["token"].as_str().expect("a token").to_owned();
    let host = TestHome::new();
    s.run(&host, &["host", "join", &token]);
    host.ok(&["up"]);
    s.run(&host, &["peer", "join", "remote-reader", "-g", "proj"]);
    wait_link(&host, "the joined host to link", |l| {
        l["state"] == "connected"
    });
    // A linked host: `hub_link` and the hub's view of its peers are filled.
    s.run(&host, &["host", "status"]);
    s.run(&host, &["roster", "--all"]);
    s.run(&hub, &["hub", "roster"]);
    s.run(&host, &["discover", "--timeout", "1s"]);
    let web = format!("127.0.0.1:{}", free_udp_port());
    first_line_shape(s, &hub, &["--json", "hub", "web", "--listen", &web]);
    s.run(&hub, &["hub", "revoke", "laptop"]);
}

/// `lane attach --print` needs a lane with a native session: a real Claude
/// Code lane against the scripted model server. False when Claude Code is
/// not installed (outside CI; in CI that fails).
fn attach_shapes(s: &mut ShippedSchemas) -> bool {
    let server = ModelServer::start(Script::default().or_else(Reply::text("noted")));
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return false;
    }
    let mut home = TestHome::new();
    home.env.extend(env.env());
    home.spawn_daemon("h");
    let workdir = env.workdir().display().to_string();
    let model = default_model(CliKind::Claude);
    home.ok(&[
        "lane", "run", "--cli", "claude", "-n", "c", "-m", model, "-C", &workdir, "--prompt", "hi",
    ]);
    s.run(&home, &["lane", "attach", "c", "--print"]);
    s.run(&home, &["lane", "attach", "no-such-lane"]);
    true
}

/// Claims, the board, the gate, the policy and a merge, in a real repository.
fn governance_shapes(s: &mut ShippedSchemas) {
    let mut home = TestHome::new();
    home.spawn_daemon("h");
    let (repo, _) = crate::claims::repo_with_remote(home.path());
    let r = repo.display().to_string();
    s.run(&home, &["claim", "add", &r, "Shapes"]);
    home.ok(&[
        "lane",
        "run",
        "--cli",
        "exec",
        "-C",
        &r,
        "--claim",
        "shapes",
        "--prompt",
        "x",
        "--",
        "sh",
        "-c",
        "echo a > a.txt && git add a.txt && git -c user.name=a -c user.email=a@x commit -qm a",
    ]);
    s.run(&home, &["board", &r]);
    s.run(&home, &["claim", "show", "shapes", "-C", &r]);
    s.run(&home, &["gate", "shapes", "-C", &r]);
    s.run(&home, &["policy", "show", &r]);
    s.run(&home, &["merge", "shapes", "-C", &r, "--without-gate"]);
}

#[test]
fn every_json_shape_matches_its_shipped_schema() {
    let mut s = ShippedSchemas::load();
    daemon_shapes(&mut s, &TestHome::new());
    offline_shapes(&mut s, &TestHome::new());
    hub_shapes(&mut s);
    bench_shapes(&mut s, &TestHome::new());
    governance_shapes(&mut s);
    let mut listed: BTreeSet<String> = NOT_PRODUCED_HERE
        .iter()
        .map(|(id, _)| (*id).to_owned())
        .collect();
    if !attach_shapes(&mut s) {
        eprintln!("Claude Code is not installed: flotilla.lane-attach.v1 is not checked");
        listed.insert("flotilla.lane-attach.v1".to_owned());
    }
    let missed: Vec<&String> = s
        .validators
        .keys()
        .filter(|id| !s.exercised.contains(*id) && !listed.contains(*id))
        .collect();
    assert!(
        missed.is_empty(),
        "no real output exercised {missed:?}: produce them here or list them in NOT_PRODUCED_HERE"
    );
    for id in &listed {
        assert!(
            s.validators.contains_key(id),
            "{id} is listed but not shipped"
        );
    }
}
