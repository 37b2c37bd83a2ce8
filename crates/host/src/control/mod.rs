//! The `ControlServer` actor: the daemon's Unix socket.
//!
//! On start it binds the socket (0600, removing a stale one), then accepts
//! connections in a task it owns; each connection runs in its own task
//! ([`connection`]) that reads JSON-lines requests and dispatches them to the
//! registry and router ([`dispatch`]). On stop it stops accepting and removes
//! the socket. It must not hold any state that a restart would lose: a
//! restart simply binds again.

mod connection;
mod dispatch;
pub(crate) use dispatch::dispatch;
mod lane_files;
mod lanes;
pub(crate) use lanes::{lane as lane_ref, status as lane_view};
mod pipelined;

use std::path::PathBuf;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::net::UnixListener;
use tokio::task::JoinHandle;

use crate::context::HostContext;

/// Messages of the control server.
#[derive(Debug)]
pub enum ControlMsg {
    /// Liveness check.
    Ping(RpcReplyPort<()>),
}

/// A handle on the control server.
pub type ControlRef = ActorRef<ControlMsg>;

/// The control server actor.
#[derive(Debug)]
pub struct ControlServer;

/// The control server's state.
#[derive(Debug)]
pub struct ControlState {
    socket: PathBuf,
    acceptor: JoinHandle<()>,
}

impl Actor for ControlServer {
    type Msg = ControlMsg;
    type State = ControlState;
    type Arguments = Arc<HostContext>;

    async fn pre_start(
        &self,
        _: ControlRef,
        ctx: Arc<HostContext>,
    ) -> Result<ControlState, ActorProcessingErr> {
        let socket = ctx.home.socket_path();
        let listener = bind(&socket)?;
        if ctx.home.socket_is_fallback() {
            std::fs::write(
                ctx.home.socket_record(),
                socket.as_os_str().as_encoded_bytes(),
            )?;
        }
        tracing::info!(socket = %socket.display(), "control socket listening");
        let acceptor = tokio::spawn(accept_loop(listener, ctx));
        Ok(ControlState { socket, acceptor })
    }

    async fn post_stop(
        &self,
        _: ControlRef,
        state: &mut ControlState,
    ) -> Result<(), ActorProcessingErr> {
        state.acceptor.abort();
        let _ = std::fs::remove_file(&state.socket);
        tracing::info!("control socket closed");
        Ok(())
    }

    async fn handle(
        &self,
        _: ControlRef,
        msg: ControlMsg,
        _: &mut ControlState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ControlMsg::Ping(reply) => {
                let _ = reply.send(());
            }
        }
        Ok(())
    }
}

/// Binds the socket, replacing a stale file, readable by the owner only.
fn bind(path: &std::path::Path) -> std::io::Result<UnixListener> {
    UnixListener::from_std(flotilla_actors::private_file::bind_socket(path)?)
}

async fn accept_loop(listener: UnixListener, ctx: Arc<HostContext>) {
    let budget = Arc::new(connection::line_budget(&ctx));
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(connection::serve(stream, ctx.clone(), budget.clone()));
            }
            Err(e) => {
                // Out of descriptors and the like: wait a little, keep serving.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}
