//! The hub link's bookkeeping, without IO or clocks: the reconnect delays
//! (a startup schedule, then exponential, capped, jittered), the liveness
//! of an established link (pings, and telling a machine that slept from a
//! link that broke), and the link's state as `host status` shows it. The
//! driver passes `now` and a jitter draw in.

use std::time::{Duration, Instant};

use flotilla_actors::model::Timestamp;
use flotilla_actors::protocol::{HubLinkState, HubLinkStatus};

/// Delays between attempts to reach the hub: `min` doubling up to `max`,
/// each scaled by a jitter draw into its upper half so that hosts cut off
/// together do not all come back in the same instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// The delay after the first failure.
    pub min: Duration,
    /// The longest delay.
    pub max: Duration,
    /// The delays while the hub was never reached since start (no
    /// network at boot): not doubled, the last one repeats.
    pub startup: Vec<Duration>,
}

impl ReconnectPolicy {
    /// The delay after `failures` failures in a row (at least 1), with
    /// `jitter` in `[0, 1]`: between half and all of the capped exponential.
    pub fn delay(&self, failures: u32, jitter: f64) -> Duration {
        let doublings = failures.saturating_sub(1).min(30);
        let full = self.min.saturating_mul(1 << doublings).min(self.max);
        full.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
    }

    /// The delay after `failures` failures in a row before the hub was ever
    /// reached.
    pub fn startup_delay(&self, failures: u32) -> Duration {
        let at = (failures.max(1) - 1) as usize;
        self.startup
            .get(at)
            .or(self.startup.last())
            .copied()
            .unwrap_or(self.min)
    }
}

/// What the link should do at a ping tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tick {
    /// Send a ping with this nonce.
    Ping(u64),
    /// A ping is out and still has time.
    Wait,
    /// The hub has not answered in time: the link is lost.
    Dead(String),
}

/// Whether an established link is alive. A ping is sent every `interval`
/// and must be answered within `timeout`. When ticks come much later than
/// due (more than two intervals: the machine was suspended, a laptop
/// closed), the link is not judged by the ping lost in the gap; it gets
/// three intervals to answer a fresh one.
#[derive(Debug, Clone)]
pub struct Liveness {
    interval: Duration,
    timeout: Duration,
    nonce: u64,
    last_tick: Option<Instant>,
    /// The ping out: its nonce, when it left, and its deadline.
    outstanding: Option<(u64, Instant, Instant)>,
}

impl Liveness {
    /// Pings every `interval`, each answered within `timeout`.
    pub fn new(interval: Duration, timeout: Duration) -> Self {
        Self {
            interval,
            timeout,
            nonce: 0,
            last_tick: None,
            outstanding: None,
        }
    }

    /// The ping interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// A new link: nothing outstanding.
    pub fn reset(&mut self) {
        self.last_tick = None;
        self.outstanding = None;
    }

    /// A tick of the ping timer at `now`.
    pub fn tick(&mut self, now: Instant) -> Tick {
        let slept = self
            .last_tick
            .is_some_and(|last| now.saturating_duration_since(last) > self.interval * 2);
        self.last_tick = Some(now);
        if slept {
            tracing::info!(
                "the host was suspended or starved; giving the hub link time to recover"
            );
            return self.ping(now, now + self.interval * 3);
        }
        match self.outstanding {
            Some((_, sent, deadline)) if now >= deadline => Tick::Dead(format!(
                "the hub did not answer a ping for {:?}; the link is lost",
                now.saturating_duration_since(sent)
            )),
            Some(_) => Tick::Wait,
            None => self.ping(now, now + self.timeout),
        }
    }

    fn ping(&mut self, now: Instant, deadline: Instant) -> Tick {
        self.nonce += 1;
        self.outstanding = Some((self.nonce, now, deadline));
        Tick::Ping(self.nonce)
    }

    /// A pong arrived; returns the round trip if it answers the ping out.
    pub fn pong(&mut self, nonce: u64, now: Instant) -> Option<Duration> {
        match self.outstanding {
            Some((n, sent, _)) if n == nonce => {
                self.outstanding = None;
                Some(now.saturating_duration_since(sent))
            }
            _ => None,
        }
    }
}

