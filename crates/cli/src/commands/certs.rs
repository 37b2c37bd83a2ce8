//! `certs issue` and `certs show`. Neither ever prints a key.

use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::Result;
use flotilla_actors::names::HostName;
use flotilla_hub::setup::{self, CertPaths, CertSummary, Entry};
use serde_json::{Value, json};

use super::Env;
use crate::exit::OK;
use crate::output::{self, outln};

/// An RFC 3339 time, to the second.
pub(crate) fn time(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A certificate as JSON: `name`, `dns_names`, `fingerprint`, `serial`,
/// `not_after`, `days_left`.
pub(crate) fn cert_json(c: &CertSummary, now: SystemTime) -> Value {
    json!({
        "name": c.name,
        "dns_names": c.dns_names,
        "fingerprint": c.fingerprint.to_string(),
        "serial": c.serial,
        "not_after": time(c.not_after),
        "days_left": c.days_left(now),
    })
}

pub(crate) fn issue(env: &Env, name: &str, out: Option<PathBuf>) -> Result<u8> {
    let host = HostName::new(name)?;
    let now = SystemTime::now();
    let out = out.unwrap_or_else(|| env.home.certs_dir.join("issued").join(name));
    let issued = setup::issue_host(&CertPaths::new(&env.home.certs_dir), &host, &out, now)?;
    let o = &issued.out;
    let next = format!(
        "copy {}, {} and {} into {name}'s certs/ directory (mode 0700; keep host.key 0600), then delete them here",
        o.host_cert().display(),
        o.host_key().display(),
        o.ca_cert().display()
    );
    if env.json {
        output::json(&json!({
            "schema": "flotilla.certs-issue.v1",
            "name": name,
            "dir": o.dir,
            "files": {"cert": o.host_cert(), "key": o.host_key(), "ca": o.ca_cert()},
            "certificate": cert_json(&issued.cert, now),
            "ca_fingerprint": issued.ca_fingerprint.to_string(),
            "next": next,
        }))?;
    } else {
        outln!(
            "issued {name}: certificate valid until {} ({} days), CA {}\nwrote {}\nnext: {next}",
            time(issued.cert.not_after),
            issued.cert.days_left(now),
            issued.ca_fingerprint,
            o.dir.display()
        )?;
    }
    Ok(OK)
}

fn entry_json(e: &Entry, now: SystemTime) -> Value {
    match e {
        None => Value::Null,
        Some(Ok(c)) => cert_json(c, now),
        Some(Err(why)) => json!({"error": why}),
    }
}

fn entry_line(label: &str, e: &Entry, now: SystemTime) -> String {
    match e {
        None => format!("{label:<5} none"),
        Some(Err(why)) => format!("{label:<5} unreadable: {why}"),
        Some(Ok(c)) => {
            let name = if c.name.is_empty() { "-" } else { &c.name };
            format!(
                "{label:<5} {name}  until {} ({} days left)  {}",
                time(c.not_after),
                c.days_left(now),
                c.fingerprint
            )
        }
    }
}

pub(crate) fn show(env: &Env) -> Result<u8> {
    let paths = CertPaths::new(&env.home.certs_dir);
    let inv = setup::inventory(&paths);
    let now = SystemTime::now();
    if env.json {
        let mut ca = entry_json(&inv.ca, now);
        if let Some(obj) = ca.as_object_mut() {
            obj.insert("has_key".into(), Value::Bool(inv.ca_key));
        }
        output::json(&json!({
            "schema": "flotilla.certs.v1",
            "certs_dir": paths.dir,
            "ca": ca,
            "hub": entry_json(&inv.hub, now),
            "host": entry_json(&inv.host, now),
        }))?;
    } else {
        outln!("certificates in {}", paths.dir.display())?;
        let ca_label = if inv.ca_key {
            "CA (with its key: this home is the CA)"
        } else {
            "CA"
        };
        outln!("{}", entry_line("ca", &inv.ca, now))?;
        if inv.ca.is_some() {
            outln!("      {ca_label}")?;
        }
        outln!("{}", entry_line("hub", &inv.hub, now))?;
        outln!("{}", entry_line("host", &inv.host, now))?;
    }
    Ok(OK)
}
