//! How the lane commands reach a lane: this host's daemon directly, or,
//! with `--host`, the daemon of another host through this host's daemon
//! and the hub (`remote.call`). Every lane verb works the same either way.

use anyhow::Result;
use flotilla_actors::names::{HostName, PeerName};
use flotilla_actors::protocol::{Op, RemoteCallArgs};
use flotilla_host::client::ControlClient;

use super::Env;
use crate::exit::CliError;

/// A connection for lane ops, local or relayed.
pub(crate) struct LaneClient {
    client: ControlClient,
    /// The host that runs the lane, when it is not this one.
    host: Option<HostName>,
    /// On whose behalf a remote call is made.
    as_peer: Option<PeerName>,
}

impl LaneClient {
    /// Connects to this host's daemon.
    pub(crate) async fn connect(
        env: &Env,
        host: Option<HostName>,
        as_peer: Option<PeerName>,
    ) -> Result<Self> {
        Ok(Self {
            client: env.client().await?,
            host,
            as_peer,
        })
    }

    /// A fresh connection to the same place, for the same peer.
    pub(crate) async fn reconnect(&self, env: &Env) -> Result<Self> {
        Self::connect(env, self.host.clone(), self.as_peer.clone()).await
    }

    /// The command line of lane verb `verb` for lane `name`, as the user
    /// would type it here (with `--host` for a remote lane).
    pub(crate) fn command_for(&self, verb: &str, name: &PeerName) -> String {
        crate::hint::paste(&match &self.host {
            Some(host) => format!("flotilla lane {verb} {name} --host {host}"),
            None => format!("flotilla lane {verb} {name}"),
        })
    }

    /// Whether the lane is on another host.
    pub(crate) fn is_remote(&self) -> bool {
        self.host.is_some()
    }

    /// Calls a lane op, on this host or through the hub.
    pub(crate) async fn call<O: Op>(&mut self, op: &O) -> Result<O::Reply> {
        let Some(host) = &self.host else {
            return Ok(self.client.call(op).await?);
        };
        let remote = RemoteCallArgs {
            host: host.clone(),
            as_peer: self.as_peer.clone(),
            op: O::NAME.to_owned(),
            args: serde_json::to_value(op)?,
        };
        let value = self.client.call(&remote).await?;
        serde_json::from_value(value).map_err(|e| {
            CliError::failed(
                format!(
                    "{host} answered {} with something this flotilla cannot read: {e}",
                    O::NAME
                ),
                Some("run the same flotilla release on every host".to_owned()),
            )
        })
    }
}
