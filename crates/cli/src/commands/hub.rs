//! `hub init` and `hub run`.

use std::time::SystemTime;

use anyhow::Result;
use flotilla_host::hub_server;
use serde_json::json;

use super::Env;
use super::certs::{cert_json, time};
use crate::args::HubInitArgs;
use crate::exit::OK;
use crate::output;

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
        }));
    } else {
        println!(
            "hub {} initialized in {}\n  CA fingerprint {} (hosts check it)\n  hub certificate valid until {}\n  listens on {}, enrollment on {} (config.toml [hub_server])\nnext:",
            args.name,
            done.certs.dir.display(),
            done.made.ca.fingerprint,
            time(done.made.hub.not_after),
            done.listen,
            done.enroll_listen
        );
        for step in next {
            println!("  {step}");
        }
    }
    Ok(OK)
}

pub(crate) async fn run(env: &Env) -> Result<u8> {
    hub_server::run(&env.home).await?;
    Ok(OK)
}

pub(crate) async fn roster(env: &Env) -> Result<u8> {
    let reply = hub_server::roster(&env.home).await?;
    if env.json {
        output::json(&reply);
    } else {
        print!("{}", crate::output::hub_roster(&reply));
    }
    Ok(OK)
}
