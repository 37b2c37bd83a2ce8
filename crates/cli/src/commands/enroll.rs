//! `hub invite`, `hub revoke` and `host join`. The token is the only thing
//! `hub invite` prints on stdout in human mode; nothing prints a key. After
//! the token, `hub invite` checks that the hub answers at its addresses
//! (`reachability`; skipped with `--no-check`).

use std::time::SystemTime;

use anyhow::Result;
use flotilla_actors::names::HostName;
use flotilla_actors::pki::CertInfo;
use flotilla_host::enrollment;
use serde_json::{Value, json};

use super::certs::time;
use super::{Env, reachability};
use crate::args::HubInviteArgs;
use crate::exit::OK;
use crate::output::{self, outln};

fn cert_info_json(c: &CertInfo) -> Value {
    json!({
        "name": c.name,
        "fingerprint": c.fingerprint.to_string(),
        "serial": c.serial.to_string(),
        "not_after": time(c.not_after),
    })
}

pub(crate) async fn invite(env: &Env, args: HubInviteArgs) -> Result<u8> {
    let host = HostName::new(&args.host)?;
    let made = enrollment::invite(&env.home, &host, args.ttl, &args.addrs, SystemTime::now())?;
    let next = format!("on {host}: flotilla host join TOKEN");
    if env.json {
        let t = &made.decoded;
        let mut out = json!({
            "schema": "flotilla.hub-invite.v1",
            "host": host.as_str(),
            "token": made.token,
            "token_id": t.token_id,
            "expires_at": time(made.expires),
            "hub_name": t.hub_name,
            "hub_addrs": t.hub_addrs,
            "enroll_addrs": t.enroll_addrs,
            "ca_fingerprint": t.ca_fingerprint,
            "next": next,
        });
        if !args.no_check {
            out["reachability"] = reachability::json(&reachability::check(t).await);
        }
        output::json(&out)?;
    } else {
        outln!("{}", made.token)?;
        crate::verbosity::note!(
            "single-use token for {host}, valid until {}; hub at {}\nnext: {next} (keep the token secret until used)",
            time(made.expires),
            made.decoded.hub_addrs.join(", ")
        );
        if !args.no_check {
            reachability::report(&reachability::check(&made.decoded).await);
        }
    }
    Ok(OK)
}

pub(crate) fn revoke(env: &Env, host: &str) -> Result<u8> {
    let host = HostName::new(host)?;
    let done = enrollment::revoke(&env.home, &host, SystemTime::now())?;
    if env.json {
        let revoked: Vec<Value> = done
            .entries
            .iter()
            .map(|e| json!({"serial": e.serial, "fingerprint": e.fingerprint}))
            .collect();
        output::json(&json!({
            "schema": "flotilla.hub-revoke.v1",
            "host": host.as_str(),
            "revoked": revoked,
            "newly_revoked": done.added,
            "list": done.list,
        }))?;
    } else {
        outln!(
            "revoked {} certificate(s) of {host} ({} new); a running hub drops its link within about a second\n\
             to let {host} back: flotilla hub invite {host}, then on {host}: flotilla host join TOKEN",
            done.entries.len(),
            done.added
        )?;
    }
    Ok(OK)
}

pub(crate) async fn join(env: &Env, token: &str) -> Result<u8> {
    let waiting = crate::progress::Waiting::start("enrolling with the hub");
    let done = enrollment::join(&env.home, token).await?;
    drop(waiting);
    let host = done.token.host.as_str();
    if env.json {
        output::json(&json!({
            "schema": "flotilla.host-join.v1",
            "host": host,
            "hub": done.hub_addr,
            "hub_name": done.token.hub_name,
            "ca_fingerprint": done.ca_fingerprint.to_string(),
            "certificate": cert_info_json(&done.certificate),
            "certs_dir": done.certs.dir,
            "config": env.home.config_file,
            "next": "flotilla up",
        }))?;
    } else {
        outln!(
            "{host} enrolled with hub {} at {}: certificate valid until {}, CA {}\n\
             wrote {} (host.key stays here) and hub, hub_name in {}\nnext: flotilla up",
            done.token.hub_name,
            done.hub_addr,
            time(done.certificate.not_after),
            done.ca_fingerprint,
            done.certs.dir.display(),
            env.home.config_file.display()
        )?;
    }
    Ok(OK)
}
