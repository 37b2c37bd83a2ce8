//! `hub init`, `hub run`, `hub roster` and `hub groups`.

use std::time::SystemTime;

use anyhow::Result;
use flotilla_host::hub_server;
use flotilla_hub::group_policy::{GroupPolicy, HostPattern, listable};
use serde_json::json;

use super::Env;
use super::certs::{cert_json, time};
use crate::args::{HubGroupsCommand, HubInitArgs, HubWebArgs};
use crate::exit::{CliError, OK};
use crate::output::{self, out, outln};

pub(crate) fn init(env: &Env, args: HubInitArgs) -> Result<u8> {
    let now = SystemTime::now();
    let listen = hub_server::Listen {
        main: &args.listen,
        enroll: args.enroll_listen.as_deref(),
    };
    let done = hub_server::init(&env.home, &args.name, listen, &args.sans, now)?;
    let next = [
        "flotilla hub run".to_owned(),
        "for each host: flotilla hub invite HOST, then on that host: flotilla host join TOKEN"
            .to_owned(),
    ];
    if env.json {
        output::json(&json!({
            "schema": "flotilla.hub-init.v1",
            "name": args.name,
            "listen": done.listen.to_string(),
            "enroll_listen": done.enroll_listen.to_string(),
            "config": env.home.config_file,
            "certs_dir": done.certs.dir,
            "ca": cert_json(&done.made.ca, now),
            "hub": cert_json(&done.made.hub, now),
            "next": next,
            "groups_file": hub_server::hub_groups(&env.home).path(),
            "groups_default": "open",
        }))?;
    } else {
        outln!(
            "hub {} initialized in {}\n  CA fingerprint {} (hosts check it)\n  hub certificate valid until {}\n  listens on {}, enrollment on {} (config.toml [hub_server])\n  \
             groups: every enrolled host may use any group (nothing is listed in {});\n    \
             to let only some hosts have peers in a group: flotilla hub groups allow GROUP HOST_OR_PATTERN...\nnext:",
            args.name,
            done.certs.dir.display(),
            done.made.ca.fingerprint,
            time(done.made.hub.not_after),
            done.listen,
            done.enroll_listen,
            hub_server::hub_groups(&env.home).path().display()
        )?;
        for step in next {
            outln!("  {step}")?;
        }
    }
    Ok(OK)
}

pub(crate) async fn run(env: &Env) -> Result<u8> {
    hub_server::run(&env.home).await?;
    Ok(OK)
}

pub(crate) async fn roster(env: &Env) -> Result<u8> {
    if env.json {
        // Passed on as the hub wrote it: reading megabytes of roster into
        // types only to write them out again was most of the command's time.
        let mut pretty = Vec::new();
        hub_server::roster_to(&env.home, &mut serde_json::Serializer::pretty(&mut pretty)).await?;
        output::json_pretty(&pretty)?;
    } else {
        out!(
            "{}",
            crate::output::hub_roster(&hub_server::roster(&env.home).await?)
        )?;
    }
    Ok(OK)
}

/// `hub web`: serves the web roster until SIGTERM/SIGINT; its URL, token
/// in the fragment, is printed once (one JSON line with `--json`).
pub(crate) async fn web(env: &Env, args: HubWebArgs) -> Result<u8> {
    let json = env.json;
    hub_server::web(&env.home, args.listen, |started| {
        let printed = if json {
            let line = json!({
                "schema": flotilla_hub::web::HUB_WEB_SCHEMA,
                "url": started.url,
                "listen": started.listen.to_string(),
            });
            outln!("{line}")
        } else {
            outln!(
                "web roster: {}\n(read-only, loopback only; the token is in the URL's fragment and is not shown again; Ctrl-C stops it)",
                started.url
            )
        };
        printed.map_err(std::io::Error::other)
    })
    .await?;
    Ok(OK)
}

pub(crate) fn groups(env: &Env, change: Option<HubGroupsCommand>) -> Result<u8> {
    let file = hub_server::hub_groups(&env.home);
    let (policy, changed) = match change {
        None => (file.load()?, false),
        Some(change) => {
            let edit = parse_change(change)?;
            file.edit(|p| edit(p))?
        }
    };
    if env.json {
        let groups: Vec<_> = policy
            .listed()
            .iter()
            .map(|(g, ps)| json!({"group": g, "allow": ps.iter().map(HostPattern::as_str).collect::<Vec<_>>()}))
            .collect();
        output::json(&json!({
            "schema": "flotilla.hub-groups.v1",
            "file": file.path(),
            "groups": groups,
            "unlisted": "open",
            "changed": changed,
        }))?;
    } else {
        out!(
            "{}",
            groups_text(&policy, &file.path().display().to_string(), changed)
        )?;
    }
    Ok(OK)
}

type Edit = Box<dyn FnOnce(&mut GroupPolicy) -> bool>;

/// A change as a checked edit of the list (bad names are usage errors).
fn parse_change(change: HubGroupsCommand) -> Result<Edit> {
    let usage = |e: flotilla_hub::group_policy::PolicyError| {
        CliError::usage(e.to_string(), "see `flotilla hub groups --help`")
    };
    let patterns = |ps: &[String]| -> Result<Vec<HostPattern>> {
        ps.iter()
            .map(|p| HostPattern::new(p).map_err(usage))
            .collect()
    };
    Ok(match change {
        HubGroupsCommand::Allow {
            group,
            patterns: ps,
        } => {
            let (group, ps) = (listable(&group).map_err(usage)?, patterns(&ps)?);
            Box::new(move |p| p.allow(group, ps))
        }
        HubGroupsCommand::Deny {
            group,
            patterns: ps,
        } => {
            let (group, ps) = (listable(&group).map_err(usage)?, patterns(&ps)?);
            Box::new(move |p| p.deny(group, &ps))
        }
        HubGroupsCommand::Open { group } => {
            let group = listable(&group).map_err(usage)?;
            Box::new(move |p| p.open(&group))
        }
    })
}

fn groups_text(policy: &GroupPolicy, file: &str, changed: bool) -> String {
    let mut out = String::new();
    if changed {
        out.push_str(&format!(
            "updated {file}; a running hub follows within a second\n"
        ));
    }
    if policy.listed().is_empty() {
        out.push_str(&format!(
            "no group is listed in {file}: every enrolled host may use any group\n"
        ));
        return out;
    }
    out.push_str(&format!(
        "listed groups ({file}); every other group is open to every enrolled host\n"
    ));
    for (group, patterns) in policy.listed() {
        let allowed: Vec<&str> = patterns.iter().map(HostPattern::as_str).collect();
        let who = match allowed.is_empty() {
            true => "no host".to_owned(),
            false => allowed.join(", "),
        };
        out.push_str(&format!("  {:<24} {who}\n", group.as_str()));
    }
    out
}
