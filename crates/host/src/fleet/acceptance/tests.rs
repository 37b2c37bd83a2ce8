//! Acceptance against real files and real `sh` processes.

use super::*;
use flotilla_actors::fleet::{Shortfall, Task};

const LONG: Duration = Duration::from_secs(30);

fn report_task(checks: &str) -> Task {
    Task::parse(&format!(
        r#"{{"goal": "g", "artifacts": [{{"path": "worker-1/report.md", "min_chars": 20, "contains": ["Conclusion"]}}],
            "checks": {checks}}}"#
    ))
    .unwrap()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_missing_artifact_bounces_and_a_written_one_is_accepted_with_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let task = report_task("[]");
    let Verdict::Bounced(why) = accept(dir.path(), &task, LONG).await else {
        panic!("bounced")
    };
    assert_eq!(
        why,
        [Shortfall::Missing {
            path: "worker-1/report.md".into()
        }]
    );
    write(
        dir.path(),
        "worker-1/report.md",
        "Findings… and the Conclusion.",
    );
    let Verdict::Accepted(evidence) = accept(dir.path(), &task, LONG).await else {
        panic!("accepted")
    };
    assert_eq!(evidence.artifacts[0].chars, 29);
    assert_eq!(evidence.artifacts[0].bytes, 31);
}

#[tokio::test]
async fn an_artifact_never_leads_out_of_the_fleets_directory() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "secret.md",
        "Conclusion: a long enough text here",
    );
    std::fs::create_dir(dir.path().join("worker-1")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        dir.path().join("worker-1/report.md"),
    )
    .unwrap();
    let seen = look_at(dir.path(), "worker-1/report.md");
    let ArtifactSeen::Unreadable(why) = seen else {
        panic!("unreadable: {seen:?}")
    };
    assert!(why.contains("out of the fleet's directory"), "{why}");
    assert!(matches!(
        look_at(dir.path(), "worker-1"),
        ArtifactSeen::Unreadable(_)
    ));
    std::fs::write(dir.path().join("bin"), [0xff, 0xfe]).unwrap();
    assert_eq!(
        look_at(dir.path(), "bin"),
        ArtifactSeen::Unreadable("it is not UTF-8 text".into())
    );
}

#[tokio::test]
async fn a_failing_check_bounces_with_its_outputs_tail() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "worker-1/report.md",
        "A report with its Conclusion.",
    );
    let task = report_task(r#"[{"run": "echo compiling; echo '2 tests failed' >&2; exit 3"}]"#);
    let Verdict::Bounced(why) = accept(dir.path(), &task, LONG).await else {
        panic!("bounced")
    };
    let [Shortfall::CheckFailed { exit, tail, .. }] = why.as_slice() else {
        panic!("{why:?}")
    };
    assert_eq!(*exit, Some(3));
    assert_eq!(
        tail, "compiling\n2 tests failed\n",
        "stdout and stderr in order"
    );
    let passing = report_task(r#"[{"run": "test -f report.md && echo ok", "cwd": "worker-1"}]"#);
    let Verdict::Accepted(evidence) = accept(dir.path(), &passing, LONG).await else {
        panic!("accepted")
    };
    assert_eq!(evidence.checks[0].tail, "ok\n");
}

#[tokio::test]
async fn a_check_past_the_timeout_is_killed_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let run = "sleep 300 & echo $! > child.pid; echo started; wait";
    let ran = run_check(dir.path(), run, ".", Duration::from_millis(500)).await;
    assert!(ran.timed_out, "{ran:?}");
    assert_eq!(ran.exit, None);
    assert_eq!(ran.tail, "started\n");
    let pid = std::fs::read_to_string(dir.path().join("child.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    // Gone, or dead and waiting for whoever reaps orphans here.
    let dead = || {
        std::fs::read_to_string(&stat).map_or(true, |s| {
            s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z'))
        })
    };
    for _ in 0..100 {
        if dead() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the check's background process {pid} still runs");
}

#[tokio::test]
async fn a_check_cwd_outside_the_directory_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/", dir.path().join("root")).unwrap();
    let ran = run_check(dir.path(), "touch escaped", "root", LONG).await;
    assert_eq!(ran.exit, None);
    assert!(
        ran.tail.contains("out of the fleet's directory"),
        "{}",
        ran.tail
    );
    assert!(!Path::new("/escaped").exists());
}
