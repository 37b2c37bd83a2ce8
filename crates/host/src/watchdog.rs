//! The `Watchdog` actor: notices children that stopped making progress.
//!
//! Every interval it pings the registry and the router; one that does not
//! answer within the timeout is killed, so the supervisor restarts it from
//! the store. It also asks the registry to flush last-seen times, and every
//! lane to check its turn for a stall (see `lanes::stall`). It must not restart anything itself (the
//! supervisor's job).

use std::sync::Arc;
use std::time::Duration;

use ractor::concurrency::JoinHandle;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::context::HostContext;
use crate::registry::RegistryMsg;
use crate::router::RouterMsg;

/// Flush last-seen times every this many ticks.
const FLUSH_EVERY: u64 = 15;

/// Messages of the watchdog.
#[derive(Debug)]
pub enum WatchdogMsg {
    /// Time to check.
    Tick,
    /// Liveness check.
    Ping(RpcReplyPort<()>),
    /// Test hook: fail now.
    Fail,
}

/// A handle on the watchdog.
pub type WatchdogRef = ActorRef<WatchdogMsg>;

/// The watchdog actor.
#[derive(Debug)]
pub struct Watchdog;

/// The watchdog's state.
#[derive(Debug)]
pub struct WatchdogState {
    ctx: Arc<HostContext>,
    ticker: JoinHandle<()>,
    ticks: u64,
}

impl Actor for Watchdog {
    type Msg = WatchdogMsg;
    type State = WatchdogState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        myself: WatchdogRef,
        ctx: Arc<HostContext>,
    ) -> Result<WatchdogState, ActorProcessingErr> {
        let ticker = myself.send_interval(ctx.config.watchdog_interval(), || WatchdogMsg::Tick);
        Ok(WatchdogState {
            ctx,
            ticker,
            ticks: 0,
        })
    }

    async fn post_stop(
        &self,
        _: WatchdogRef,
        state: &mut WatchdogState,
    ) -> Result<(), ActorProcessingErr> {
        state.ticker.abort();
        Ok(())
    }

    async fn handle(
        &self,
        _: WatchdogRef,
        msg: WatchdogMsg,
        state: &mut WatchdogState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            WatchdogMsg::Tick => state.check().await,
            WatchdogMsg::Ping(reply) => {
                let _ = reply.send(());
            }
            WatchdogMsg::Fail => panic!("watchdog failed on request (test hook)"),
        }
        Ok(())
    }
}

impl WatchdogState {
    async fn check(&mut self) {
        self.ticks += 1;
        let timeout = self.ctx.config.watchdog_timeout();
        if let Some(registry) = self.ctx.children.registry() {
            if !answers(&registry, RegistryMsg::Ping, timeout).await {
                tracing::error!(
                    ?timeout,
                    "registry stopped answering; killing it so it restarts"
                );
                registry.kill();
            } else if self.ticks.is_multiple_of(FLUSH_EVERY) {
                let _ = registry.cast(RegistryMsg::Flush);
            }
        }
        if let Some(lanes) = self.ctx.children.lanes() {
            let _ = lanes.cast(crate::lanes::LaneSupervisorMsg::Watchdog);
        }
        if let Some(router) = self.ctx.children.router()
            && !answers(&router, RouterMsg::Ping, timeout).await
        {
            tracing::error!(
                ?timeout,
                "router stopped answering; killing it so it restarts"
            );
            router.kill();
        }
    }
}

async fn answers<M: ractor::Message>(
    actor: &ActorRef<M>,
    ping: fn(RpcReplyPort<()>) -> M,
    timeout: Duration,
) -> bool {
    matches!(
        actor.call(ping, Some(timeout)).await,
        Ok(ractor::rpc::CallResult::Success(()))
    )
}
