//! Runs one parsed command. Each submodule owns a family of commands; this
//! module only dispatches and holds what they share (the home, the client).

mod batch;
mod certs;
mod claims;
mod config;
mod daemon;
mod daemon_settings;
mod discover;
mod doctor;
mod enroll;
mod fleet;
mod fleet_follow;
mod fleet_room;
mod fleet_start;
mod fleet_tree;
mod fleet_view;
mod fleet_watch;
pub(crate) use fleet_follow::MemberEvent;
pub(crate) use fleet_view::PairsReply;
pub(crate) use fleet_watch::RoomReply;
mod hook;
mod hub;
mod integrations;
mod lane_args;
mod lane_attach;
pub(crate) mod lane_client;
mod lane_removal;
mod lane_step_in;
mod lanes;
mod logs;
pub(crate) mod mail;
mod manual;
mod peers;
mod reachability;
mod ready;
mod service_unit;
mod session;

use std::io::Read;

use anyhow::{Context, Result};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;
use flotilla_host::service::ServiceRole;

use crate::args::{CertsCommand, Cli, Command, HostCommand, HubCommand};
use crate::exit::CliError;

/// What every command needs.
#[derive(Debug, Clone)]
pub(crate) struct Env {
    pub(crate) home: Home,
    pub(crate) json: bool,
}

impl Env {
    pub(crate) async fn client(&self) -> Result<ControlClient> {
        Ok(ControlClient::connect(&self.home).await?)
    }
}

pub(crate) async fn run(cli: Cli) -> Result<u8> {
    // Rendered from the command line alone: no home needed.
    match &cli.command {
        Command::Completions(a) => return manual::completions(a.shell),
        Command::Man(a) => return manual::man(a.out.as_deref(), cli.json),
        Command::Schemas(a) => return crate::schemas::run(a.out.as_deref(), cli.json),
        _ => {}
    }
    let home = Home::resolve(cli.home.as_deref())?;
    let env = Env {
        home,
        json: cli.json,
    };
    match cli.command {
        Command::Up(a) => daemon::up(&env, a).await,
        Command::Down => daemon::down(&env).await,
        Command::Restart => daemon::restart(&env).await,
        Command::Host(HostCommand::Run(a)) => daemon::run(&env, a).await,
        Command::Host(HostCommand::Status) => daemon::status(&env).await,
        Command::Host(HostCommand::Install(a)) => service_unit::install(&env, a, ServiceRole::Host),
        Command::Host(HostCommand::Uninstall(a)) => {
            service_unit::uninstall(&env, a, ServiceRole::Host)
        }
        Command::Hub(HubCommand::Install(a)) => service_unit::install(&env, a, ServiceRole::Hub),
        Command::Hub(HubCommand::Uninstall(a)) => {
            service_unit::uninstall(&env, a, ServiceRole::Hub)
        }
        Command::Peer(c) => peers::peer(&env, c).await,
        Command::Peers(a) => peers::list(&env, a).await,
        Command::Roster(a) => peers::roster(&env, a.all).await,
        Command::Top(a) => crate::top::run(&env, a.all).await,
        Command::Outbox(a) => mail::outbox(&env, a).await,
        Command::Send(a) => mail::send(&env, a).await,
        Command::Broadcast(a) => mail::broadcast(&env, a).await,
        Command::Reply(a) => mail::reply(&env, a).await,
        Command::Inbox(a) => mail::inbox(&env, a).await,
        Command::Hub(HubCommand::Init(a)) => hub::init(&env, a),
        Command::Hub(HubCommand::Run) => hub::run(&env).await,
        Command::Hub(HubCommand::Roster) => hub::roster(&env).await,
        Command::Hub(HubCommand::Web(a)) => hub::web(&env, a).await,
        Command::Hub(HubCommand::Invite(a)) => enroll::invite(&env, a).await,
        Command::Hub(HubCommand::Revoke { host }) => enroll::revoke(&env, &host),
        Command::Hub(HubCommand::Groups { change }) => hub::groups(&env, change),
        Command::Host(HostCommand::Join { token }) => enroll::join(&env, &token).await,
        Command::Certs(CertsCommand::Issue { name, out }) => certs::issue(&env, &name, out),
        Command::Certs(CertsCommand::Show) => certs::show(&env),
        Command::Discover(a) => discover::run(&env, a).await,
        Command::Doctor => doctor::run(&env).await,
        Command::Logs(a) => logs::run(&env, a).await,
        Command::Config(c) => config::run(&env, c),
        Command::Lane(c) => lanes::run(&env, *c).await,
        Command::Fleet(c) => fleet::run(&env, c).await,
        Command::Claim(c) => claims::run(&env, c).await,
        Command::Board(a) => claims::board(&env, a).await,
        Command::Review(a) => claims::review(&env, a).await,
        Command::Gate(a) => claims::gate(&env, a).await,
        Command::Ready(a) => ready::run(&env, a).await,
        Command::Policy(c) => claims::policy(&env, c).await,
        Command::Merge(a) => claims::merge(&env, a).await,
        Command::Change(c) => claims::change(&env, c).await,
        Command::Bench(c) => crate::bench::run(&env, c).await,
        Command::Mcp(a) => crate::mcp::run(env, a).await,
        Command::Hook(c) => hook::run(&env, c).await,
        Command::Integrations(c) => integrations::run(&env, c),
        Command::Completions(_)
        | Command::Man(_)
        | Command::Schemas(_)
        | Command::LaneShim { .. } => {
            unreachable!("handled above")
        }
    }
}

/// The message text: the argument, or stdin for `-`.
pub(crate) fn message_text(arg: &str) -> Result<String> {
    if arg != "-" {
        return Ok(arg.to_owned());
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .context("cannot read the message from stdin")?;
    String::from_utf8(bytes).map_err(|e| {
        CliError::usage(
            format!(
                "the message on stdin is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "send text; encode binary data (base64) first",
        )
    })
}

/// A duration as the milliseconds a request carries (saturating).
pub(crate) fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
