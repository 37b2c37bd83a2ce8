//! [`Discovery`] without a network, for tests: a [`MemoryBus`] shared
//! inside one process stands for the LAN, and each [`MemoryNode`] on it for
//! a machine with its own addresses. What a node advertises is seen by
//! every node's browse at once, until withdrawn.
//!
//! Owns nothing but the bus; never opens a socket.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::{
    Advertisement, Discovery, DiscoveryError, Registration, SeenAddr, SeenService, ServiceKind,
};

/// The services advertised, by registration number.
type Services = Vec<(u64, SeenService)>;

/// A LAN in memory.
#[derive(Debug, Clone, Default)]
pub struct MemoryBus {
    /// What is advertised now.
    services: Arc<Mutex<Services>>,
    /// The next registration number.
    next: Arc<AtomicU64>,
}

impl MemoryBus {
    /// An empty LAN.
    pub fn new() -> Self {
        Self::default()
    }

    /// A machine on this LAN with `addrs`.
    pub fn node(&self, addrs: Vec<SeenAddr>) -> MemoryNode {
        MemoryNode {
            bus: self.clone(),
            addrs,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Services> {
        self.services.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One machine on a [`MemoryBus`].
#[derive(Debug, Clone)]
pub struct MemoryNode {
    /// The LAN.
    bus: MemoryBus,
    /// The addresses its services are seen at.
    addrs: Vec<SeenAddr>,
}

impl Discovery for MemoryNode {
    fn advertise(&self, ad: &Advertisement) -> Result<Registration, DiscoveryError> {
        let id = self.bus.next.fetch_add(1, Ordering::Relaxed);
        let instance = format!("{}.{}", ad.instance, ad.kind.service_type());
        let seen = SeenService {
            kind: ad.kind,
            instance: instance.clone(),
            host: ad.target_host(),
            port: ad.port,
            addrs: self
                .addrs
                .iter()
                .filter(|a| ad.addrs.admits(a.ip))
                .copied()
                .collect(),
            txt: ad.txt.clone(),
        };
        self.bus.lock().push((id, seen));
        let bus = self.bus.clone();
        Ok(Registration::new(instance, move || {
            bus.lock().retain(|(n, _)| *n != id);
            Box::pin(async {})
        }))
    }

    async fn browse<F>(
        &self,
        kind: ServiceKind,
        _window: Duration,
        _enough: F,
    ) -> Result<Vec<SeenService>, DiscoveryError>
    where
        F: Fn(&SeenService) -> bool + Send,
    {
        Ok(self
            .bus
            .lock()
            .iter()
            .filter(|(_, s)| s.kind == kind)
            .map(|(_, s)| s.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use flotilla_actors::pki::Fingerprint;

    use super::*;
    use crate::discovery::Addresses;

    #[tokio::test]
    async fn what_one_node_advertises_another_sees_until_withdrawn() {
        let bus = MemoryBus::new();
        let addr = SeenAddr {
            ip: "10.1.0.1".parse().expect("ip"),
            interface: 2,
        };
        let hub = bus.node(vec![addr]);
        let host = bus.node(vec![]);
        let ad = Advertisement::hub("hub.test", 7700, &Fingerprint([3; 32]));
        let registration = hub.advertise(&ad).expect("advertise");
        let forever = Duration::from_secs(3600);
        let seen = host
            .browse(ServiceKind::Hub, forever, |_| false)
            .await
            .expect("browse");
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].addrs, [addr]);
        assert_eq!(seen[0].port, 7700);
        assert_eq!(seen[0].txt["fp"], Fingerprint([3; 32]).to_string());
        let hosts = host.browse(ServiceKind::Host, forever, |_| false).await;
        assert!(hosts.expect("browse").is_empty());
        registration.withdraw().await;
        let v6 = SeenAddr {
            ip: "fe80::1".parse().expect("ip"),
            interface: 2,
        };
        let mut v4_only = ad.clone();
        v4_only.addrs = Addresses::Ipv4;
        let _kept = bus.node(vec![v6, addr]).advertise(&v4_only);
        let seen = host.browse(ServiceKind::Hub, forever, |_| false).await;
        assert_eq!(
            seen.expect("browse")[0].addrs,
            [addr],
            "no IPv6 when bound to 0.0.0.0"
        );
        drop(_kept);
        let gone = host.browse(ServiceKind::Hub, forever, |_| false).await;
        assert!(gone.expect("browse").is_empty());
    }
}
