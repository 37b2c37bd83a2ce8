//! The `HubLink` actor: this host's link to its hub. Started by the
//! supervisor only when a hub is configured (`hub` in `config.toml` or
//! `--hub`; `auto` finds it over mDNS at every attempt, see `resolve`).
//!
//! The actor is a shell around one driver task, which dials the hub with
//! the host's certificate (`certs/host.pem`, `host.key`, `ca.pem`, read
//! again at every attempt so newly copied files are used), pings it to
//! measure the round trip and to notice a dead link, and reconnects after a
//! jittered exponential backoff. Its bookkeeping is the pure
//! [`LinkTracker`], kept in the shared context for `host status`. Stopping
//! the actor closes the link politely; a driver that panics makes the actor
//! fail, so the supervisor restarts it.

mod announced;
mod driver;
mod resend;
mod resolve;
pub mod roster;
mod session;
pub mod state;

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use state::{LinkTracker, ReconnectPolicy};

use crate::context::HostContext;

/// How long stopping waits for the link to close.
const STOP_PATIENCE: Duration = Duration::from_secs(2);

/// Messages of the hub link.
#[derive(Debug)]
pub enum HubLinkMsg {
    /// The driver task ended on its own (it panicked); the actor fails so
    /// the supervisor restarts it.
    DriverEnded(String),
}

/// A handle on the hub link.
pub type HubLinkRef = ActorRef<HubLinkMsg>;

/// The hub link actor.
#[derive(Debug)]
pub struct HubLink;

/// The hub link's state: how to stop its driver.
#[derive(Debug)]
pub struct HubLinkActorState {
    /// Tells the driver to close the link and return.
    stop: Option<oneshot::Sender<()>>,
    /// The driver (and the watcher reporting its panic).
    task: Option<JoinHandle<()>>,
}

impl Actor for HubLink {
    type Msg = HubLinkMsg;
    type State = HubLinkActorState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        myself: HubLinkRef,
        ctx: Arc<HostContext>,
    ) -> Result<HubLinkActorState, ActorProcessingErr> {
        let settings = driver::Settings::from_context(&ctx)?;
        let (stop, stopped) = oneshot::channel();
        let inner = tokio::spawn(driver::drive(ctx, settings, stopped));
        let task = tokio::spawn(async move {
            if let Err(e) = inner.await
                && e.is_panic()
            {
                let _ = myself.send_message(HubLinkMsg::DriverEnded(format!(
                    "the hub link's driver panicked: {e}"
                )));
            }
        });
        Ok(HubLinkActorState {
            stop: Some(stop),
            task: Some(task),
        })
    }

    async fn handle(
        &self,
        _: HubLinkRef,
        msg: HubLinkMsg,
        _: &mut HubLinkActorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            HubLinkMsg::DriverEnded(why) => Err(why.into()),
        }
    }

    async fn post_stop(
        &self,
        _: HubLinkRef,
        state: &mut HubLinkActorState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(stop) = state.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = state.task.take() {
            let _ = tokio::time::timeout(STOP_PATIENCE, task).await;
        }
        Ok(())
    }
}
