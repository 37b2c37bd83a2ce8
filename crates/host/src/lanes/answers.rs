//! Sending what a lane owes the senders of the messages it answered: each
//! a reply threaded to its message, from the lane, with the turn's result.
//! Owed replies are on disk with the turn's end; each has a fixed id, so a
//! retry after a crash stores it once. A reply the router refuses (the
//! sender is gone, or no longer shares a group) is dropped with a warning.

use flotilla_actors::protocol::ReplyArgs;
use ractor::rpc::CallResult;

use super::lane::LaneState;
use crate::router::RouterMsg;

impl LaneState {
    /// Sends the owed replies, oldest first; stops at the first one the
    /// router could not take (tried again at the next tick).
    pub(super) async fn pay_replies(&mut self) {
        while let Some(owed) = self.record.replies_owed.first().cloned() {
            let Some(id) = owed.id(&self.record, 0) else {
                self.record.replies_owed.remove(0);
                continue;
            };
            let args = ReplyArgs {
                as_peer: self.record.spec.name.clone(),
                to_message: owed.to.clone(),
                summary: Some(owed.summary.clone()),
                body: owed.body.clone(),
                id: Some(id),
            };
            let Some(router) = self.ctx.children.router() else {
                return;
            };
            match router.call(|r| RouterMsg::Reply(args, r), None).await {
                Ok(CallResult::Success(Ok(_))) => {}
                Ok(CallResult::Success(Err(e))) => {
                    tracing::warn!(lane = %self.record.spec.name, to = %owed.to, error = %e, "could not answer a message");
                }
                _ => return,
            }
            self.record.replies_owed.remove(0);
            self.save().await;
        }
    }
}
