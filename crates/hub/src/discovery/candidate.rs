//! What a seen service means, as plain functions: its name, fingerprint
//! and version from TXT, its addresses as dialable socket addresses in the
//! order to try them, and which hubs belong to a given CA.
//!
//! Owns the address rules: the preferred family first, routable before
//! link-local before loopback, and an IPv6 link-local address kept with its
//! interface as the scope id (without one it cannot be dialed, so it is
//! dropped). No IO, no clock.

use std::net::{IpAddr, SocketAddr, SocketAddrV6};

use flotilla_actors::pki::Fingerprint;

use super::{
    PROTOCOL_VERSION, SeenAddr, SeenService, ServiceKind, TXT_FINGERPRINT, TXT_NAME, TXT_VERSION,
};

/// An address family to prefer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    /// IPv4 first.
    #[default]
    V4,
    /// IPv6 first.
    V6,
}

/// A seen hub or host, read: what `flotilla discover` lists and what
/// `--hub auto` chooses from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Hub or host.
    pub kind: ServiceKind,
    /// Its name (TXT `name`, else the instance name): for a hub, the name
    /// its certificate carries.
    pub name: String,
    /// The DNS-SD instance.
    pub instance: String,
    /// Where to dial it, best first.
    pub addrs: Vec<SocketAddr>,
    /// Its port.
    pub port: u16,
    /// The CA fingerprint it advertises (TXT `fp`), if valid.
    pub ca_fingerprint: Option<Fingerprint>,
    /// The protocol version it advertises (TXT `v`).
    pub version: Option<String>,
}

impl Candidate {
    /// Reads a seen service, ordering its addresses with `prefer` first.
    pub fn from_seen(seen: &SeenService, prefer: Family) -> Self {
        let txt = |key: &str| seen.txt.get(key).filter(|v| !v.is_empty()).cloned();
        Self {
            kind: seen.kind,
            name: txt(TXT_NAME).unwrap_or_else(|| seen.instance.clone()),
            instance: seen.instance.clone(),
            addrs: order_addrs(&seen.addrs, seen.port, prefer),
            port: seen.port,
            ca_fingerprint: txt(TXT_FINGERPRINT).and_then(|fp| fp.parse().ok()),
            version: txt(TXT_VERSION),
        }
    }

    /// Whether it advertises the CA `ca`.
    pub fn has_ca(&self, ca: &Fingerprint) -> bool {
        self.ca_fingerprint.as_ref() == Some(ca)
    }

    /// Whether a host of this version can link to it: the same protocol
    /// version (or none said).
    pub fn speaks_our_protocol(&self) -> bool {
        self.version
            .as_deref()
            .is_none_or(|v| v == PROTOCOL_VERSION)
    }
}

/// The hubs among `seen` that advertise the CA `ca`, speak our protocol and
/// have an address to dial, by name.
pub fn hubs_of_ca(seen: &[SeenService], ca: &Fingerprint, prefer: Family) -> Vec<Candidate> {
    let mut hubs: Vec<Candidate> = seen
        .iter()
        .filter(|s| s.kind == ServiceKind::Hub)
        .map(|s| Candidate::from_seen(s, prefer))
        .filter(|c| c.has_ca(ca) && c.speaks_our_protocol() && !c.addrs.is_empty())
        .collect();
    hubs.sort_by(|a, b| (&a.name, &a.instance).cmp(&(&b.name, &b.instance)));
    hubs
}

/// The addresses as socket addresses on `port`, best first, without
/// duplicates; an IPv6 link-local address carries its interface as scope
/// id, and is dropped when the interface is unknown.
pub fn order_addrs(addrs: &[SeenAddr], port: u16, prefer: Family) -> Vec<SocketAddr> {
    let mut ranked: Vec<(u8, SocketAddr)> = addrs
        .iter()
        .filter_map(|a| Some((rank(a.ip, prefer), socket_addr(*a, port)?)))
        .collect();
    ranked.sort();
    ranked.dedup_by(|a, b| a.1 == b.1);
    ranked.into_iter().map(|(_, addr)| addr).collect()
}

/// A dialable socket address, or `None` for a link-local IPv6 address seen
/// on no known interface.
pub fn socket_addr(addr: SeenAddr, port: u16) -> Option<SocketAddr> {
    match addr.ip {
        IpAddr::V4(ip) => Some(SocketAddr::new(ip.into(), port)),
        IpAddr::V6(ip) if ip.is_unicast_link_local() => {
            (addr.interface != 0).then(|| SocketAddrV6::new(ip, port, 0, addr.interface).into())
        }
        IpAddr::V6(ip) => Some(SocketAddrV6::new(ip, port, 0, 0).into()),
    }
}

