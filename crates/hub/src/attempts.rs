//! How many enrollment attempts one source address may make, without IO:
//! at most `limit` connections per address in a fixed window; past it, the
//! listener refuses the connection before any handshake work, and says so
//! once per address and window (not once per packet), so a flood neither
//! costs signing work nor grows the log. Callers pass `now`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Addresses remembered at most; older windows are forgotten first.
const MAX_TRACKED: usize = 65_536;

/// The verdict on one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Within the limit.
    Admitted,
    /// Over the limit, the first time in this window (worth one warning).
    FirstRefused,
    /// Over the limit again.
    Refused,
}

/// Attempts per source address.
#[derive(Debug)]
pub struct AttemptLimiter {
    limit: u32,
    window: Duration,
    /// Address to (start of its window, attempts in it).
    seen: HashMap<IpAddr, (Instant, u32)>,
}

impl AttemptLimiter {
    /// At most `limit` attempts per address in each `window`.
    pub fn new(limit: u32, window: Duration) -> Self {
        Self {
            limit,
            window,
            seen: HashMap::new(),
        }
    }

    /// Counts an attempt from `ip` at `now`.
    pub fn attempt(&mut self, ip: IpAddr, now: Instant) -> Attempt {
        if self.seen.len() >= MAX_TRACKED {
            let window = self.window;
            self.seen
                .retain(|_, (start, _)| now.duration_since(*start) < window);
        }
        let entry = self.seen.entry(ip).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
        match entry.1 {
            n if n <= self.limit => Attempt::Admitted,
            n if n == self.limit + 1 => Attempt::FirstRefused,
            _ => Attempt::Refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_gets_its_own_limit_per_window() {
        let mut l = AttemptLimiter::new(2, Duration::from_secs(60));
        let (a, b): (IpAddr, IpAddr) = (
            "10.0.0.1".parse().expect("ip"),
            "10.0.0.2".parse().expect("ip"),
        );
        let t = Instant::now();
        assert_eq!(l.attempt(a, t), Attempt::Admitted);
        assert_eq!(l.attempt(a, t), Attempt::Admitted);
        assert_eq!(l.attempt(a, t), Attempt::FirstRefused);
        assert_eq!(l.attempt(a, t), Attempt::Refused);
        assert_eq!(l.attempt(b, t), Attempt::Admitted, "another address");
        let later = t + Duration::from_secs(61);
        assert_eq!(l.attempt(a, later), Attempt::Admitted, "a new window");
    }
}
