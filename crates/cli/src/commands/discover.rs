//! `discover`: browses the LAN over mDNS for a while and lists the hubs and
//! hosts that answered, each with whether it belongs to this home's CA.
//! Needs no daemon; changes nothing.

use std::time::Duration;

use anyhow::Result;
use flotilla_actors::pki::Fingerprint;
use flotilla_hub::discovery::mdns::MdnsDiscovery;
use flotilla_hub::discovery::{Candidate, Discovery, Family, ServiceKind};
use flotilla_hub::setup::{self, CertPaths};
use serde_json::{Value, json};

use super::Env;
use crate::args::DiscoverArgs;
use crate::exit::OK;
use crate::output::out;

pub(crate) async fn run(env: &Env, args: DiscoverArgs) -> Result<u8> {
    let ca = our_ca(env);
    let mdns = MdnsDiscovery::new()?;
    let window = args.timeout;
    let (hubs, hosts) = tokio::join!(
        mdns.browse(ServiceKind::Hub, window, |_| false),
        mdns.browse(ServiceKind::Host, window, |_| false),
    );
    let read = |seen: Vec<_>| -> Vec<Candidate> {
        seen.iter()
            .map(|s| Candidate::from_seen(s, Family::V4))
            .collect()
    };
    let (hubs, hosts) = (read(hubs?), read(hosts?));
    if env.json {
        crate::output::json(&json!({
            "schema": "flotilla.discover.v1",
            "timeout_ms": window.as_millis() as u64,
            "ca_fingerprint": ca.map(|f| f.to_string()),
            "hubs": hubs.iter().map(|c| candidate_json(c, ca.as_ref())).collect::<Vec<_>>(),
            "hosts": hosts.iter().map(|c| candidate_json(c, ca.as_ref())).collect::<Vec<_>>(),
        }))?;
    } else {
        out!("{}", human(&hubs, &hosts, ca.as_ref(), window))?;
    }
    Ok(OK)
}

/// This home's CA fingerprint, if it has a readable `ca.pem`.
fn our_ca(env: &Env) -> Option<Fingerprint> {
    let paths = CertPaths::new(&env.home.certs_dir);
    if !paths.ca_cert().exists() {
        return None;
    }
    match setup::ca_fingerprint(&paths) {
        Ok(fp) => Some(fp),
        Err(e) => {
            eprintln!("warning: cannot read this home's CA, so nothing is matched: {e}");
            None
        }
    }
}

/// `null` without a CA to compare with.
fn matches(c: &Candidate, ca: Option<&Fingerprint>) -> Option<bool> {
    ca.map(|ca| c.has_ca(ca))
}

fn candidate_json(c: &Candidate, ca: Option<&Fingerprint>) -> Value {
    json!({
        "name": c.name,
        "instance": c.instance,
        "addrs": c.addrs.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "port": c.port,
        "ca_fingerprint": c.ca_fingerprint.map(|f| f.to_string()),
        "version": c.version,
        "matches_ca": matches(c, ca),
    })
}

fn human(
    hubs: &[Candidate],
    hosts: &[Candidate],
    ca: Option<&Fingerprint>,
    window: Duration,
) -> String {
    use std::fmt::Write as _;
    if hubs.is_empty() && hosts.is_empty() {
        return format!(
            "no hub or host answered within {}\n",
            humantime::format_duration(window)
        );
    }
    let mut out = format!(
        "{:<5} {:<24} {:<8} {:<40} ADDRESSES\n",
        "KIND", "NAME", "OUR CA", "CA FINGERPRINT"
    );
    for c in hubs.iter().chain(hosts) {
        let ours = match matches(c, ca) {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        let fp = c
            .ca_fingerprint
            .map(|f| f.to_string())
            .unwrap_or("-".into());
        let addrs: Vec<String> = c.addrs.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "{:<5} {:<24} {:<8} {:<40} {}",
            c.kind.as_str(),
            c.name,
            ours,
            fp,
            addrs.join(" ")
        );
    }
    out
}