/// Lower is better: family (preferred first), then routable, link-local,
/// loopback.
fn rank(ip: IpAddr, prefer: Family) -> u8 {
    let family = match (ip, prefer) {
        (IpAddr::V4(_), Family::V4) | (IpAddr::V6(_), Family::V6) => 0,
        _ => 10,
    };
    let scope = match ip {
        _ if ip.is_loopback() => 2,
        IpAddr::V4(v4) if v4.is_link_local() => 1,
        IpAddr::V6(v6) if v6.is_unicast_link_local() => 1,
        _ => 0,
    };
    family + scope
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn fp(byte: u8) -> Fingerprint {
        Fingerprint([byte; 32])
    }

    fn addr(ip: &str, interface: u32) -> SeenAddr {
        SeenAddr {
            ip: ip.parse().expect("ip"),
            interface,
        }
    }

    fn hub(name: &str, ca: &Fingerprint, addrs: Vec<SeenAddr>) -> SeenService {
        SeenService {
            kind: ServiceKind::Hub,
            instance: format!("{name}._flotilla-hub._udp.local."),
            host: "h.local.".into(),
            port: 7700,
            addrs,
            txt: BTreeMap::from([
                ("fp".into(), ca.to_string()),
                ("name".into(), name.into()),
                ("v".into(), "1".into()),
            ]),
        }
    }

    #[test]
    fn the_preferred_family_comes_first_then_routable_then_link_local() {
        let addrs = [
            addr("fe80::1", 3),
            addr("127.0.0.1", 1),
            addr("2001:db8::1", 2),
            addr("169.254.1.1", 2),
            addr("192.168.1.5", 2),
        ];
        let v4: Vec<String> = order_addrs(&addrs, 7700, Family::V4)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            v4,
            [
                "192.168.1.5:7700",
                "169.254.1.1:7700",
                "127.0.0.1:7700",
                "[2001:db8::1]:7700",
                "[fe80::1%3]:7700"
            ]
        );
        let v6 = order_addrs(&addrs, 7700, Family::V6);
        assert_eq!(v6[0].to_string(), "[2001:db8::1]:7700");
        assert_eq!(v6[1].to_string(), "[fe80::1%3]:7700");
    }

    #[test]
    fn link_local_ipv6_keeps_its_scope_and_is_dropped_without_one() {
        let dialable = socket_addr(addr("fe80::abcd", 7), 1).expect("scoped");
        let SocketAddr::V6(v6) = dialable else {
            panic!("an IPv6 address")
        };
        assert_eq!(v6.scope_id(), 7);
        assert_eq!(socket_addr(addr("fe80::abcd", 0), 1), None);
        let global = socket_addr(addr("2001:db8::2", 7), 1).expect("global");
        assert_eq!(global.to_string(), "[2001:db8::2]:1", "no scope off-link");
    }

    #[test]
    fn duplicates_are_dropped() {
        let addrs = [addr("10.0.0.1", 1), addr("10.0.0.1", 2)];
        assert_eq!(order_addrs(&addrs, 1, Family::V4).len(), 1);
    }

    #[test]
    fn only_hubs_of_our_ca_with_an_address_and_our_version_are_chosen() {
        let ours = fp(1);
        let mut old = hub("old.test", &ours, vec![addr("10.0.0.4", 1)]);
        old.txt.insert("v".into(), "0".into());
        let mut host = hub("laptop", &ours, vec![addr("10.0.0.5", 1)]);
        host.kind = ServiceKind::Host;
        let seen = [
            hub("other.test", &fp(2), vec![addr("10.0.0.2", 1)]),
            hub("b.test", &ours, vec![addr("10.0.0.3", 1)]),
            hub("unreachable.test", &ours, vec![addr("fe80::1", 0)]),
            hub(
                "a.test",
                &ours,
                vec![addr("fe80::9", 4), addr("10.0.0.1", 4)],
            ),
            old,
            host,
        ];
        let chosen = hubs_of_ca(&seen, &ours, Family::V4);
        let names: Vec<&str> = chosen.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a.test", "b.test"]);
        assert_eq!(chosen[0].addrs[0].to_string(), "10.0.0.1:7700");
        assert_eq!(chosen[0].addrs[1].to_string(), "[fe80::9%4]:7700");
    }

    #[test]
    fn a_service_without_txt_is_named_by_its_instance_and_has_no_ca() {
        let mut seen = hub("x", &fp(1), vec![addr("10.0.0.1", 1)]);
        seen.txt.clear();
        let c = Candidate::from_seen(&seen, Family::V4);
        assert_eq!(c.name, seen.instance);
        assert_eq!(c.ca_fingerprint, None);
        assert!(c.speaks_our_protocol());
        seen.txt.insert("fp".into(), "sha256:nothex".into());
        assert_eq!(Candidate::from_seen(&seen, Family::V4).ca_fingerprint, None);
    }
}
