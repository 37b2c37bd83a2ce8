//! Per-host frame and byte budgets at the hub: what one linked host may
//! send, as token buckets refilled at a steady rate with a burst's room.
//! A host over budget is slowed (its link is read only as fast as the
//! budget allows, so QUIC holds the host back), and a host that stays over
//! budget for `cut_after` is cut (its link closed, with the reason). The
//! operator sees each host's state in `hub roster` ([`BudgetView`]).
//!
//! Plain logic with an explicit clock, tested without sockets; the link
//! session applies the verdicts and the core keeps the views. Must not
//! touch a connection itself.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use flotilla_actors::model::Timestamp;
use flotilla_actors::names::HostName;
use serde::{Deserialize, Serialize};

/// What one host may send.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetLimits {
    /// Frames per second, sustained.
    pub frames_per_sec: f64,
    /// Bytes per second, sustained.
    pub bytes_per_sec: f64,
    /// Seconds of either rate a quiet host may send at once.
    pub burst_secs: f64,
    /// How long a host may stay over budget before it is cut.
    pub cut_after: Duration,
}

impl Default for BudgetLimits {
    /// Far above what an honest host sends (the hot path's pipelined
    /// target is 10,000 messages a second).
    fn default() -> Self {
        Self {
            frames_per_sec: 50_000.0,
            bytes_per_sec: 256.0 * 1024.0 * 1024.0,
            burst_secs: 2.0,
            cut_after: Duration::from_secs(30),
        }
    }
}

/// The share of its burst a host over budget must leave unused before it
/// counts as within budget again. A single frame found within budget is not
/// enough: the hub's own pacing (a sleep that overshoots by a frame's time)
/// refills the bucket by that frame, and that must not restart the clock
/// that cuts a host flooding without pause.
const RECOVERED_SHARE: f64 = 0.25;

/// What to do with a frame just read.
#[derive(Debug, Clone, PartialEq)]
pub enum Charge {
    /// Within budget: go on.
    Within,
    /// Over budget: wait this long before reading on.
    Slow(Duration),
    /// Over budget for too long: close the link, for this reason.
    Cut(String),
}

/// One link's buckets.
#[derive(Debug, Clone)]
pub struct LinkBudget {
    limits: BudgetLimits,
    frames: f64,
    bytes: f64,
    last: Instant,
    over_since: Option<Instant>,
}

impl LinkBudget {
    /// Full buckets at `now`.
    pub fn new(limits: BudgetLimits, now: Instant) -> Self {
        Self {
            frames: limits.frames_per_sec * limits.burst_secs,
            bytes: limits.bytes_per_sec * limits.burst_secs,
            limits,
            last: now,
            over_since: None,
        }
    }

    /// Charges one frame of `size` bytes read at `now`.
    pub fn charge(&mut self, now: Instant, size: usize) -> Charge {
        let l = &self.limits;
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.frames =
            (self.frames + elapsed * l.frames_per_sec).min(l.frames_per_sec * l.burst_secs);
        self.bytes = (self.bytes + elapsed * l.bytes_per_sec).min(l.bytes_per_sec * l.burst_secs);
        self.frames -= 1.0;
        self.bytes -= size as f64;
        let debt = (-self.frames / l.frames_per_sec).max(-self.bytes / l.bytes_per_sec);
        if debt <= 0.0 {
            if self.recovered() {
                self.over_since = None;
            }
            return Charge::Within;
        }
        let since = *self.over_since.get_or_insert(now);
        if now.saturating_duration_since(since) >= l.cut_after {
            return Charge::Cut(format!(
                "over its budget ({:.0} frames/s, {:.0} bytes/s) for {} s",
                l.frames_per_sec,
                l.bytes_per_sec,
                l.cut_after.as_secs()
            ));
        }
        Charge::Slow(Duration::from_secs_f64(debt))
    }

    /// Whether the host is over its budget: slowed since a frame that was,
    /// and not yet [`recovered`](Self::recovered).
    pub fn is_over(&self) -> bool {
        self.over_since.is_some()
    }

    /// Whether both buckets hold [`RECOVERED_SHARE`] of their burst: the
    /// host sent less than its budget for a while, so it is no longer over.
    fn recovered(&self) -> bool {
        let l = &self.limits;
        let share = RECOVERED_SHARE * l.burst_secs;
        self.frames >= share * l.frames_per_sec && self.bytes >= share * l.bytes_per_sec
    }
}

/// A host's budget, as the operator sees it in `hub roster`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct BudgetView {
    /// `ok`, `slowed` (over budget now, read at the budget's pace) or
    /// `cut` (its last link was closed for it, until it links again).
    pub state: String,
    /// Milliseconds its links were slowed since the hub started.
    pub slowed_ms: u64,
    /// The last time it was cut, and why.
    pub last_cut: Option<CutView>,
}

/// When and why a host was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CutView {
    /// When.
    pub at: Timestamp,
    /// Why.
    pub reason: String,
}

/// What a link reports to the core about its budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BudgetEvent {
    /// It was slowed for this long (reported at most once a second).
    Slowed(Duration),
    /// It is within budget again.
    Within,
    /// It was cut.
    Cut(String),
}

/// Every host's [`BudgetView`], kept by the core.
#[derive(Debug, Default)]
pub struct BudgetBook {
    views: HashMap<HostName, BudgetView>,
}

