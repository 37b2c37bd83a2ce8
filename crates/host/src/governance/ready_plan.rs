//! The plan review of `ready`: a lane of the CLI asked for (or, when that
//! one is missing, of the first installed candidate, saying so) reads the
//! profile and the plan in a scratch directory of its own and returns the
//! review gate's verdict shape, bounced once when malformed
//! ([`super::reviewer_lane`]).
//!
//! Owns the scratch directory and the lane's start. Must not run in, or
//! write to, the repository's checkout, and records nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use flotilla_actors::governance::plan_review::{PLAN_FILE, PROFILE_FILE, plan_prompt, route_cli};
use flotilla_actors::governance::{PlanOutcome, PlanReview, Profile};
use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{ControlError, LaneStartArgs};

use super::reviewer_lane;
use crate::context::HostContext;

/// Tells this daemon's plan lanes apart within one millisecond.
static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// Who should review, and who can.
#[derive(Debug)]
pub(super) struct Want<'a> {
    /// The CLI asked for.
    pub(super) cli: Option<CliKind>,
    /// Its model; dropped when another CLI stands in.
    pub(super) model: Option<String>,
    /// The CLIs to try, in order.
    pub(super) candidates: &'a [CliKind],
    /// The CLIs that can run here.
    pub(super) installed: &'a [CliKind],
}

/// Reviews `plan` against `profile`; every way it can end is a
/// [`PlanReview`], never an error.
pub(super) async fn review(
    ctx: &Arc<HostContext>,
    want: Want<'_>,
    profile: &Profile,
    plan: &str,
) -> PlanReview {
    let route = route_cli(want.cli, want.candidates, want.installed);
    let mut review = PlanReview {
        reviewer: route.cli,
        routed_from: route.routed_from,
        note: route.note.clone(),
        lane: None,
        outcome: PlanOutcome::NotRun,
        verdict: None,
        why: None,
    };
    let Some(cli) = route.cli else {
        review.why = route.note;
        return review;
    };
    let model = want.model.filter(|_| route.routed_from.is_none());
    match run(ctx, cli, model, profile, plan).await {
        Ok((lane, said)) => {
            review.lane = Some(lane);
            match said {
                Ok(verdict) => {
                    review.outcome = if verdict.blocking.is_empty() {
                        PlanOutcome::Pass
                    } else {
                        PlanOutcome::Fail
                    };
                    review.verdict = Some(verdict);
                }
                Err(why) => {
                    review.outcome = PlanOutcome::Bounced;
                    review.why = Some(why);
                }
            }
        }
        Err(e) => {
            let hint = e.hint.map(|h| format!(" ({h})")).unwrap_or_default();
            review.why = Some(format!("{}{hint}", e.message));
        }
    }
    review
}

/// Starts the lane in a fresh scratch directory holding the plan and the
/// profile, and removes the directory once the verdict is in.
async fn run(
    ctx: &Arc<HostContext>,
    cli: CliKind,
    model: Option<String>,
    profile: &Profile,
    plan: &str,
) -> Result<(String, reviewer_lane::Said), ControlError> {
    let name = lane_name();
    let dir = scratch_dir(ctx, &name, profile, plan)?;
    let json = serde_json::json!({
        "name": name,
        "cli": cli,
        "cwd": dir.to_string_lossy(),
        "model": model,
        "persistent": true,
        "auto_archive_secs": 600,
        "prompt": plan_prompt(profile, plan),
    });
    let start: LaneStartArgs =
        serde_json::from_value(json).map_err(|e| ControlError::internal(e.to_string()))?;
    let judged = reviewer_lane::judge(ctx, start).await;
    let _ = std::fs::remove_dir_all(&dir);
    judged
}

/// `ready-plan-` and a name no other plan lane of this daemon has.
fn lane_name() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed) % 4096;
    format!("ready-plan-{millis:x}-{n:x}")
}

/// A private directory for the lane, under the home's worktrees, with
/// `plan.md` and `profile.toml`.
fn scratch_dir(
    ctx: &HostContext,
    name: &str,
    profile: &Profile,
    plan: &str,
) -> Result<PathBuf, ControlError> {
    let fail = |e: String| ControlError::internal(format!("cannot prepare the plan's lane: {e}"));
    let parent = ctx.home.worktrees_dir().join(".ready");
    crate::home::create_private(&parent).map_err(|e| fail(e.to_string()))?;
    let dir = parent.join(name);
    std::fs::create_dir(&dir).map_err(|e| fail(e.to_string()))?;
    std::fs::write(dir.join(PLAN_FILE), plan).map_err(|e| fail(e.to_string()))?;
    std::fs::write(dir.join(PROFILE_FILE), profile.to_toml()).map_err(|e| fail(e.to_string()))?;
    Ok(dir)
}
