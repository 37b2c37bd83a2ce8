//! Where a remote lane works, and how its owner collects it (issue 12): a
//! remote lane without `-C` runs in the destination's `remote_lane_dir`,
//! `lane start --host` says where, and every hint and notice names the
//! lane's host (`flotilla lane wait NAME --host HOST`).

use std::time::Duration;

use flotilla_tests::wait_until;

use crate::lanes::code;
use crate::remote_lanes::federation_with;

#[test]
fn a_remote_lane_without_cd_runs_in_remote_lane_dir_and_its_notice_names_the_host() {
    let (_hub, _server, laptop, work) = federation_with(|home| {
        let root = home.join("projects");
        std::fs::create_dir_all(root.join("app")).expect("root");
        format!(
            "allow_remote_lanes = [\"exec\"]\nremote_lane_roots = [\"{}\"]\n\
             remote_lane_dir = \"{}\"\n",
            root.display(),
            root.join("app").display()
        )
    });
    let app = std::fs::canonicalize(work.path().join("projects/app")).expect("app");
    let started = laptop.ok(&[
        "lane", "start", "--host", "work", "--as", "lead", "--cli", "exec", "-n", "where",
        "--prompt", "x", "--", "sh", "-c", "pwd -P",
    ]);
    assert!(
        started.contains(&format!("in {} on work", app.display()))
            && started.contains(&format!(
                "collect with: {}",
                laptop.flotilla_cmd("lane wait where --host work")
            )),
        "{started}"
    );
    let mut notice = String::new();
    wait_until("the owner's notice", Duration::from_secs(30), || {
        let inbox = laptop.json(&["inbox", "--as", "lead", "--peek"]);
        notice = inbox["messages"][0]["body"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        !notice.is_empty()
    });
    assert!(
        notice.contains("collect the result with: flotilla lane wait where --host work"),
        "{notice}"
    );
    let (c, v) = code(&laptop, &["lane", "wait", "where", "--host", "work"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["result"], app.display().to_string(), "{v}");
}

#[test]
fn a_remote_lane_dir_outside_the_roots_is_refused() {
    let (_hub, _server, laptop, work) = federation_with(|home| {
        let root = home.join("projects");
        std::fs::create_dir_all(&root).expect("root");
        format!(
            "allow_remote_lanes = [\"exec\"]\nremote_lane_roots = [\"{}\"]\n\
             remote_lane_dir = \"/etc\"\n",
            root.display()
        )
    });
    let (c, v) = code(
        &laptop,
        &[
            "lane", "start", "--host", "work", "--as", "lead", "--cli", "exec", "-n", "out",
            "--prompt", "x", "--", "true",
        ],
    );
    assert_eq!(c, 5, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("remote_lane_dir") && message.contains("remote_lane_roots"),
        "{v}"
    );
    let lanes = work.json(&["lane", "list", "--all"]);
    assert_eq!(lanes["lanes"], serde_json::json!([]), "nothing ran");
}
