//! Where the hub is, for one attempt: the configured `HOST:PORT` through
//! the system resolver, or with `hub = "auto"` a hub found over mDNS whose
//! advertised CA fingerprint is the one of this home's `certs/ca.pem`. The
//! TLS name is `hub_name`, else (with `auto`) the hub's advertised name.
//!
//! Owns that choice only. Must not dial, and must not decide trust: a
//! discovered address is a hint; the driver's TLS handshake against the CA
//! decides whether the hub is ours.

use std::net::SocketAddr;
use std::time::Duration;

use flotilla_actors::pki::Fingerprint;
use flotilla_hub::discovery::mdns::MdnsDiscovery;
use flotilla_hub::discovery::{Discovery, DiscoveryError, Family, ServiceKind, hubs_of_ca};
use flotilla_hub::setup::{self, CertPaths};

use crate::config::HubTarget;

/// How long `auto` browses before giving up on an attempt.
const AUTO_WINDOW: Duration = Duration::from_secs(3);

/// Why no hub was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(super) enum ResolveError {
    /// The configured address does not resolve.
    #[error("cannot resolve the hub address {0:?}; check `hub` in config.toml or --hub")]
    Lookup(String),
    /// No hub of our CA answered.
    #[error(
        "no hub with CA fingerprint {0} answered over mDNS on the LAN; a hub is found this way \
         only while it runs with advertise = true (the default) on an address other hosts \
         reach: one listening on loopback (127.0.0.1) is never advertised, so give such a hub \
         as --hub 127.0.0.1:PORT; otherwise pass --hub ADDR"
    )]
    NoHub(Fingerprint),
    /// This home has no CA certificate to match against.
    #[error(transparent)]
    Setup(#[from] setup::SetupError),
    /// mDNS failed.
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
}

/// The address to dial and the name the hub's certificate must carry.
pub(super) async fn resolve_target(
    target: &HubTarget,
    certs: &CertPaths,
) -> Result<(SocketAddr, String), String> {
    resolve(target, certs).await.map_err(|e| e.to_string())
}

async fn resolve(
    target: &HubTarget,
    certs: &CertPaths,
) -> Result<(SocketAddr, String), ResolveError> {
    if !target.is_auto() {
        let addr = tokio::net::lookup_host(&target.addr)
            .await
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| ResolveError::Lookup(target.addr.clone()))?;
        return Ok((addr, target.name.clone()));
    }
    let ca = setup::ca_fingerprint(certs)?;
    let mdns = MdnsDiscovery::new()?;
    find_hub(&mdns, &ca, &target.name, AUTO_WINDOW).await
}

/// Browses `discovery` for a hub of the CA `ca`; the first (by name) wins,
/// at its best address. `name`, when not empty, overrides the advertised
/// name as the TLS name.
pub(super) async fn find_hub<D: Discovery>(
    discovery: &D,
    ca: &Fingerprint,
    name: &str,
    window: Duration,
) -> Result<(SocketAddr, String), ResolveError> {
    let ours = |s: &_| !hubs_of_ca(std::slice::from_ref(s), ca, Family::V4).is_empty();
    let seen = discovery.browse(ServiceKind::Hub, window, ours).await?;
    let hub = hubs_of_ca(&seen, ca, Family::V4)
        .into_iter()
        .next()
        .ok_or(ResolveError::NoHub(*ca))?;
    let addr = *hub.addrs.first().ok_or(ResolveError::NoHub(*ca))?;
    let name = match name {
        "" => hub.name,
        set => set.to_owned(),
    };
    tracing::info!(hub = %name, %addr, "found the hub over mDNS");
    Ok((addr, name))
}

#[cfg(test)]
mod tests {
    use flotilla_hub::discovery::memory::MemoryBus;
    use flotilla_hub::discovery::{Advertisement, SeenAddr};

    use super::*;

    const WINDOW: Duration = Duration::from_secs(1);

    fn at(ip: &str, interface: u32) -> SeenAddr {
        SeenAddr {
            ip: ip.parse().expect("ip"),
            interface,
        }
    }

    #[tokio::test]
    async fn the_hub_of_our_ca_is_chosen_and_another_cas_ignored() {
        let (ours, theirs) = (Fingerprint([1; 32]), Fingerprint([2; 32]));
        let bus = MemoryBus::new();
        let _a = bus
            .node(vec![at("10.9.0.1", 2)])
            .advertise(&Advertisement::hub("a-other.test", 7700, &theirs))
            .expect("advertise");
        let _b = bus
            .node(vec![at("10.9.0.2", 2)])
            .advertise(&Advertisement::hub("b-ours.test", 7701, &ours))
            .expect("advertise");
        let host = bus.node(vec![]);
        let (addr, name) = find_hub(&host, &ours, "", WINDOW).await.expect("found");
        assert_eq!(addr.to_string(), "10.9.0.2:7701");
        assert_eq!(name, "b-ours.test");
        let (_, name) = find_hub(&host, &ours, "alias.test", WINDOW)
            .await
            .expect("found");
        assert_eq!(name, "alias.test", "hub_name overrides the advertised name");
    }

    #[tokio::test]
    async fn no_hub_of_our_ca_is_a_clear_error() {
        let bus = MemoryBus::new();
        let _other = bus
            .node(vec![at("10.9.0.1", 2)])
            .advertise(&Advertisement::hub(
                "other.test",
                7700,
                &Fingerprint([2; 32]),
            ))
            .expect("advertise");
        let ours = Fingerprint([1; 32]);
        let err = find_hub(&bus.node(vec![]), &ours, "", WINDOW)
            .await
            .expect_err("none of ours");
        let text = err.to_string();
        assert!(text.contains(&ours.to_string()), "{text}");
        assert!(text.contains("advertise = true") && text.contains("--hub ADDR"));
        assert!(
            text.contains("loopback") && text.contains("--hub 127.0.0.1:PORT"),
            "a hub on loopback is never advertised: say so, not only advertise = true: {text}"
        );
    }

    #[tokio::test]
    async fn a_link_local_hub_is_dialed_on_its_interface() {
        let ca = Fingerprint([1; 32]);
        let bus = MemoryBus::new();
        let _hub = bus
            .node(vec![at("fe80::1234", 5)])
            .advertise(&Advertisement::hub("hub.test", 7700, &ca))
            .expect("advertise");
        let (addr, _) = find_hub(&bus.node(vec![]), &ca, "", WINDOW)
            .await
            .expect("found");
        let SocketAddr::V6(v6) = addr else {
            panic!("IPv6: {addr}")
        };
        assert_eq!(v6.scope_id(), 5);
        assert_eq!(addr.to_string(), "[fe80::1234%5]:7700");
    }
}
