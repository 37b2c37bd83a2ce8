//! Judging a remote worker's step: what its host has at each artifact's
//! path (`lane.files`, through the hub) is judged by the same rules as a
//! local step, and the artifacts of an accepted step are brought home into
//! the fleet's directory, never through a folder that leads out of it.
//! Decides nothing else; [`super::remote`] drives the member's lane.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use flotilla_actors::fleet::{ArtifactSeen, FleetSpec, Shortfall, Task, Verdict, judge};
use flotilla_actors::names::HostName;
use flotilla_actors::protocol::LaneFilesReply;
use serde_json::json;

use crate::context::HostContext;

/// Judges a remote worker's step on what its host has at each artifact's
/// path, and brings the artifacts of an accepted step home.
pub(super) async fn judge_step(
    ctx: &Arc<HostContext>,
    spec: &FleetSpec,
    role: &str,
    host: &HostName,
    task: &Task,
) -> Verdict {
    let paths: Vec<&str> = task.artifacts.iter().map(|a| a.path.as_str()).collect();
    let args = json!({"name": spec.lane_of(role), "paths": paths});
    let reply: LaneFilesReply = match super::remote::call(ctx, spec, host, "lane.files", args).await
    {
        Ok(reply) => reply,
        Err(e) => {
            let why = format!("{host} could not be asked for it: {}", e.message);
            return Verdict::unreadable(task, &why);
        }
    };
    let seen: Vec<ArtifactSeen> = task
        .artifacts
        .iter()
        .map(|a| match reply.files.iter().find(|f| f.path == a.path) {
            Some(file) => file.seen(),
            None => ArtifactSeen::Unreadable(format!("{host} did not answer for it")),
        })
        .collect();
    let verdict = judge(task, &seen, &[]);
    if matches!(verdict, Verdict::Accepted(_)) {
        let dir = PathBuf::from(&spec.dir);
        for (artifact, seen) in task.artifacts.iter().zip(&seen) {
            if let ArtifactSeen::Text(text) = seen
                && let Err(why) = bring_home(&dir, &artifact.path, text)
            {
                return Verdict::Bounced(vec![Shortfall::Unreadable {
                    path: artifact.path.clone(),
                    why: format!("it could not be brought home into the fleet's directory: {why}"),
                }]);
            }
        }
    }
    verdict
}

/// Writes `text` at `rel` in `dir` (a new file, then renamed over the
/// old), never outside `dir`: a parent that leads out of it is refused.
fn bring_home(dir: &Path, rel: &str, text: &str) -> Result<(), String> {
    let root = dir.canonicalize().map_err(|e| e.to_string())?;
    let target = root.join(rel);
    let parent = target.parent().ok_or("it names no file")?;
    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    let real_parent = parent.canonicalize().map_err(|e| e.to_string())?;
    if !real_parent.starts_with(&root) {
        return Err(format!(
            "its folder leads out of it (to {})",
            real_parent.display()
        ));
    }
    let file = target.file_name().ok_or("it names no file")?;
    let fresh = real_parent.join(format!(".{}.from-host", file.to_string_lossy()));
    std::fs::write(&fresh, text).map_err(|e| e.to_string())?;
    std::fs::rename(&fresh, real_parent.join(file)).map_err(|e| {
        let _ = std::fs::remove_file(&fresh);
        e.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::bring_home;

    #[test]
    fn an_artifact_comes_home_but_never_through_a_folder_that_leads_out() {
        let home = tempfile::tempdir().expect("dir");
        let outside = tempfile::tempdir().expect("dir");
        bring_home(home.path(), "worker-1/report.md", "hello").expect("written");
        let text = std::fs::read_to_string(home.path().join("worker-1/report.md")).expect("read");
        assert_eq!(text, "hello");
        bring_home(home.path(), "worker-1/report.md", "again").expect("replaced");
        let text = std::fs::read_to_string(home.path().join("worker-1/report.md")).expect("read");
        assert_eq!(text, "again");
        std::os::unix::fs::symlink(outside.path(), home.path().join("out")).expect("link");
        let why = bring_home(home.path(), "out/x.md", "escape").expect_err("refused");
        assert!(why.contains("leads out"), "{why}");
        assert!(
            !outside.path().join("x.md").exists(),
            "nothing written outside"
        );
    }
}