impl BudgetBook {
    /// Takes one event of `host`'s link.
    pub fn record(&mut self, host: &HostName, event: BudgetEvent) {
        let view = self.views.entry(host.clone()).or_default();
        match event {
            BudgetEvent::Slowed(d) => {
                view.state = "slowed".into();
                view.slowed_ms = view.slowed_ms.saturating_add(d.as_millis() as u64);
            }
            BudgetEvent::Within => view.state = "ok".into(),
            BudgetEvent::Cut(reason) => {
                view.state = "cut".into();
                view.last_cut = Some(CutView {
                    at: Timestamp::now(),
                    reason,
                });
            }
        }
    }

    /// A new link of `host` starts within budget.
    pub fn link_up(&mut self, host: &HostName) {
        self.views.entry(host.clone()).or_default().state = "ok".into();
    }

    /// `host`'s view (`ok` when nothing was recorded).
    pub fn view(&self, host: &HostName) -> BudgetView {
        let mut view = self.views.get(host).cloned().unwrap_or_default();
        if view.state.is_empty() {
            view.state = "ok".into();
        }
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> BudgetLimits {
        BudgetLimits {
            frames_per_sec: 10.0,
            bytes_per_sec: 1000.0,
            burst_secs: 1.0,
            cut_after: Duration::from_secs(5),
        }
    }

    #[test]
    fn a_burst_passes_then_the_host_is_slowed_to_the_rate() {
        let t0 = Instant::now();
        let mut b = LinkBudget::new(limits(), t0);
        for _ in 0..10 {
            assert_eq!(b.charge(t0, 10), Charge::Within);
        }
        let Charge::Slow(wait) = b.charge(t0, 10) else {
            panic!("over the burst")
        };
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-6, "{wait:?}");
        // Waiting it out makes room again.
        assert_eq!(
            b.charge(t0 + Duration::from_millis(300), 10),
            Charge::Within
        );
    }

    #[test]
    fn bytes_count_as_well_as_frames() {
        let t0 = Instant::now();
        let mut b = LinkBudget::new(limits(), t0);
        assert_eq!(b.charge(t0, 1000), Charge::Within);
        assert!(matches!(b.charge(t0, 500), Charge::Slow(w) if w == Duration::from_millis(500)));
    }

    #[test]
    fn a_host_that_stays_over_budget_is_cut_one_that_recovers_is_not() {
        let t0 = Instant::now();
        let mut b = LinkBudget::new(limits(), t0);
        let mut t = t0;
        let mut verdict = Charge::Within;
        for _ in 0..200 {
            t += Duration::from_millis(50); // 20 frames/s against 10
            verdict = b.charge(t, 1);
            if matches!(verdict, Charge::Cut(_)) {
                break;
            }
        }
        let Charge::Cut(reason) = verdict else {
            panic!("never cut")
        };
        assert!(
            reason.contains("10 frames/s") && reason.contains("5 s"),
            "{reason}"
        );
        assert!(t - t0 >= Duration::from_secs(5));

        let mut b = LinkBudget::new(limits(), t0);
        let mut t = t0;
        for i in 0..400 {
            // 20 frames/s for a second, then 2 frames/s for ten.
            t += if i % 40 < 20 {
                Duration::from_millis(50)
            } else {
                Duration::from_millis(500)
            };
            assert!(!matches!(b.charge(t, 1), Charge::Cut(_)), "cut at {i}");
        }
    }

    /// A flooder read at the budget's pace, where each wait overshoots by
    /// more than a frame's time (a busy hub): one frame in two is within
    /// budget, and still the host is cut once `cut_after` has passed.
    #[test]
    fn a_flooder_is_cut_on_time_though_the_hubs_waits_overshoot() {
        let t0 = Instant::now();
        let mut b = LinkBudget::new(limits(), t0);
        let (mut t, mut within, mut cut) = (t0, 0, false);
        for _ in 0..10_000 {
            match b.charge(t, 1) {
                // Its next frame is already waiting: read at once.
                Charge::Within if t > t0 => {
                    assert!(b.is_over(), "a flooder is still over its budget");
                    within += 1;
                }
                // Its burst.
                Charge::Within => {}
                Charge::Slow(wait) => t += wait + Duration::from_millis(120),
                Charge::Cut(_) => {
                    cut = true;
                    break;
                }
            }
        }
        assert!(cut, "never cut");
        assert!(within > 20, "the overshoot let frames in: {within}");
        let took = t - t0;
        assert!(
            took >= Duration::from_secs(5) && took < Duration::from_secs(6),
            "cut after {took:?}"
        );
    }

    #[test]
    fn the_book_keeps_what_the_operator_sees() {
        let host = HostName::new("h").expect("host");
        let mut book = BudgetBook::default();
        assert_eq!(book.view(&host).state, "ok");
        book.record(&host, BudgetEvent::Slowed(Duration::from_millis(1500)));
        assert_eq!(book.view(&host).state, "slowed");
        book.record(&host, BudgetEvent::Cut("too much".into()));
        let view = book.view(&host);
        assert_eq!((view.state.as_str(), view.slowed_ms), ("cut", 1500));
        book.link_up(&host);
        let view = book.view(&host);
        assert_eq!(view.state, "ok");
        assert_eq!(view.last_cut.map(|c| c.reason).as_deref(), Some("too much"));
    }
}
