//! Link health over time for the web roster: a small ring of samples per
//! host (online or not, and the round-trip time), one sample each time the
//! roster is read.
//!
//! Owns the ring and its bound. Pure: no IO, no clock; must not read the
//! hub itself (it is fed the roster the server read).

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use crate::view::HubRosterReply;

/// How many samples a host keeps (a minute at one read per second).
pub const SAMPLES: usize = 60;

/// One reading of a host's link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// Whether the host was linked.
    pub online: bool,
    /// The link's round-trip time in milliseconds, if linked.
    pub rtt_ms: Option<f64>,
}

/// The last [`SAMPLES`] readings of every host in the roster.
#[derive(Debug, Default)]
pub struct HealthBook {
    hosts: BTreeMap<String, VecDeque<Sample>>,
}

impl HealthBook {
    /// Adds one sample per host of `roster`; hosts no longer in it are
    /// dropped, so the book never outgrows the roster.
    pub fn record(&mut self, roster: &HubRosterReply) {
        self.hosts
            .retain(|name, _| roster.hosts.iter().any(|h| h.host.as_str() == name));
        for host in &roster.hosts {
            let ring = self.hosts.entry(host.host.as_str().to_owned()).or_default();
            let online = host.state == "online";
            ring.push_back(Sample {
                online,
                rtt_ms: host.rtt_ms.filter(|_| online),
            });
            while ring.len() > SAMPLES {
                ring.pop_front();
            }
        }
    }

    /// `host`'s samples, oldest first (none for an unknown host).
    pub fn of(&self, host: &str) -> Vec<Sample> {
        self.hosts
            .get(host)
            .map(|ring| ring.iter().copied().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::snapshot::tests::{host, roster};

    #[test]
    fn keeps_the_last_samples_of_each_host_and_forgets_gone_hosts() {
        let mut book = HealthBook::default();
        for i in 0..(SAMPLES + 5) {
            let state = if i % 2 == 0 { "online" } else { "offline" };
            book.record(&roster(vec![
                host("a", state, Some(1.5)),
                host("b", "online", None),
            ]));
        }
        let a = book.of("a");
        assert_eq!(a.len(), SAMPLES);
        // The last of 65 samples (index 64) was online, the one before not.
        assert!(a[SAMPLES - 1].online);
        assert_eq!(a[SAMPLES - 1].rtt_ms, Some(1.5));
        assert!(!a[SAMPLES - 2].online);
        assert_eq!(a[SAMPLES - 2].rtt_ms, None, "no RTT while offline");
        book.record(&roster(vec![host("a", "online", None)]));
        assert!(book.of("b").is_empty(), "b left the roster");
        assert!(book.of("nobody").is_empty());
    }
}
