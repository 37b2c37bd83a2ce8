//! Who a lane's process is: the environment that ties it to its own daemon
//! and peer, and the command that serves it Flotilla's MCP tools.
//!
//! Every turn's process gets `FLOTILLA_HOME` (when the daemon runs from an
//! explicit home; for the XDG default, any inherited `FLOTILLA_HOME` is
//! removed so the default is found), `FLOTILLA_PEER` (the lane's name, so
//! `flotilla send` acts as the lane) and `FLOTILLA_HOST`. They are set
//! after the lane's own `--env`, so a lane cannot be started under another
//! peer's name. Connectors that take MCP servers per run register
//! [`McpServer`]. Plain data; must not start processes.

use std::path::Path;

use flotilla_actors::names::PeerId;

/// The variable naming the daemon's home.
pub const ENV_HOME: &str = "FLOTILLA_HOME";
/// The variable naming the peer a process acts as.
pub const ENV_PEER: &str = "FLOTILLA_PEER";
/// The variable naming the host.
pub const ENV_HOST: &str = "FLOTILLA_HOST";

/// Flotilla's MCP server as a lane's CLI starts it: `flotilla mcp` for the
/// lane's own identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// The `flotilla` executable.
    pub program: String,
    /// Its arguments (`mcp --as NAME [--home DIR]`).
    pub args: Vec<String>,
    /// The identity variables, for CLIs that do not pass their own
    /// environment to MCP servers.
    pub env: Vec<(String, String)>,
}

/// A lane's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneIdentity {
    /// The daemon's explicit home, if it has one.
    pub home: Option<String>,
    /// The lane's peer id.
    pub peer: PeerId,
}

impl LaneIdentity {
    /// The identity of lane `peer` of a daemon with `home`.
    pub fn new(home: Option<&Path>, peer: PeerId) -> Self {
        Self {
            home: home.map(|h| h.display().to_string()),
            peer,
        }
    }

    /// The variables to set, in order.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(home) = &self.home {
            env.push((ENV_HOME.to_owned(), home.clone()));
        }
        env.push((ENV_PEER.to_owned(), self.peer.name.to_string()));
        env.push((ENV_HOST.to_owned(), self.peer.host.to_string()));
        env
    }

    /// Variables to remove from the inherited environment.
    pub fn env_removed(&self) -> Vec<&'static str> {
        if self.home.is_none() {
            vec![ENV_HOME]
        } else {
            Vec::new()
        }
    }

    /// The MCP server for this lane, run by `program` (this `flotilla`).
    pub fn mcp_server(&self, program: &str) -> McpServer {
        let mut args = vec![
            "mcp".to_owned(),
            "--as".to_owned(),
            self.peer.name.to_string(),
        ];
        if let Some(home) = &self.home {
            args.extend(["--home".to_owned(), home.clone()]);
        }
        McpServer {
            program: program.to_owned(),
            args,
            env: self.env(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_home_is_passed_and_the_default_is_cleared() {
        let peer = PeerId::parse("work/review").expect("id");
        let lane = LaneIdentity::new(Some(Path::new("/h")), peer.clone());
        assert_eq!(
            lane.env(),
            [
                ("FLOTILLA_HOME".to_owned(), "/h".to_owned()),
                ("FLOTILLA_PEER".to_owned(), "review".to_owned()),
                ("FLOTILLA_HOST".to_owned(), "work".to_owned()),
            ]
        );
        assert!(lane.env_removed().is_empty());
        let server = lane.mcp_server("/bin/flotilla");
        assert_eq!(server.args, ["mcp", "--as", "review", "--home", "/h"]);
        let xdg = LaneIdentity::new(None, peer);
        assert_eq!(xdg.env_removed(), ["FLOTILLA_HOME"]);
        assert_eq!(xdg.mcp_server("f").args, ["mcp", "--as", "review"]);
    }
}
