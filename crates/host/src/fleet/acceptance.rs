//! Gathers the facts of a step's acceptance: what is at each declared
//! artifact's path (never following a path out of the fleet's directory)
//! and what each of the author's checks does when run by the daemon, with
//! the fleet's timeout, in its own process group (killed whole at the
//! timeout). Judging the facts is `flotilla_actors::fleet::judge`'s job.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use flotilla_actors::fleet::acceptance::tail;
use flotilla_actors::fleet::{
    ArtifactSeen, CheckRan, FleetSpec, Place, PlaceFacts, Task, Verdict, judge, judge_across,
};
use flotilla_actors::protocol::{ControlError, ErrorCode, FleetCheckArgs, FleetCheckReply};
use rustix::process::Signal;
use tokio::io::AsyncReadExt;

use crate::context::HostContext;
use crate::lanes::process::signal_group;

/// The largest artifact read; a bigger one is unreadable, not truncated.
pub const MAX_ARTIFACT_BYTES: u64 = 16 * 1024 * 1024;

/// Output of a check kept while it runs (its tail is what counts).
const KEPT_OUTPUT: usize = 64 * 1024;

/// Reads every artifact of `task` and runs its checks in `dir`, then
/// judges the step.
pub async fn accept(dir: &Path, task: &Task, timeout: Duration) -> Verdict {
    let seen: Vec<ArtifactSeen> = task
        .artifacts
        .iter()
        .map(|a| look_at(dir, &a.path))
        .collect();
    let mut ran = Vec::with_capacity(task.checks.len());
    for check in &task.checks {
        ran.push(run_check(dir, &check.run, &check.cwd, timeout).await);
    }
    judge(task, &seen, &ran)
}

/// Judges a step of `role` where it works (its claim's worktree, or the
/// fleet's directory), or the whole task (`role` is `None`) across every
/// place a worker works ([`flotilla_actors::fleet::places`]).
pub async fn judge_in_place(
    ctx: &HostContext,
    spec: &FleetSpec,
    role: Option<&str>,
    task: &Task,
    timeout: Duration,
) -> Verdict {
    let repo = match spec.workers.iter().any(|w| w.claim.is_some()) {
        true => match crate::governance::Repo::open(ctx, &spec.dir).await {
            Ok(repo) => Some(repo),
            Err(e) => {
                let why = format!("the fleet's repository cannot be opened: {}", e.message);
                return Verdict::unreadable(task, &why);
            }
        },
        false => None,
    };
    let dir = |place: &Place| match (place, &repo) {
        (Place::Claim(id), Some(repo)) => repo.worktree(id),
        _ => PathBuf::from(&spec.dir),
    };
    if let Some(role) = role {
        return accept(&dir(&spec.place_of(role)), task, timeout).await;
    }
    let mut facts = Vec::new();
    for place in spec.places() {
        let at = dir(&place);
        let seen = task
            .artifacts
            .iter()
            .map(|a| look_at(&at, &a.path))
            .collect();
        let mut ran = None;
        if spec.worked_in(&place) {
            let mut done = Vec::with_capacity(task.checks.len());
            for check in &task.checks {
                done.push(run_check(&at, &check.run, &check.cwd, timeout).await);
            }
            ran = Some(done);
        }
        facts.push(PlaceFacts { place, seen, ran });
    }
    judge_across(task, &facts)
}

/// The longest a check may run.
pub const MAX_CHECK_TIME: Duration = Duration::from_secs(24 * 3600);

/// `fleet.check`: judges a task's definition of done in a directory now.
pub async fn check(args: FleetCheckArgs) -> Result<FleetCheckReply, ControlError> {
    let bad = |message: String, hint: &str| {
        ControlError::new(ErrorCode::BadRequest, message).with_hint(hint.to_owned())
    };
    args.task
        .validate()
        .map_err(|e| bad(e.to_string(), "fix the task; see docs/fleets.md#tasks"))?;
    let timeout = Duration::from_millis(args.timeout_ms);
    if timeout.is_zero() || timeout > MAX_CHECK_TIME {
        return Err(bad(
            format!(
                "a check's timeout of {} ms is out of range",
                args.timeout_ms
            ),
            "give between 1 ms and 24 h",
        ));
    }
    let dir = Path::new(&args.dir);
    let dir = match dir.canonicalize() {
        Ok(dir) if dir.is_dir() && Path::new(&args.dir).is_absolute() => dir,
        _ => {
            return Err(bad(
                format!(
                    "{:?} is not an existing directory given by its absolute path",
                    args.dir
                ),
                "pass the fleet's directory with -C DIR",
            ));
        }
    };
    let (accepted, shortfalls, evidence) = match accept(&dir, &args.task, timeout).await {
        Verdict::Accepted(evidence) => (true, Vec::new(), Some(evidence)),
        Verdict::Bounced(shortfalls) => (false, shortfalls, None),
    };
    Ok(FleetCheckReply {
        schema: "flotilla.fleet-check.v1".to_owned(),
        dir: dir.display().to_string(),
        accepted,
        shortfalls,
        evidence,
    })
}

