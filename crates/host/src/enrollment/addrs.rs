//! Where an invited host should dial: the hub's main and enrollment
//! addresses, worked out from `[hub_server]`, `--addr` overrides and, as a
//! last resort, the names in the hub's certificate.
//!
//! Pure: takes the parsed addresses and the certificate's names, returns
//! pairs `(main, enroll)` of `HOST:PORT` strings. Must not read files.

use std::net::{IpAddr, SocketAddr};

/// One dialable hub: its main address and its enrollment address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialPair {
    /// `HOST:PORT` of the main (mutual TLS) port.
    pub hub: String,
    /// `HOST:PORT` of the enrollment port.
    pub enroll: String,
}

/// Why no dialable address could be worked out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddrError {
    /// An `--addr` is not a host, an IP or `HOST:PORT`.
    #[error("--addr {0:?} is not an address; pass an IP, a DNS name, or either with :PORT")]
    Bad(String),
    /// The hub listens on all interfaces and nothing says how to reach it.
    #[error(
        "the hub listens on {0} (all interfaces) and its certificate names no address, so the token could not say \
         where to dial; pass --addr with the IP or DNS name hosts reach this hub by"
    )]
    None(SocketAddr),
}

fn pair(host: &str, hub_port: u16, enroll_port: u16) -> DialPair {
    match host.parse::<IpAddr>() {
        Ok(ip) => DialPair {
            hub: SocketAddr::new(ip, hub_port).to_string(),
            enroll: SocketAddr::new(ip, enroll_port).to_string(),
        },
        Err(_) => DialPair {
            hub: format!("{host}:{hub_port}"),
            enroll: format!("{host}:{enroll_port}"),
        },
    }
}

/// An `--addr`: `IP`, `NAME`, `IP:PORT`, `[V6]:PORT` or `NAME:PORT`. A
/// given port is the main port; the enrollment port keeps its offset.
fn from_override(
    text: &str,
    listen: SocketAddr,
    enroll: SocketAddr,
) -> Result<DialPair, AddrError> {
    let bad = || AddrError::Bad(text.to_owned());
    let offset = i32::from(enroll.port()) - i32::from(listen.port());
    let with_port = |host: &str, port: u16| {
        let enroll_port = u16::try_from(i32::from(port) + offset).map_err(|_| bad())?;
        Ok(pair(host, port, enroll_port))
    };
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return with_port(&addr.ip().to_string(), addr.port());
    }
    if text.parse::<IpAddr>().is_ok() {
        return Ok(pair(text, listen.port(), enroll.port()));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) => (host, Some(port.parse::<u16>().map_err(|_| bad())?)),
        None => (text, None),
    };
    if host.is_empty() || rustls_dns(host).is_none() {
        return Err(bad());
    }
    match port {
        Some(port) => with_port(host, port),
        None => Ok(pair(host, listen.port(), enroll.port())),
    }
}

fn rustls_dns(host: &str) -> Option<()> {
    host.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        .then_some(())
}

/// The pairs to put in a token: the overrides if any, else the listen
/// address if it is a specific IP, else the certificate's IPs then DNS
/// names.
pub fn dial_pairs(
    listen: SocketAddr,
    enroll: SocketAddr,
    overrides: &[String],
    cert_ips: &[IpAddr],
    cert_dns: &[String],
) -> Result<Vec<DialPair>, AddrError> {
    if !overrides.is_empty() {
        return overrides
            .iter()
            .map(|o| from_override(o, listen, enroll))
            .collect();
    }
    if !listen.ip().is_unspecified() {
        let enroll_ip = if enroll.ip().is_unspecified() {
            listen.ip()
        } else {
            enroll.ip()
        };
        return Ok(vec![DialPair {
            hub: listen.to_string(),
            enroll: SocketAddr::new(enroll_ip, enroll.port()).to_string(),
        }]);
    }
    let names = cert_ips
        .iter()
        .map(IpAddr::to_string)
        .chain(cert_dns.iter().cloned());
    let pairs: Vec<DialPair> = names
        .map(|n| pair(&n, listen.port(), enroll.port()))
        .collect();
    if pairs.is_empty() {
        return Err(AddrError::None(listen));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("addr")
    }

    fn hubs(pairs: &[DialPair]) -> Vec<(&str, &str)> {
        pairs
            .iter()
            .map(|p| (p.hub.as_str(), p.enroll.as_str()))
            .collect()
    }

    #[test]
    fn a_specific_listen_address_is_dialed_as_is() {
        let pairs =
            dial_pairs(addr("10.0.0.1:7700"), addr("0.0.0.0:7701"), &[], &[], &[]).expect("pairs");
        assert_eq!(hubs(&pairs), [("10.0.0.1:7700", "10.0.0.1:7701")]);
    }

    #[test]
    fn overrides_win_and_keep_the_port_offset() {
        let overrides = [
            "hub.lan".to_owned(),
            "192.0.2.9:9000".into(),
            "[::1]:80".into(),
        ];
        let pairs = dial_pairs(
            addr("0.0.0.0:7700"),
            addr("0.0.0.0:7701"),
            &overrides,
            &[],
            &[],
        )
        .expect("pairs");
        assert_eq!(
            hubs(&pairs),
            [
                ("hub.lan:7700", "hub.lan:7701"),
                ("192.0.2.9:9000", "192.0.2.9:9001"),
                ("[::1]:80", "[::1]:81"),
            ]
        );
        let bad = dial_pairs(
            addr("0.0.0.0:1"),
            addr("0.0.0.0:2"),
            &["a b".into()],
            &[],
            &[],
        );
        assert_eq!(bad, Err(AddrError::Bad("a b".into())));
    }

    #[test]
    fn all_interfaces_falls_back_to_the_certificate_names_or_says_what_to_pass() {
        let ips = ["192.0.2.1".parse().expect("ip")];
        let dns = ["hub.test".to_owned()];
        let pairs =
            dial_pairs(addr("0.0.0.0:7700"), addr("0.0.0.0:7701"), &[], &ips, &dns).expect("pairs");
        assert_eq!(
            hubs(&pairs),
            [
                ("192.0.2.1:7700", "192.0.2.1:7701"),
                ("hub.test:7700", "hub.test:7701")
            ]
        );
        let none = dial_pairs(addr("0.0.0.0:7700"), addr("0.0.0.0:7701"), &[], &[], &[]);
        let err = none.expect_err("no address");
        assert!(err.to_string().contains("--addr"), "{err}");
    }
}
