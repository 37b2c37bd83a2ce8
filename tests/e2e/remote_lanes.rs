//! Lanes placed on another host through the hub: a real hub and two real
//! host daemons on 127.0.0.1. A lane runs on the host that opted in, every
//! lane verb works with `--host`, its owner's inbox gets the result across
//! hosts, a host that did not opt in (or a CLI or group it does not allow)
//! refuses with the reason and nothing runs anywhere else, and a lane keeps
//! running while the link is down and is collected once it is back.

use flotilla_tests::federation::{PATIENCE, Running, host_home, hub_home, run_hub, wait_link};
use flotilla_tests::{TestHome, stop_child, wait_until};
use serde_json::Value;
use std::path::Path;

use crate::lanes::{code, running_with, unique};

fn start(host: &mut TestHome, name: &str, extra_config: &str) {
    let config = std::fs::read_to_string(host.path().join("config.toml")).expect("config");
    host.write_config(&format!("{config}{extra_config}"));
    host.spawn_daemon(name);
    wait_link(host, "the link to be up", |l| l["state"] == "connected");
}

/// A hub, `laptop` (lead in `proj`) and `work`, which lets `proj` run
/// `exec` lanes.
fn federation() -> (TestHome, Running, TestHome, TestHome) {
    federation_with(|_| "allow_remote_lanes = [\"exec\"]\n".into())
}

/// The same with `work`'s own policy, given `work`'s home
/// (`allow_remote_groups = ["proj"]` is added).
pub(crate) fn federation_with(
    work_policy: impl FnOnce(&Path) -> String,
) -> (TestHome, Running, TestHome, TestHome) {
    let (hub, addr) = hub_home();
    let server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    let mut work = host_home(&hub, "work", &addr);
    start(&mut laptop, "laptop", "");
    let policy = format!(
        "{}allow_remote_groups = [\"proj\"]\n",
        work_policy(work.path())
    );
    start(&mut work, "work", &policy);
    laptop.ok(&["peer", "join", "lead", "-g", "proj"]);
    (hub, server, laptop, work)
}