/// The link's state and history, published in `host.status`.
#[derive(Debug, Clone)]
pub struct LinkTracker {
    /// How long to wait between attempts.
    policy: ReconnectPolicy,
    /// What `host status` shows, `retry_in_ms` aside.
    status: HubLinkStatus,
    /// When the next attempt is due (while disconnected).
    retry_at: Option<Timestamp>,
}

impl LinkTracker {
    /// A link to `hub` (named `hub_name`), not yet tried.
    pub fn new(hub: String, hub_name: String, policy: ReconnectPolicy, now: Timestamp) -> Self {
        Self {
            policy,
            status: HubLinkStatus {
                hub,
                hub_name,
                state: HubLinkState::Disconnected,
                since: now,
                rtt_ms: None,
                last_error: None,
                connects: 0,
                failures: 0,
                retry_in_ms: None,
                dialled: None,
            },
            retry_at: None,
        }
    }

    fn enter(&mut self, state: HubLinkState, now: Timestamp) {
        if self.status.state != state {
            self.status.state = state;
            self.status.since = now;
        }
    }

    /// An attempt starts.
    pub fn connecting(&mut self, now: Timestamp) {
        self.retry_at = None;
        self.enter(HubLinkState::Connecting, now);
    }

    /// The attempt dials `addr`, expecting a certificate for `name`.
    pub fn dialling(&mut self, addr: String, name: &str) {
        self.status.dialled = Some(format!("{addr} ({name})"));
        if self.status.hub_name.is_empty() {
            self.status.hub_name = name.to_owned();
        }
    }

    /// The hub accepted the hello.
    pub fn connected(&mut self, now: Timestamp) {
        self.retry_at = None;
        self.status.failures = 0;
        self.status.connects += 1;
        self.status.rtt_ms = None;
        self.enter(HubLinkState::Connected, now);
    }

