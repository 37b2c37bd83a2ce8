//! The hub's running clock, which measures how long a message waits in a
//! queue: milliseconds that advance only while the hub runs, by the
//! monotonic clock. A step of the wall clock (forward or back) does not
//! move it, and the time the hub was down does not count: at start it
//! resumes from the last reading the store kept (its "alive" watermark),
//! not from the wall clock. A store without one (new, or of an older
//! release, whose queue times are wall-clock milliseconds) starts from the
//! wall clock, so what it holds keeps its age. Pure: no IO.

use std::time::Instant;

/// Milliseconds of hub running time.
#[derive(Debug, Clone, Copy)]
pub struct HubClock {
    /// The reading at `started`.
    base_ms: u64,
    started: Instant,
}

impl HubClock {
    /// A clock that resumes at `watermark` (the last reading kept), or
    /// starts at `wall_ms` when there is none.
    pub fn resume(watermark: Option<u64>, wall_ms: u64) -> Self {
        Self {
            base_ms: watermark.unwrap_or(wall_ms),
            started: Instant::now(),
        }
    }

    /// The reading now.
    pub fn now_ms(&self) -> u64 {
        self.at(Instant::now())
    }

    /// The reading at `instant` (not before the clock started).
    fn at(&self, instant: Instant) -> u64 {
        let ran = instant.saturating_duration_since(self.started).as_millis();
        self.base_ms
            .saturating_add(u64::try_from(ran).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_store_without_a_watermark_starts_at_the_wall_clock() {
        let clock = HubClock::resume(None, 5_000);
        assert_eq!(clock.at(clock.started), 5_000);
    }

    #[test]
    fn downtime_and_wall_clock_steps_do_not_count() {
        // Kept 1000 ms of running time; the wall clock says a year later.
        let clock = HubClock::resume(Some(1_000), 1_000 + 365 * 24 * 3600 * 1000);
        assert_eq!(clock.at(clock.started), 1_000);
        let later = clock.started + Duration::from_millis(2_500);
        assert_eq!(clock.at(later), 3_500, "only running time counts");
    }
}