pub(crate) fn lanes_of(home: &TestHome) -> Vec<String> {
    home.json(&["lane", "list", "--all"])["lanes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["lane"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_lane_runs_on_the_host_that_allows_it_and_every_verb_reaches_it() {
    let (_hub, _server, laptop, work) = federation();
    let (c, v) = code(
        &laptop,
        &[
            "lane",
            "run",
            "--host",
            "work",
            "--as",
            "lead",
            "--cli",
            "exec",
            "-n",
            "build",
            "--prompt",
            "ping",
            "--",
            "sh",
            "-c",
            "read x; echo $x from $(hostname -s 2>/dev/null || echo there)",
        ],
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["status"], "completed", "{v}");
    assert_eq!(v["lane"], "work/build");
    assert!(
        v["result"].as_str().unwrap_or("").starts_with("ping from"),
        "{v}"
    );
    assert_eq!(lanes_of(&work), ["work/build"]);
    assert!(lanes_of(&laptop).is_empty(), "nothing ran on the laptop");

    // The owner on the laptop is told, through the hub.
    let mut told = Vec::new();
    wait_until("lead to be told of the turn", PATIENCE, || {
        let reply = laptop.json(&["inbox", "--as", "lead"]);
        told.extend(reply["messages"].as_array().cloned().unwrap_or_default());
        !told.is_empty()
    });
    assert_eq!(told[0]["from"], "work/build");

    // status, resume, events, interrupt, wait, list, archive: all with --host.
    let status = laptop.json(&["lane", "status", "build", "--host", "work"]);
    assert_eq!(status["owner"], "laptop/lead", "{status}");
    let (c, v) = code(
        &laptop,
        &[
            "lane", "resume", "build", "--host", "work", "--prompt", "pong", "--wait",
        ],
    );
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["turn"], 2, "{v}");
    assert!(
        v["result"].as_str().unwrap_or("").starts_with("pong from"),
        "{v}"
    );
    let marker = unique(7);
    let slow = format!("sleep {marker}");
    laptop.ok(&[
        "lane", "start", "--host", "work", "--as", "lead", "--cli", "exec", "-n", "slow", "--",
        "sh", "-c", &slow,
    ]);
    wait_until("the slow turn to run on work", PATIENCE, || {
        running_with(&slow)
    });
    laptop.ok(&["lane", "interrupt", "slow", "--host", "work"]);
    let (c, v) = code(&laptop, &["lane", "wait", "slow", "--host", "work"]);
    assert_eq!((c, v["status"].as_str()), (130, Some("interrupted")), "{v}");
    assert!(!running_with(&slow));
    let events = laptop.ok(&["lane", "events", "slow", "--host", "work"]);
    assert!(events.contains("interrupted"), "{events}");
    let listed: Vec<Value> = laptop.json(&["lane", "list", "--host", "work"])["lanes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let archived = laptop.json(&["lane", "archive", "slow", "--host", "work"]);
    assert_eq!(archived["phase"], "archived", "{archived}");
}

#[test]
fn requests_that_are_not_allowed_are_refused_with_the_reason_and_run_nowhere() {
    let (hub, _server, laptop, work) = federation();
    let addr = std::fs::read_to_string(laptop.path().join("config.toml")).expect("config");
    let hub_addr = addr
        .lines()
        .find_map(|l| l.strip_prefix("hub = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("hub address")
        .to_owned();
    let mut mac = host_home(&hub, "mac", &hub_addr);
    start(&mut mac, "mac", "");
    laptop.ok(&["peer", "join", "outsider", "-g", "elsewhere"]);
    let closed = laptop.fails(
        &[
            "lane", "run", "--host", "mac", "--as", "lead", "--cli", "exec", "--", "true",
        ],
        5,
    );
    assert!(closed.contains("--allow-remote-lanes"), "{closed}");
    let cli = laptop.fails(
        &[
            "lane", "run", "--host", "work", "--as", "lead", "--cli", "claude", "--prompt", "x",
        ],
        5,
    );
    assert!(cli.contains("claude"), "{cli}");
    let group = laptop.fails(
        &[
            "lane", "run", "--host", "work", "--as", "outsider", "--cli", "exec", "--", "true",
        ],
        5,
    );
    assert!(group.contains("groups"), "{group}");
    let offline = laptop.fails(
        &[
            "lane", "run", "--host", "nowhere", "--as", "lead", "--cli", "exec", "--", "true",
        ],
        7,
    );
    assert!(offline.contains("nothing was started"), "{offline}");
    for home in [&laptop, &work, &mac] {
        assert!(lanes_of(home).is_empty(), "nothing ran anywhere");
    }
}

#[test]
fn a_remote_lane_keeps_running_while_the_link_is_down_and_is_collected_after() {
    let (hub, server, laptop, work) = federation();
    let mut server = server;
    let gate = work.path().join("gate");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; echo done",
        gate.display()
    );
    laptop.ok(&[
        "lane", "start", "--host", "work", "--as", "lead", "--cli", "exec", "-n", "long", "--",
        "sh", "-c", &script,
    ]);
    stop_child(&mut server);
    wait_link(&laptop, "the laptop to lose the hub", |l| {
        l["state"] != "connected"
    });
    let refused = laptop.fails(&["lane", "status", "long", "--host", "work"], 7);
    assert!(refused.contains("not linked"), "{refused}");
    std::fs::write(&gate, b"go").expect("open the gate");
    wait_until("the turn to finish on work", PATIENCE, || {
        work.json(&["lane", "status", "long"])["phase"] != "running"
    });
    let _server = run_hub(&hub);
    wait_link(&laptop, "the laptop's link back", |l| {
        l["state"] == "connected"
    });
    wait_link(&work, "work's link back", |l| l["state"] == "connected");
    let (c, v) = code(&laptop, &["lane", "wait", "long", "--host", "work"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["result"], "done");
}

#[test]
fn a_lane_placed_from_another_host_follows_its_owner_when_it_leaves() {
    let (_hub, _server, laptop, work) = federation();
    laptop.ok(&["peer", "join", "temp", "-g", "proj"]);
    let marker = unique(8);
    let slow = format!("sleep {marker}");
    laptop.ok(&[
        "lane", "start", "--host", "work", "--as", "temp", "--cli", "exec", "-n", "orphan", "--",
        "sh", "-c", &slow,
    ]);
    wait_until("the orphan's process on work", PATIENCE, || {
        running_with(&slow)
    });
    laptop.ok(&["peer", "leave", "temp", "--force"]);
    wait_until("the orphan to be archived on work", PATIENCE, || {
        work.json(&["lane", "status", "orphan"])["phase"] == "archived"
    });
    assert_eq!(
        work.json(&["lane", "status", "orphan"])["last_status"],
        "interrupted"
    );
    wait_until("no leftover process", PATIENCE, || !running_with(&slow));
}

#[test]
fn a_bad_remote_lane_policy_stops_the_daemon_at_start_and_names_it() {
    let home = TestHome::new();
    // A CLI or mode that does not exist is a usage error of the flag itself.
    let stderr = home.fails(
        &[
            "host",
            "run",
            "--allow-remote-lanes",
            "exec,nope",
            "--allow-remote-groups",
            "g",
        ],
        2,
    );
    assert!(
        stderr.contains("'nope'") && stderr.contains("--allow-remote-lanes"),
        "{stderr}"
    );
    let stderr = home.fails(&["host", "run", "--remote-lane-max-permissions", "root"], 2);
    assert!(
        stderr.contains("'root'") && stderr.contains("default, workspace, bypass"),
        "{stderr}"
    );
    let stderr = home.fails(
        &[
            "host",
            "run",
            "--allow-remote-lanes",
            "exec",
            "--allow-remote-groups",
            "bad group",
        ],
        1,
    );
    assert!(stderr.contains("bad group"), "{stderr}");
    let bad = [
        (
            "remote_lane_max_permissions = \"root\"",
            "workspace or bypass",
        ),
        ("remote_lane_roots = [\"relative\"]", "absolute"),
        ("remote_lane_env = [\"A=B\"]", "A=B"),
    ];
    for (line, why) in bad {
        home.write_config(&format!("{line}\n"));
        let stderr = home.fails(&["host", "run"], 1);
        let key = line.split(' ').next().unwrap_or(line);
        assert!(
            stderr.contains(key) && stderr.contains(why) && !stderr.contains("unknown field"),
            "{stderr}"
        );
    }
    home.write_config("");
    let flags: [(&[&str], &str); 2] = [
        (&["--remote-lane-roots", "/ok,relative"], "absolute"),
        (&["--remote-lane-env", "A=B"], "A=B"),
    ];
    for (flag, why) in flags {
        let stderr = home.fails(&[&["host", "run"], flag].concat(), 1);
        let key = flag[0].trim_start_matches("--").replace('-', "_");
        assert!(stderr.contains(&key) && stderr.contains(why), "{stderr}");
    }
}

/// `lane run --host work --as lead ARGS...`, which `work` must refuse
/// (exit 5); returns the reason.
fn refused(laptop: &TestHome, args: &[&str]) -> String {
    let mut all = vec!["lane", "run", "--host", "work", "--as", "lead"];
    all.extend_from_slice(args);
    laptop.fails(&all, 5)
}

#[test]
fn issue_13_a_remote_lane_cannot_work_outside_the_destinations_roots() {
    let (_hub, _server, laptop, work) = federation();
    // Without -C: a fresh directory under the default root, as before.
    laptop.ok(&[
        "lane", "run", "--host", "work", "--as", "lead", "--cli", "exec", "-n", "first", "--",
        "true",
    ]);
    let first = work.path().join("state/remote-lanes/first");
    std::os::unix::fs::symlink("/etc", first.join("out")).expect("symlink");
    let escape = format!("{}/../..", first.display());
    let link = format!("{}/out", first.display());
    for dir in ["/etc", escape.as_str(), link.as_str()] {
        let why = refused(&laptop, &["--cli", "exec", "-C", dir, "--", "true"]);
        assert!(why.contains("remote_lane_roots"), "{dir}: {why}");
    }
    assert_eq!(lanes_of(&work), ["work/first"], "nothing else ran");
}

#[test]
fn issue_13_a_remote_lane_cannot_raise_permissions_set_env_or_pass_native_args() {
    let (_hub, _server, laptop, work) = federation_with(|_| {
        "allow_remote_lanes = [\"exec\", \"claude\"]\nclis = { claude = \"/nonexistent/claude\" }\n"
            .into()
    });
    let attacks: [(&[&str], &str); 3] = [
        (
            &["--cli", "exec", "--permissions", "bypass", "--", "true"],
            "remote_lane_max_permissions",
        ),
        (
            &["--cli", "exec", "--env", "LD_PRELOAD=/x.so", "--", "true"],
            "remote_lane_env",
        ),
        (
            &[
                "--cli",
                "claude",
                "--prompt",
                "x",
                "--",
                "--mcp-config",
                "/x.json",
            ],
            "remote_lane_args",
        ),
    ];
    for (args, rule) in attacks {
        let why = refused(&laptop, args);
        assert!(why.contains(rule), "{args:?}: {why}");
    }
    for home in [&laptop, &work] {
        assert!(lanes_of(home).is_empty(), "nothing ran anywhere");
    }
}

#[test]
fn issue_13_a_remote_lane_within_the_destinations_policy_runs() {
    let (_hub, _server, laptop, work) = federation_with(|home| {
        let root = home.join("projects");
        std::fs::create_dir_all(root.join("app")).expect("root");
        format!(
            "allow_remote_lanes = [\"exec\"]\nremote_lane_roots = [\"{}\"]\n\
             remote_lane_max_permissions = \"bypass\"\nremote_lane_env = [\"GREETING\"]\n",
            root.display()
        )
    });
    let app = work.path().join("projects/app");
    let dir = format!("{}/../app", app.display());
    let (c, v) = code(
        &laptop,
        &[
            "lane",
            "run",
            "--host",
            "work",
            "--as",
            "lead",
            "--cli",
            "exec",
            "-C",
            &dir,
            "--permissions",
            "bypass",
            "--env",
            "GREETING=hi",
            "--",
            "sh",
            "-c",
            "echo $GREETING in $(pwd -P)",
        ],
    );
    assert_eq!(c, 0, "{v}");
    let canonical = std::fs::canonicalize(&app).expect("app");
    assert_eq!(v["result"], format!("hi in {}", canonical.display()), "{v}");
    // The default root is replaced by the configured one.
    let why = refused(&laptop, &["--cli", "exec", "-C", "/tmp", "--", "true"]);
    assert!(why.contains("remote_lane_roots"), "{why}");
}
