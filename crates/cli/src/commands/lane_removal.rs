//! `flotilla lane rm` and `flotilla lane prune`: removing lanes for good.
//! The daemon decides what may go (never a running lane; an uncollected
//! result or unread messages only with `--force`); this prints its answer.

use anyhow::Result;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{LanePruneArgs, LaneRemoveArgs};

use super::Env;
use super::lane_client::LaneClient;
use crate::exit::OK;
use crate::output::{self, outln};

/// `lane rm NAME [--force]`.
pub(crate) async fn remove(env: &Env, c: &mut LaneClient, name: &str, force: bool) -> Result<u8> {
    let name = PeerName::new(name)?;
    let reply = c.call(&LaneRemoveArgs { name, force }).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        let dropped = match reply.dropped_unread {
            0 => String::new(),
            n => format!(" ({n} unread message(s) dropped)"),
        };
        outln!("removed lane {}{dropped}", reply.lane)?;
    }
    Ok(OK)
}

/// `lane prune [--older-than D]`.
pub(crate) async fn prune(env: &Env, c: &mut LaneClient, older_than: Option<u64>) -> Result<u8> {
    let reply = c
        .call(&LanePruneArgs {
            older_than_secs: older_than,
        })
        .await?;
    if env.json {
        output::json(&reply)?;
        return Ok(OK);
    }
    for lane in &reply.removed {
        outln!("removed {lane}")?;
    }
    for kept in &reply.kept {
        outln!("kept    {}: {}", kept.lane, kept.reason)?;
    }
    crate::verbosity::note!(
        "{} lane(s) removed, {} kept{}",
        reply.removed.len(),
        reply.kept.len(),
        if reply.kept.is_empty() {
            ""
        } else {
            " (`flotilla lane rm NAME --force` removes one anyway)"
        }
    );
    Ok(OK)
}
