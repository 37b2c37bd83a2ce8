//! `peer join|leave|rename`, `peers` and `roster`.

use anyhow::Result;
use flotilla_actors::names::{GroupName, PeerName};
use flotilla_actors::protocol::{
    PeerJoinArgs, PeerLeaveArgs, PeerRenameArgs, PeersArgs, RosterArgs,
};

use super::Env;
use crate::args::{AsPeer, PeerCommand};
use crate::exit::OK;
use crate::output::{self, out, outln};

pub(crate) async fn peer(env: &Env, cmd: PeerCommand) -> Result<u8> {
    use flotilla_actors::lane::CliKind;
    let session = match cmd {
        PeerCommand::Claude(a) => Some((CliKind::Claude, a)),
        PeerCommand::Codex(a) => Some((CliKind::Codex, a)),
        PeerCommand::Gemini(a) => Some((CliKind::Gemini, a)),
        PeerCommand::Qwen(a) => Some((CliKind::Qwen, a)),
        PeerCommand::Pi(a) => Some((CliKind::Pi, a)),
        PeerCommand::Opencode(a) => Some((CliKind::Opencode, a)),
        PeerCommand::Grok(a) => Some((CliKind::Grok, a)),
        other => return mailbox(env, other).await,
    };
    match session {
        Some((cli, a)) => super::session::launch(env, cli, a).await,
        None => Ok(OK),
    }
}

/// Schema id of `peer join|rename --json` (a [`PeerView`]).
pub(crate) const PEER_SCHEMA: &str = "flotilla.peer.v1";
/// Schema id of `peer leave --json`.
pub(crate) const PEER_LEAVE_SCHEMA: &str = "flotilla.peer-leave.v1";

async fn mailbox(env: &Env, cmd: PeerCommand) -> Result<u8> {
    let mut client = env.client().await?;
    match cmd {
        PeerCommand::Join {
            name,
            groups,
            product,
        } => {
            let args = PeerJoinArgs {
                name: PeerName::new(&name)?,
                groups: groups
                    .iter()
                    .map(|g| GroupName::explicit(g))
                    .collect::<Result<_, _>>()?,
                product,
                session: None,
            };
            let view = client.call(&args).await?;
            if env.json {
                output::json_as(PEER_SCHEMA, &view)?;
            } else {
                let g: Vec<&str> = view.groups.iter().map(|g| g.as_str()).collect();
                outln!("joined as {} (groups: {})", view.id, g.join(", "))?;
            }
        }
        PeerCommand::Leave { name, force } => {
            let reply = client
                .call(&PeerLeaveArgs {
                    name: PeerName::new(&name)?,
                    force,
                })
                .await?;
            if env.json {
                output::json_as(PEER_LEAVE_SCHEMA, &reply)?;
            } else if reply.dropped_unread > 0 {
                outln!(
                    "{} left; {} unread message(s) dropped",
                    reply.id,
                    reply.dropped_unread
                )?;
            } else {
                outln!("{} left", reply.id)?;
            }
        }
        PeerCommand::Rename { old, new } => {
            let args = PeerRenameArgs {
                old: PeerName::new(&old)?,
                new: PeerName::new(&new)?,
            };
            let view = client.call(&args).await?;
            if env.json {
                output::json_as(PEER_SCHEMA, &view)?;
            } else {
                outln!("renamed {old} to {}", view.id)?;
            }
        }
        _ => {}
    }
    Ok(OK)
}

pub(crate) async fn list(env: &Env, args: AsPeer) -> Result<u8> {
    let reply = env
        .client()
        .await?
        .call(&PeersArgs {
            as_peer: PeerName::new(&args.as_peer)?,
        })
        .await?;
    if env.json {
        output::json(&reply)?;
    } else {
        out!("{}", output::peers(&reply.peers))?;
    }
    Ok(OK)
}

pub(crate) async fn roster(env: &Env, all: bool) -> Result<u8> {
    let reply = env.client().await?.call(&RosterArgs { all }).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        out!("{}", output::roster(&reply))?;
    }
    Ok(OK)
}
