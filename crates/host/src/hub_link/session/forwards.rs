//! How the link hands the hub the messages waiting for it: from the
//! writer's feed as soon as a group is applied, else from the outbox in the
//! store, in order and within the window; and the whole outbox again once
//! a transient refusal's backoff has passed.
//!
//! Owns the link's position in the outbox; must not read or write frames
//! other than forwards and the roster changes that lead them.

use flotilla_actors::federation::ForwardOutcome;
use flotilla_actors::store::forward_feed::Next;

use super::{Link, WINDOW};

impl Link<'_> {
    /// Once a resend is due and every forward is answered, hands the hub
    /// the whole outbox again from its start (what it refused for now is
    /// still there, in order).
    pub(super) async fn resend_if_due(&mut self) -> Result<(), String> {
        if self
            .resend
            .take_due(std::time::Instant::now(), self.inflight)
        {
            tracing::info!("sending the messages the hub could not store again");
            self.forwarded_to = 0;
            self.pump().await?;
        }
        Ok(())
    }

    /// Drops a stored message whose frame could never be written (an older
    /// release accepted it), as if the hub had refused it.
    async fn drop_unsendable(
        &mut self,
        forward: flotilla_actors::federation::Forward,
        outcome: ForwardOutcome,
    ) -> Result<(), String> {
        tracing::warn!(id = %forward.message.id, "a message too large for the hub link is dropped");
        let stored = self
            .ctx
            .commit
            .submit_forwarded(forward.message.id, outcome)
            .await
            .map_err(|e| format!("cannot store: {e}"))?;
        self.after(async move { stored.await.map(|()| None) });
        Ok(())
    }

    /// Hands the hub the messages waiting for it, in order, up to the
    /// window, each batch after any change of this host's peers (so the
    /// hub knows every sender first).
    pub(super) async fn pump(&mut self) -> Result<(), String> {
        if self.inflight > 0 && self.resend.is_due(std::time::Instant::now()) {
            return Ok(());
        }
        while self.inflight < WINDOW {
            let room = WINDOW - self.inflight;
            let feed = self.ctx.commit.forward_feed();
            let batch = match feed.next(&mut self.forwarded_to, room) {
                Next::Forwards(batch) => batch,
                Next::ReadStore => self
                    .ctx
                    .store
                    .pending_forwards(&self.ctx.host, self.forwarded_to, room)
                    .map_err(|e| format!("cannot read the outbox: {e}"))?,
            };
            if batch.is_empty() {
                return Ok(());
            }
            let last = batch.last().map(|(pos, _)| *pos);
            let mut forwards = Vec::with_capacity(batch.len());
            for (_, forward) in batch {
                match crate::frame_fit::unsendable(&forward) {
                    None => forwards.push(forward),
                    Some(outcome) => self.drop_unsendable(forward, outcome).await?,
                }
            }
            let count = forwards.len();
            let frames = self
                .roster
                .lead(&self.ctx.host, &self.ctx.directory(), forwards);
            for frame in frames {
                self.write(frame).await?;
            }
            self.forwarded_to = last.unwrap_or(self.forwarded_to);
            self.inflight += count;
        }
        Ok(())
    }
}