/// The directory judged, as errors name it.
const FLEET_DIR: &str = "the fleet's directory";

/// `rel` inside `dir` (called `what` in errors), resolved; an error says
/// why it is not usable.
fn resolve(dir: &Path, rel: &str, what: &str) -> Result<PathBuf, String> {
    let root = dir
        .canonicalize()
        .map_err(|e| format!("{what} {} cannot be read: {e}", dir.display()))?;
    let path = root.join(rel);
    let real = path.canonicalize().map_err(|e| e.to_string())?;
    if !real.starts_with(&root) {
        return Err(format!("it leads out of {what} (to {})", real.display()));
    }
    Ok(real)
}

/// What is at `rel` in the fleet's directory `dir`.
pub fn look_at(dir: &Path, rel: &str) -> ArtifactSeen {
    look(dir, rel, MAX_ARTIFACT_BYTES, FLEET_DIR)
}

/// What is at `rel` in `dir` (called `what` in errors): the text of a
/// regular UTF-8 file of at most `max_bytes`, never following a path out
/// of `dir`.
pub fn look(dir: &Path, rel: &str, max_bytes: u64, what: &str) -> ArtifactSeen {
    let unresolved = dir.join(rel);
    if std::fs::symlink_metadata(&unresolved).is_err() {
        return ArtifactSeen::Missing;
    }
    let real = match resolve(dir, rel, what) {
        Ok(real) => real,
        Err(why) => return ArtifactSeen::Unreadable(why),
    };
    let meta = match std::fs::metadata(&real) {
        Ok(meta) => meta,
        Err(e) => return ArtifactSeen::Unreadable(e.to_string()),
    };
    if !meta.is_file() {
        return ArtifactSeen::Unreadable("it is not a regular file".to_owned());
    }
    if meta.len() > max_bytes {
        return ArtifactSeen::Unreadable(format!(
            "it holds {} bytes; at most {max_bytes} are read",
            meta.len()
        ));
    }
    match std::fs::read(&real).map(String::from_utf8) {
        Ok(Ok(text)) => ArtifactSeen::Text(text),
        Ok(Err(_)) => ArtifactSeen::Unreadable("it is not UTF-8 text".to_owned()),
        Err(e) => ArtifactSeen::Unreadable(e.to_string()),
    }
}

/// Runs one check with `sh -c` in `cwd` (inside `dir`), stdout and
/// stderr interleaved, killed with its whole process group at `timeout`.
pub async fn run_check(dir: &Path, run: &str, cwd: &str, timeout: Duration) -> CheckRan {
    let refused = |why: String| CheckRan {
        run: run.to_owned(),
        exit: None,
        timed_out: false,
        tail: why,
    };
    let cwd = match resolve(dir, cwd, FLEET_DIR) {
        Ok(cwd) if cwd.is_dir() => cwd,
        Ok(_) => return refused(format!("its cwd {cwd:?} is not a directory")),
        Err(why) => return refused(format!("its cwd {cwd:?} cannot be used: {why}")),
    };
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(format!("exec 2>&1\n{run}"))
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return refused(format!("sh could not start: {e}")),
    };
    let pid = child.id();
    let mut output = child.stdout.take();
    let mut kept = Vec::new();
    let finished = tokio::time::timeout(timeout, async {
        if let Some(out) = output.as_mut() {
            keep_tail(out, &mut kept).await;
        }
        child.wait().await
    })
    .await;
    let (exit, timed_out) = match finished {
        Ok(Ok(status)) => (status.code(), false),
        Ok(Err(_)) => (None, false),
        Err(_) => {
            if let Some(pid) = pid {
                signal_group(pid, Signal::KILL);
            }
            let _ = child.wait().await;
            (None, true)
        }
    };
    CheckRan {
        run: run.to_owned(),
        exit,
        timed_out,
        tail: tail(&String::from_utf8_lossy(&kept)),
    }
}

/// Reads `out` to its end, keeping the last [`KEPT_OUTPUT`] bytes.
async fn keep_tail(out: &mut tokio::process::ChildStdout, kept: &mut Vec<u8>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = out.read(&mut buf).await {
        if n == 0 {
            return;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > 2 * KEPT_OUTPUT {
            kept.drain(..kept.len() - KEPT_OUTPUT);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
