//! Finding hubs and hosts on the LAN: a hub advertises
//! `_flotilla-hub._udp.local.` with its name, its CA's fingerprint and the
//! protocol version in TXT; hosts may advertise `_flotilla-host._udp.local.`;
//! `flotilla discover` and `--hub auto` browse for them.
//!
//! Owns the [`Discovery`] trait (advertise a service, browse for services)
//! with its two implementations — [`mdns::MdnsDiscovery`] over multicast DNS
//! and, for tests, [`memory::MemoryBus`], a bus shared inside one process —
//! and the pure rules of [`candidate`]: what a seen service means, which
//! hubs belong to our CA and in which order to dial their addresses.
//!
//! Must not decide trust: a discovered address is only a hint; TLS against
//! the home's CA decides whether the hub is ours. Must not touch QUIC.

pub mod candidate;
pub mod mdns;
#[cfg(any(test, feature = "test-support"))]
pub mod memory;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::time::Duration;

use flotilla_actors::pki::Fingerprint;

pub use candidate::{Candidate, Family, hubs_of_ca, order_addrs};

/// The DNS-SD type of hubs.
pub const HUB_SERVICE: &str = "_flotilla-hub._udp.local.";
/// The DNS-SD type of hosts.
pub const HOST_SERVICE: &str = "_flotilla-host._udp.local.";
/// The federation protocol version a hub advertises (TXT `v`).
pub const PROTOCOL_VERSION: &str = "1";

/// TXT key: the CA fingerprint (`sha256:...`).
pub const TXT_FINGERPRINT: &str = "fp";
/// TXT key: the hub's or host's name (for a hub, the name in its certificate).
pub const TXT_NAME: &str = "name";
/// TXT key: the protocol version.
pub const TXT_VERSION: &str = "v";

/// What is advertised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServiceKind {
    /// A hub (`flotilla hub run`).
    Hub,
    /// A host daemon.
    Host,
}

impl ServiceKind {
    /// The DNS-SD service type.
    pub fn service_type(self) -> &'static str {
        match self {
            Self::Hub => HUB_SERVICE,
            Self::Host => HOST_SERVICE,
        }
    }

    /// `hub` or `host`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hub => "hub",
            Self::Host => "host",
        }
    }
}

/// A service to advertise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertisement {
    /// Hub or host.
    pub kind: ServiceKind,
    /// The instance name (the hub's or host's name).
    pub instance: String,
    /// The UDP port it listens on (0 for a host, which listens on nothing).
    pub port: u16,
    /// The TXT record's keys and values.
    pub txt: BTreeMap<String, String>,
    /// Which of the machine's addresses to advertise.
    pub addrs: Addresses,
}

/// Which addresses a service is advertised at: those it listens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Addresses {
    /// Every address of the machine, kept up to date (bound to `[::]`).
    #[default]
    All,
    /// Every IPv4 address (bound to `0.0.0.0`). With mDNS this turns IPv6
    /// off for the whole responder, so give such a service its own.
    Ipv4,
    /// This one address (bound to it).
    Only(IpAddr),
}

impl Addresses {
    /// The addresses a service bound to `ip` is reached at; `None` for
    /// loopback, which is not worth advertising on a LAN.
    pub fn of_bound(ip: IpAddr) -> Option<Self> {
        match ip {
            IpAddr::V4(v4) if v4.is_unspecified() => Some(Self::Ipv4),
            _ if ip.is_unspecified() => Some(Self::All),
            _ if ip.is_loopback() => None,
            _ => Some(Self::Only(ip)),
        }
    }

    /// Whether a service advertised so is seen at `ip`.
    pub fn admits(self, ip: IpAddr) -> bool {
        match self {
            Self::All => true,
            Self::Ipv4 => ip.is_ipv4(),
            Self::Only(only) => only == ip,
        }
    }
}

impl Advertisement {
    /// A hub named `name`, listening on `port`, whose certificates come from
    /// the CA with fingerprint `ca`.
    pub fn hub(name: &str, port: u16, ca: &Fingerprint) -> Self {
        let txt = BTreeMap::from([
            (TXT_FINGERPRINT.to_owned(), ca.to_string()),
            (TXT_NAME.to_owned(), name.to_owned()),
            (TXT_VERSION.to_owned(), PROTOCOL_VERSION.to_owned()),
        ]);
        Self {
            kind: ServiceKind::Hub,
            instance: name.to_owned(),
            port,
            txt,
            addrs: Addresses::All,
        }
    }

    /// A host named `name`, enrolled with the CA `ca` if it has one.
    pub fn host(name: &str, ca: Option<&Fingerprint>) -> Self {
        let mut txt = BTreeMap::from([
            (TXT_NAME.to_owned(), name.to_owned()),
            (TXT_VERSION.to_owned(), PROTOCOL_VERSION.to_owned()),
        ]);
        if let Some(ca) = ca {
            txt.insert(TXT_FINGERPRINT.to_owned(), ca.to_string());
        }
        Self {
            kind: ServiceKind::Host,
            instance: name.to_owned(),
            port: 0,
            txt,
            addrs: Addresses::All,
        }
    }

