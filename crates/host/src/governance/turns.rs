//! A run record for each turn a lane ends in a claim's worktree (how it
//! ended, what it said, the branch's head then) and for each handoff of a
//! fleet's worker on a claim. Before that, what a completed turn
//! left uncommitted there is committed on the claim's branch for the lane
//! (a lane under the sandbox rule may have no shell to commit with).
//!
//! The claim is known from the lane's directory alone (a claim's worktree
//! is `worktrees/<repo>/<claim>` under the host's state), so lanes need no
//! field for it. Best effort and in the background: a record that cannot be
//! written is logged, and the turn's result is not held for it.

use std::path::Path;
use std::sync::Arc;

use flotilla_actors::fleet::rotation::HandoffNote;
use flotilla_actors::governance::record::turn_summary;
use flotilla_actors::governance::{ClaimId, Entry};

use super::Repo;
use crate::context::HostContext;

/// Records that `lane`'s turn in `cwd` ended with `status`, saying
/// `said` (its answer or error), when `cwd` is a claim's worktree on this
/// host.
pub(crate) fn record_later(
    ctx: &Arc<HostContext>,
    cwd: &str,
    lane: String,
    status: String,
    said: &str,
) {
    let Some(id) = claim_of(&ctx.home.worktrees_dir(), Path::new(cwd)) else {
        return;
    };
    let (ctx, cwd, summary) = (ctx.clone(), cwd.to_owned(), turn_summary(said));
    tokio::spawn(async move {
        let result = async {
            let repo = Repo::open(&ctx, &cwd).await?;
            let head = repo.git.commit_of("HEAD").await.ok().flatten();
            let entry = Entry::Turn {
                lane,
                status,
                head,
                summary,
            };
            super::claims::append(&ctx, &repo, &id, entry).await
        };
        if let Err(e) = result.await {
            tracing::warn!(claim = %id, "the turn's run record was not written: {}", e.message);
        }
    });
}

/// Records that a fleet's `lane`, working on claim `id` of the repository
/// at `dir`, handed over to a fresh session with `note`.
pub(crate) fn record_handoff_later(
    ctx: &Arc<HostContext>,
    dir: &str,
    id: ClaimId,
    lane: String,
    note: HandoffNote,
) {
    let (ctx, dir) = (ctx.clone(), dir.to_owned());
    tokio::spawn(async move {
        let result = async {
            let repo = Repo::open(&ctx, &dir).await?;
            super::claims::append(&ctx, &repo, &id, Entry::Handoff { lane, note }).await
        };
        if let Err(e) = result.await {
            tracing::warn!(claim = %id, "the handoff's run record was not written: {}", e.message);
        }
    });
}

/// Commits what `lane`'s completed turn left uncommitted in `cwd`, when
/// `cwd` is a claim's worktree: through the worktree's hooks (a sensitive
/// path is refused as for the lane's own commit), as the lane. Returns
/// what to note in the lane's events.
pub(crate) async fn commit_left_work(
    ctx: &HostContext,
    cwd: &str,
    lane: &str,
    turn: u32,
) -> Option<String> {
    claim_of(&ctx.home.worktrees_dir(), Path::new(cwd))?;
    let git = super::git::Git::at(Path::new(cwd));
    let message = format!(
        "{lane} turn {turn}\n\nCommitted by Flotilla: what the turn left uncommitted in its claim's worktree."
    );
    let email = format!("{}@flotilla.invalid", lane.replace('/', "."));
    match git.commit_all(&message, (lane, &email)).await {
        Ok(None) => None,
        Ok(Some(sha)) => Some(format!(
            "committed what the turn left uncommitted on the claim's branch: {}",
            sha.get(..12).unwrap_or(&sha)
        )),
        Err(e) => Some(format!("the turn's changes were left uncommitted: {e}")),
    }
}

/// The claim whose worktree `cwd` is, under `root`.
fn claim_of(root: &Path, cwd: &Path) -> Option<ClaimId> {
    let inside = cwd.strip_prefix(root).ok()?;
    let parts: Vec<_> = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    match parts.as_slice() {
        [repo, claim] if !repo.starts_with('.') => ClaimId::parse(claim).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_claims_own_worktree_names_a_claim() {
        let root = Path::new("/s/worktrees");
        let id = claim_of(root, Path::new("/s/worktrees/app-1a2b/fix-it"));
        assert_eq!(id.map(|i| i.to_string()).as_deref(), Some("fix-it"));
        for other in [
            "/s/worktrees/app-1a2b/fix-it/sub",
            "/s/worktrees/.review/fix-it-r1",
            "/tmp/x",
            "/s/worktrees/app",
        ] {
            assert!(claim_of(root, Path::new(other)).is_none(), "{other}");
        }
    }
}