    /// A ping came back after `rtt`.
    pub fn round_trip(&mut self, rtt: Duration) {
        self.status.rtt_ms = Some((rtt.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0);
    }

    /// The attempt or the link failed with `error`; returns how long to
    /// wait before the next attempt.
    pub fn failed(&mut self, error: String, jitter: f64, now: Timestamp) -> Duration {
        self.status.failures = self.status.failures.saturating_add(1);
        self.status.last_error = Some(error);
        self.status.rtt_ms = None;
        let delay = if self.status.connects == 0 {
            self.policy.startup_delay(self.status.failures)
        } else {
            self.policy.delay(self.status.failures, jitter)
        };
        let millis = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.retry_at = Some(Timestamp(now.0.saturating_add(millis)));
        self.enter(HubLinkState::Disconnected, now);
        delay
    }

    /// What `host status` shows at `now`.
    pub fn status(&self, now: Timestamp) -> HubLinkStatus {
        let mut status = self.status.clone();
        status.retry_in_ms = self.retry_at.map(|at| at.0.saturating_sub(now.0));
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: ReconnectPolicy = ReconnectPolicy {
        min: Duration::from_millis(100),
        max: Duration::from_millis(1_000),
        startup: Vec::new(),
    };

    #[test]
    fn before_the_first_link_the_startup_schedule_applies() {
        let policy = ReconnectPolicy {
            startup: [30, 60, 120, 300].map(Duration::from_secs).to_vec(),
            ..POLICY
        };
        let mut t = LinkTracker::new("a".into(), "hub".into(), policy, Timestamp(0));
        let delays: Vec<u64> = (0..6)
            .map(|i| t.failed("no network".into(), 0.0, Timestamp(i)).as_secs())
            .collect();
        assert_eq!(delays, [30, 60, 120, 300, 300, 300]);
        t.connecting(Timestamp(7));
        t.connected(Timestamp(8));
        assert_eq!(
            t.failed("lost".into(), 1.0, Timestamp(9)),
            Duration::from_millis(100),
            "after a link, the quick backoff"
        );
    }

    #[test]
    fn delays_double_up_to_the_cap_and_jitter_stays_in_the_upper_half() {
        assert_eq!(POLICY.delay(1, 1.0), Duration::from_millis(100));
        assert_eq!(POLICY.delay(2, 1.0), Duration::from_millis(200));
        assert_eq!(POLICY.delay(4, 1.0), Duration::from_millis(800));
        assert_eq!(POLICY.delay(5, 1.0), Duration::from_millis(1_000));
        assert_eq!(POLICY.delay(u32::MAX, 1.0), Duration::from_millis(1_000));
        assert_eq!(POLICY.delay(1, 0.0), Duration::from_millis(50));
        assert_eq!(POLICY.delay(0, 7.0), Duration::from_millis(100));
    }

    fn tracker() -> LinkTracker {
        LinkTracker::new("127.0.0.1:1".into(), "hub".into(), POLICY, Timestamp(0))
    }

    fn linked() -> LinkTracker {
        let mut t = tracker();
        t.connecting(Timestamp(0));
        t.connected(Timestamp(0));
        t
    }

    #[test]
    fn a_link_goes_connecting_connected_and_back_with_its_error() {
        let mut t = tracker();
        assert_eq!(t.status(Timestamp(0)).state, HubLinkState::Disconnected);
        t.connecting(Timestamp(10));
        t.connected(Timestamp(20));
        t.round_trip(Duration::from_micros(1_500));
        let up = t.status(Timestamp(30));
        assert_eq!(
            (up.state, up.since, up.connects),
            (HubLinkState::Connected, Timestamp(20), 1)
        );
        assert_eq!(up.rtt_ms, Some(1.5));
        assert_eq!(up.retry_in_ms, None);
        let delay = t.failed("closed".into(), 1.0, Timestamp(40));
        assert_eq!(delay, Duration::from_millis(100));
        let down = t.status(Timestamp(90));
        assert_eq!(down.state, HubLinkState::Disconnected);
        assert_eq!((down.rtt_ms, down.retry_in_ms), (None, Some(50)));
        assert_eq!(down.last_error.as_deref(), Some("closed"));
    }

    #[test]
    fn failures_in_a_row_grow_the_delay_and_a_link_resets_them() {
        let mut t = linked();
        let delays: Vec<_> = (0..3)
            .map(|i| {
                t.connecting(Timestamp(i));
                t.failed("unreachable".into(), 1.0, Timestamp(i))
            })
            .collect();
        assert_eq!(delays, [100, 200, 400].map(Duration::from_millis));
        t.connecting(Timestamp(5));
        t.connected(Timestamp(6));
        assert_eq!(t.status(Timestamp(6)).failures, 0);
        assert_eq!(
            t.failed("lost".into(), 1.0, Timestamp(7)),
            Duration::from_millis(100)
        );
    }

    #[test]
    fn a_late_tick_after_a_suspend_gives_the_link_three_intervals() {
        let s = Duration::from_secs(1);
        let mut l = Liveness::new(s, s * 2);
        let t0 = Instant::now();
        assert_eq!(l.tick(t0), Tick::Ping(1));
        assert_eq!(l.tick(t0 + s), Tick::Wait);
        // Ten seconds later: a suspend, not a dead link.
        let woke = t0 + s * 11;
        assert_eq!(l.tick(woke), Tick::Ping(2));
        assert_eq!(l.tick(woke + s), Tick::Wait);
        assert_eq!(l.tick(woke + s * 2), Tick::Wait);
        assert!(matches!(l.tick(woke + s * 3), Tick::Dead(_)));
    }

    #[test]
    fn an_unanswered_ping_kills_the_link_after_the_timeout() {
        let s = Duration::from_secs(1);
        let mut l = Liveness::new(s, s * 2);
        let t0 = Instant::now();
        assert_eq!(l.tick(t0), Tick::Ping(1));
        assert_eq!(l.pong(1, t0 + s / 2), Some(s / 2));
        assert_eq!(l.tick(t0 + s), Tick::Ping(2));
        assert_eq!(l.pong(1, t0 + s), None, "a stale pong");
        assert_eq!(l.tick(t0 + s * 2), Tick::Wait);
        assert!(matches!(l.tick(t0 + s * 3), Tick::Dead(_)));
    }

    #[test]
    fn since_changes_only_with_the_state() {
        let mut t = tracker();
        t.connecting(Timestamp(1));
        t.connecting(Timestamp(2));
        assert_eq!(t.status(Timestamp(3)).since, Timestamp(1));
    }
}
