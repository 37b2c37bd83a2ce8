//! Supervision helpers shared by the host's and the hub's supervisors: the
//! restart policy (bounded exponential backoff) as plain, clock-free logic.

use std::time::Duration;

/// Restart policy of one child: the delay doubles from `base` up to `max`
/// with each failure, and the count starts over once the child has run for
/// `stable` without failing.
#[derive(Debug, Clone)]
pub struct Backoff {
    /// First delay.
    pub base: Duration,
    /// Largest delay.
    pub max: Duration,
    /// A run this long without failure resets the count.
    pub stable: Duration,
    failures: u32,
}

impl Backoff {
    /// A policy.
    pub fn new(base: Duration, max: Duration, stable: Duration) -> Self {
        Self {
            base,
            max,
            stable,
            failures: 0,
        }
    }

    /// Records a failure after the child ran for `ran_for`; returns how long
    /// to wait before restarting it.
    pub fn on_failure(&mut self, ran_for: Duration) -> Duration {
        if ran_for >= self.stable {
            self.failures = 0;
        }
        let exp = self.failures.min(20);
        self.failures = self.failures.saturating_add(1);
        self.base.saturating_mul(1u32 << exp).min(self.max)
    }

    /// Failures since the last stable run.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(
            Duration::from_millis(50),
            Duration::from_secs(10),
            Duration::from_secs(30),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap_and_resets_after_a_stable_run() {
        let mut b = Backoff::new(
            Duration::from_millis(10),
            Duration::from_millis(70),
            Duration::from_secs(5),
        );
        let short = Duration::from_millis(1);
        let delays: Vec<u128> = (0..5).map(|_| b.on_failure(short).as_millis()).collect();
        assert_eq!(delays, [10, 20, 40, 70, 70]);
        assert_eq!(b.on_failure(Duration::from_secs(6)).as_millis(), 10);
    }
}