    /// The DNS name the service's address records are published under:
    /// one per service, so two services on one machine (or in two network
    /// namespaces of one machine) never mix their addresses.
    pub fn target_host(&self) -> String {
        let label: String = self
            .instance
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(40)
            .collect();
        format!("flotilla-{}-{label}.local.", self.kind.as_str())
    }
}

/// An address as seen on the LAN: the IP and the index of the interface it
/// was seen on (what an IPv6 link-local address needs to be dialed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeenAddr {
    /// The address.
    pub ip: IpAddr,
    /// The interface index (0 when unknown).
    pub interface: u32,
}

/// A service seen while browsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenService {
    /// Hub or host.
    pub kind: ServiceKind,
    /// The full DNS-SD instance name (unique on the LAN).
    pub instance: String,
    /// The DNS name its addresses are published under.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// Its addresses, as seen.
    pub addrs: Vec<SeenAddr>,
    /// Its TXT record.
    pub txt: BTreeMap<String, String>,
}

/// Why discovery could not start, advertise or browse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// The mDNS responder could not start.
    #[error("cannot start mDNS: {0}")]
    Start(String),
    /// The service could not be advertised.
    #[error("cannot advertise {service} over mDNS: {reason}")]
    Advertise {
        /// The service.
        service: String,
        /// Why.
        reason: String,
    },
    /// Browsing failed.
    #[error("cannot browse for {service} over mDNS: {reason}")]
    Browse {
        /// The service type.
        service: &'static str,
        /// Why.
        reason: String,
    },
}

/// Advertising and browsing. Implementations: [`mdns::MdnsDiscovery`], and
/// `memory::MemoryBus` for tests.
pub trait Discovery: Send + Sync {
    /// Advertises `ad` until the returned [`Registration`] is withdrawn or
    /// dropped.
    fn advertise(&self, ad: &Advertisement) -> Result<Registration, DiscoveryError>;

    /// Browses for services of `kind` for at most `window`, returning what
    /// was seen; returns early once a seen service satisfies `enough`.
    fn browse<F>(
        &self,
        kind: ServiceKind,
        window: Duration,
        enough: F,
    ) -> impl Future<Output = Result<Vec<SeenService>, DiscoveryError>> + Send
    where
        F: Fn(&SeenService) -> bool + Send;
}

/// A future that completes once a withdrawal is done.
pub type Withdrawn = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Starts a withdrawal (synchronously) and returns what to await for it.
type WithdrawFn = Box<dyn FnOnce() -> Withdrawn + Send>;

/// An advertised service. Dropping it withdraws the service without waiting;
/// [`Registration::withdraw`] waits for the withdrawal to go out.
pub struct Registration {
    /// The instance advertised, for logs.
    service: String,
    /// Taken by the first withdrawal.
    withdraw: Option<WithdrawFn>,
}

impl Registration {
    /// A registration of `service` that `withdraw` takes back.
    pub fn new(service: String, withdraw: impl FnOnce() -> Withdrawn + Send + 'static) -> Self {
        Self {
            service,
            withdraw: Some(Box::new(withdraw)),
        }
    }

    /// The instance advertised.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Withdraws the service and waits for the goodbye to go out.
    pub async fn withdraw(mut self) {
        if let Some(withdraw) = self.withdraw.take() {
            withdraw().await;
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(withdraw) = self.withdraw.take() {
            drop(withdraw());
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("service", &self.service)
            .field("active", &self.withdraw.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_advertised_where_it_listens() {
        let of = |ip: &str| Addresses::of_bound(ip.parse().expect("ip"));
        assert_eq!(of("0.0.0.0"), Some(Addresses::Ipv4));
        assert_eq!(of("::"), Some(Addresses::All));
        assert_eq!(of("127.0.0.1"), None);
        assert_eq!(of("::1"), None);
        let lan: IpAddr = "192.168.1.2".parse().expect("ip");
        assert_eq!(of("192.168.1.2"), Some(Addresses::Only(lan)));
        assert!(!Addresses::Ipv4.admits("fe80::1".parse().expect("ip")));
        assert!(Addresses::Only(lan).admits(lan));
    }

    #[test]
    fn each_service_publishes_its_addresses_under_its_own_name() {
        let hub = Advertisement::hub("hub.home.arpa", 7700, &Fingerprint([0; 32]));
        assert_eq!(hub.target_host(), "flotilla-hub-hub-home-arpa.local.");
        assert_eq!(hub.txt["v"], PROTOCOL_VERSION);
        let host = Advertisement::host("laptop", None);
        assert_eq!(host.target_host(), "flotilla-host-laptop.local.");
        assert!(!host.txt.contains_key(TXT_FINGERPRINT));
    }
}
