//! Staying attached to a turn (`lane run`, `lane resume --wait`): progress
//! on stderr, then the result. Ctrl-C once detaches (the lane keeps
//! running; the message says how to collect it); Ctrl-C again within
//! [`SECOND_PRESS`] interrupts the turn and waits for its end (exit 130).
//! Only the terminal's side lives here: what a turn is stays in `lanes`.

use std::time::Duration;

use anyhow::Result;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::LaneInterruptArgs;

use super::Env;
use super::lane_client::LaneClient;
use crate::exit::OK;

/// Schema id of what `--json` prints on a detach.
const DETACHED_SCHEMA: &str = "flotilla.lane-detached.v1";

/// How long after the first Ctrl-C a second one interrupts the turn.
pub(crate) const SECOND_PRESS: Duration = Duration::from_secs(2);

/// Follows the lane's turn and collects its result, unless Ctrl-C comes
/// first.
pub(crate) async fn attached(env: &Env, c: &mut LaneClient, name: &PeerName) -> Result<u8> {
    {
        let turn = async {
            super::lanes::follow(env, c, name, 0).await?;
            super::lanes::wait(env, c, name, None).await
        };
        tokio::select! {
            done = turn => return done,
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    let wait = c.command_for("wait", name);
    eprintln!(
        "detached: lane {name} keeps running; collect its result with `{wait}` \
         (Ctrl-C again within {} s interrupts the turn)",
        SECOND_PRESS.as_secs()
    );
    if tokio::time::timeout(SECOND_PRESS, tokio::signal::ctrl_c())
        .await
        .is_err()
    {
        if env.json {
            crate::output::json(&serde_json::json!({
                "schema": DETACHED_SCHEMA,
                "lane": name.as_str(),
                "wait": wait,
            }))?;
        }
        return Ok(OK);
    }
    // The old connection may still carry an answer to a pending call.
    let mut c = c.reconnect(env).await?;
    c.call(&LaneInterruptArgs { name: name.clone() }).await?;
    eprintln!("interrupting lane {name}'s turn...");
    super::lanes::wait(env, &mut c, name, None).await
}
