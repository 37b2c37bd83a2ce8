//! [`Discovery`] over multicast DNS (RFC 6762/6763) with the `mdns-sd`
//! crate: one responder thread per [`MdnsDiscovery`], on every
//! non-loopback interface, shut down when it is dropped.
//!
//! Owns the translation between `mdns-sd`'s types and ours (TXT, scoped
//! addresses, events). Advertised services carry every address of the
//! machine, kept up to date as interfaces come and go. Must not interpret
//! what it sees (that is [`super::candidate`]).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use mdns_sd::{IfKind, ResolvedService, ServiceDaemon, ServiceEvent, ServiceInfo};

use super::{
    Addresses, Advertisement, Discovery, DiscoveryError, Registration, SeenAddr, SeenService,
    ServiceKind,
};

/// How long a withdrawal waits for the goodbye packets to go out.
const GOODBYE_PATIENCE: Duration = Duration::from_secs(1);

/// Discovery over mDNS.
pub struct MdnsDiscovery {
    /// The responder; its clones share one thread.
    daemon: ServiceDaemon,
}

impl MdnsDiscovery {
    /// Starts the responder (the port-5353 sockets open on its thread).
    pub fn new() -> Result<Self, DiscoveryError> {
        let daemon = ServiceDaemon::new().map_err(|e| DiscoveryError::Start(e.to_string()))?;
        Ok(Self { daemon })
    }
}

/// A service advertised over mDNS until [`Advertised::withdraw`] (or drop).
#[derive(Debug)]
pub struct Advertised {
    /// The responder; kept alive while the service is advertised.
    _mdns: MdnsDiscovery,
    registration: super::Registration,
}

impl Advertised {
    /// Starts a responder and advertises `ad`. A failure is logged (with
    /// `what` naming the service) and gives `None`: advertising is a
    /// convenience, never a reason not to run.
    pub fn start(ad: &super::Advertisement, what: &str) -> Option<Self> {
        use super::Discovery;
        let started = MdnsDiscovery::new().and_then(|mdns| {
            let registration = mdns.advertise(ad)?;
            Ok(Self {
                _mdns: mdns,
                registration,
            })
        });
        match started {
            Ok(advertised) => {
                let service = advertised.registration.service().to_owned();
                tracing::info!(%service, "{what} advertised over mDNS");
                Some(advertised)
            }
            Err(e) => {
                tracing::warn!("the {what} runs but is not advertised over mDNS: {e}");
                None
            }
        }
    }

    /// Takes the advertisement back (a goodbye on the LAN).
    pub async fn withdraw(self) {
        self.registration.withdraw().await;
    }
}

impl std::fmt::Debug for MdnsDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MdnsDiscovery").finish_non_exhaustive()
    }
}

impl Drop for MdnsDiscovery {
    fn drop(&mut self) {
        let _ = self.daemon.shutdown();
    }
}

impl Discovery for MdnsDiscovery {
    fn advertise(&self, ad: &Advertisement) -> Result<Registration, DiscoveryError> {
        let failed = |e: mdns_sd::Error| DiscoveryError::Advertise {
            service: format!("{} {:?}", ad.kind.service_type(), ad.instance),
            reason: e.to_string(),
        };
        let txt: Vec<(&str, &str)> = ad
            .txt
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let ips: Vec<IpAddr> = match ad.addrs {
            Addresses::Only(ip) => vec![ip],
            Addresses::All | Addresses::Ipv4 => vec![],
        };
        if ad.addrs == Addresses::Ipv4 {
            self.daemon
                .disable_interface(IfKind::IPv6)
                .map_err(failed)?;
        }
        let info = ServiceInfo::new(
            ad.kind.service_type(),
            &ad.instance,
            &ad.target_host(),
            &ips[..],
            ad.port,
            &txt[..],
        )
        .map_err(failed)?;
        let info = match ad.addrs {
            Addresses::Only(_) => info,
            Addresses::All | Addresses::Ipv4 => info.enable_addr_auto(),
        };
        let fullname = info.get_fullname().to_owned();
        self.daemon.register(info).map_err(failed)?;
        let daemon = self.daemon.clone();
        let name = fullname.clone();
        Ok(Registration::new(fullname, move || {
            let status = daemon.unregister(&name);
            Box::pin(async move {
                if let Ok(status) = status {
                    let _ = tokio::time::timeout(GOODBYE_PATIENCE, status.recv_async()).await;
                }
            })
        }))
    }

    async fn browse<F>(
        &self,
        kind: ServiceKind,
        window: Duration,
        enough: F,
    ) -> Result<Vec<SeenService>, DiscoveryError>
    where
        F: Fn(&SeenService) -> bool + Send,
    {
        let service = kind.service_type();
        let events = self
            .daemon
            .browse(service)
            .map_err(|e| DiscoveryError::Browse {
                service,
                reason: e.to_string(),
            })?;
        let deadline = tokio::time::Instant::now() + window;
        let mut seen: BTreeMap<String, SeenService> = BTreeMap::new();
        while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv_async()).await {
            match event {
                ServiceEvent::ServiceResolved(resolved) if resolved.is_valid() => {
                    let service = seen_service(kind, &resolved);
                    let done = enough(&service);
                    seen.insert(service.instance.clone(), service);
                    if done {
                        break;
                    }
                }
                ServiceEvent::ServiceRemoved(_, fullname) => {
                    seen.remove(&fullname);
                }
                _ => {}
            }
        }
        let _ = self.daemon.stop_browse(service);
        Ok(seen.into_values().collect())
    }
}

/// Our view of what `mdns-sd` resolved.
fn seen_service(kind: ServiceKind, resolved: &ResolvedService) -> SeenService {
    let mut addrs: Vec<SeenAddr> = resolved
        .addresses
        .iter()
        .map(|scoped| SeenAddr {
            ip: scoped.to_ip_addr(),
            interface: match scoped {
                mdns_sd::ScopedIp::V6(v6) => v6.scope_id().index,
                _ => 0,
            },
        })
        .collect();
    addrs.sort();
    let txt = resolved
        .txt_properties
        .iter()
        .map(|p| (p.key().to_ascii_lowercase(), p.val_str().to_owned()))
        .collect();
    SeenService {
        kind,
        instance: resolved.fullname.clone(),
        host: resolved.host.clone(),
        port: resolved.port,
        addrs,
        txt,
    }
}
