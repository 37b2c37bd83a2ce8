//! How a lane's state reaches the store, through the commit queue: the
//! record alone, the record with a turn's events and what changed with them
//! in one transaction, or events alone. A failure is logged here; the
//! callers decide what changes, and this module must not.

use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::store::LaneWrite;

use super::lane::LaneState;

impl LaneState {
    pub(super) async fn save(&self) {
        if let Err(e) = self.ctx.commit.put_lane(self.record.clone()).await {
            tracing::error!(lane = %self.record.spec.name, error = %e, "could not save the lane");
        }
    }

    /// Saves the record with events of `turn` and what changed with it, in
    /// one transaction.
    pub(super) async fn save_with(
        &self,
        turn: u32,
        events: Vec<EventKind>,
        change: impl FnOnce(&mut LaneWrite),
    ) {
        if let Err(e) = self.try_save_with(turn, events, change).await {
            tracing::error!(lane = %self.record.spec.name, error = %e, "could not save the lane");
        }
    }

    /// [`Self::save_with`], telling the caller when it could not.
    pub(super) async fn try_save_with(
        &self,
        turn: u32,
        events: Vec<EventKind>,
        change: impl FnOnce(&mut LaneWrite),
    ) -> Result<(), flotilla_actors::store::StoreError> {
        let mut w = LaneWrite::record(self.record.clone());
        w.turn = turn;
        w.events = events;
        change(&mut w);
        self.ctx.commit.write_lane(w).await.map(drop)
    }

    pub(super) async fn log(&self, turn: u32, kinds: Vec<EventKind>) -> Vec<LaneEvent> {
        match self
            .ctx
            .commit
            .append_events(self.record.spec.name.as_str(), turn, kinds)
            .await
        {
            Ok(events) => events,
            Err(e) => {
                tracing::error!(lane = %self.record.spec.name, error = %e, "could not record lane events");
                Vec::new()
            }
        }
    }
}
