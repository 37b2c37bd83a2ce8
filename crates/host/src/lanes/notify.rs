//! Telling a lane's owner how a turn ended: a message from the lane's peer
//! to the owner's inbox, with a one-line summary and how to collect the
//! result. Its id is fixed per lane incarnation and turn, so a retry after a
//! crash never stores it twice. Until it is stored the notice is owed (on
//! disk, saved with the turn's end). The owed notices are sent off the
//! lane's actor, oldest first and one batch at a time
//! ([`LaneState::pay_notices`]), so a `wait` for the turn's result is not
//! held behind the notice's own commit. Must not touch the turn or the
//! lane's record.

use flotilla_actors::lane::{LaneRecord, TurnResult};
use flotilla_actors::names::{HostName, MessageId};
use flotilla_actors::protocol::SendArgs;
use ractor::rpc::CallResult;

use crate::context::HostContext;
use crate::router::RouterMsg;

use super::lane::{LaneMsg, LaneState};

impl LaneState {
    /// Sends the notices owed, oldest first, on a task of their own unless
    /// a batch is already on its way; the lane hears back which were
    /// stored or refused ([`Self::notices_paid`]). One that could not be
    /// sent stays owed for the next tick.
    pub(super) fn pay_notices(&mut self) {
        if self.notifying || self.owed.is_empty() {
            return;
        }
        self.notifying = true;
        let owed: Vec<(u32, TurnResult)> = self.owed.iter().map(|(t, r)| (*t, r.clone())).collect();
        let (ctx, record, lane) = (self.ctx.clone(), self.record.clone(), self.myself.clone());
        tokio::spawn(async move {
            let mut turns = Vec::new();
            for (turn, result) in owed {
                if !owner(&ctx, &record, turn, &result).await
                    || !told(&ctx, &record, turn, &result).await
                {
                    let _ = lane.cast(LaneMsg::NoticesPaid { turns, all: false });
                    return;
                }
                turns.push(turn);
            }
            let _ = lane.cast(LaneMsg::NoticesPaid { turns, all: true });
        });
    }

    /// The notices of `turns` are paid; with `all`, any owed since are sent
    /// now.
    pub(super) fn notices_paid(&mut self, turns: Vec<u32>, all: bool) {
        for turn in turns {
            self.owed.remove(&turn);
        }
        self.notifying = false;
        if all {
            self.pay_notices();
        }
    }
}

/// The owner was told of `turn`: its turn record is written in the claim's
/// worktree later, and that the notice was sent is recorded (committed
/// without an fsync: a crash before it is on disk only sends the notice
/// again, stored once). False when it could not be recorded.
async fn told(
    ctx: &std::sync::Arc<HostContext>,
    record: &LaneRecord,
    turn: u32,
    result: &TurnResult,
) -> bool {
    let status = serde_json::to_value(result.status).ok();
    let status = status.as_ref().and_then(|s| s.as_str()).unwrap_or("ended");
    let lane =
        flotilla_actors::names::PeerId::new(ctx.host.clone(), record.spec.name.clone()).to_string();
    let said = result.result.as_deref().or(result.error.as_deref());
    crate::governance::turns::record_later(
        ctx,
        &record.spec.cwd,
        lane,
        status.to_owned(),
        said.unwrap_or_default(),
    );
    let name = record.spec.name.as_str();
    match ctx.commit.notice_sent(name, turn).await {
        Ok(()) => {
            crate::crash_point::reached(ctx, "lane.notice_sent");
            true
        }
        Err(e) => {
            tracing::error!(lane = name, error = %e, "could not record the owner's notice");
            false
        }
    }
}

/// Sends the terminal status of `turn` to the lane's owner; false when it
/// should be tried again (the router is restarting or did not answer). A
/// refusal (the owner is gone) is final: true.
pub(super) async fn owner(
    ctx: &HostContext,
    record: &LaneRecord,
    turn: u32,
    result: &TurnResult,
) -> bool {
    let name = &record.spec.name;
    let Ok(id) = MessageId::new(
        &format!(
            "lane-{}-{}-t{turn}",
            record.created_at.0,
            name.as_str().replace('.', "_")
        )[..],
    ) else {
        return true;
    };
    let summary = result.summary_line(turn);
    let detail = serde_json::to_string_pretty(result).unwrap_or_default();
    let wait = collect_command(record, &ctx.host);
    let body = format!("{summary}\n\ncollect the result with: {wait}\n\n{detail}");
    let args = SendArgs {
        as_peer: name.clone(),
        to: vec![record.spec.owner.to_string()],
        summary: Some(flotilla_actors::lane::events::clip(&summary, 250)),
        body,
        id: Some(id),
    };
    let Some(router) = ctx.children.router() else {
        tracing::warn!(lane = %name, "the router is restarting; the owner will be told later");
        return false;
    };
    match router
        .call(|r| RouterMsg::Send(args.clone(), r), None)
        .await
    {
        Ok(CallResult::Success(Ok(_))) => true,
        Ok(CallResult::Success(Err(e))) => {
            tracing::warn!(lane = %name, error = %e, "could not tell the owner");
            true
        }
        _ => {
            tracing::warn!(lane = %name, "could not tell the owner; will try again");
            false
        }
    }
}

/// The command the owner runs to collect the lane's result: from another
/// host (a remote lane's owner) it names the lane's host.
pub(crate) fn collect_command(record: &LaneRecord, lane_host: &HostName) -> String {
    let name = &record.spec.name;
    if &record.spec.owner.host == lane_host {
        format!("flotilla lane wait {name}")
    } else {
        format!("flotilla lane wait {name} --host {lane_host}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::lane::{CliKind, LaneSpec, Permissions};
    use flotilla_actors::model::Timestamp;
    use flotilla_actors::names::{PeerId, PeerName};

    fn record(owner: &str) -> LaneRecord {
        let spec = LaneSpec {
            name: PeerName::new("build").expect("name"),
            cli: CliKind::Exec,
            cwd: "/".into(),
            model: None,
            permissions: Permissions::Default,
            timeout_secs: None,
            persistent: false,
            auto_archive_secs: None,
            groups: vec![],
            inherit_groups: false,
            owner: PeerId::parse(owner).expect("owner"),
            env: vec![],
            args: vec![],
            restart_on_stall: false,
        };
        LaneRecord::new(spec, Timestamp(0))
    }

    #[test]
    fn a_remote_owner_is_told_the_lanes_host() {
        let here = HostName::new("work").expect("host");
        assert_eq!(
            collect_command(&record("work/operator"), &here),
            "flotilla lane wait build"
        );
        assert_eq!(
            collect_command(&record("laptop/lead"), &here),
            "flotilla lane wait build --host work"
        );
    }
}
