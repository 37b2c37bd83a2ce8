//! The hub's read-only web roster (`flotilla hub web`, or `[hub_server]
//! web` in `hub run`): one page on loopback showing the hosts, their link
//! health over time, peers by group, lanes and queues, kept live by
//! server-sent events. The page, its script and style are shipped inside
//! the binary and load nothing from elsewhere.
//!
//! Owns the web side only: it reads the roster over the hub's control
//! socket (the same data as `hub roster --json`); must not change the hub,
//! listen beyond loopback (no TLS here), or write its token anywhere.

mod health;
mod http;
mod server;
mod snapshot;
mod token;

use std::net::SocketAddr;

pub use health::{HealthBook, SAMPLES, Sample};
pub use http::{HeadError, SECURITY_HEADERS};
pub use server::{KEEP_ALIVE, MAX_EVENT_CLIENTS, READ_EVERY, WebServer, check_listen};
pub use snapshot::{WEB_ROSTER_SCHEMA, WebGroup, WebHost, WebLane, WebPeer, WebSnapshot, build};
pub use token::Token;

/// Schema id of what `flotilla hub web --json` prints at start.
pub const HUB_WEB_SCHEMA: &str = "flotilla.hub-web.v1";

/// The default listen address of `flotilla hub web`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7780";

/// Why the web roster could not start or answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// Not `IP:PORT`.
    #[error(
        "{0:?} is not a usable web listen address; use IP:PORT on loopback, for example 127.0.0.1:7780"
    )]
    Address(String),
    /// A non-loopback address.
    #[error(
        "the web roster will not listen on {0}: it is not a loopback address, and a public address needs TLS, which this release does not serve; listen on 127.0.0.1 and reach it through an SSH tunnel (ssh -L 7780:127.0.0.1:7780 HUB-MACHINE)"
    )]
    NotLoopback(SocketAddr),
    /// The address could not be bound.
    #[error("the web roster could not listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS reason.
        source: std::io::Error,
    },
    /// No randomness for the token.
    #[error("no randomness for the web roster's token")]
    Random,
    /// A bad request head.
    #[error(transparent)]
    Head(#[from] HeadError),
    /// A socket failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert!(check_listen("127.0.0.1:7780").is_ok());
        assert!(check_listen("[::1]:0").is_ok());
        for public in ["0.0.0.0:7780", "192.0.2.7:80", "[::]:7780"] {
            let e = check_listen(public)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains("needs TLS") && e.contains("SSH tunnel"),
                "{public}: {e}"
            );
        }
        assert!(matches!(
            check_listen("localhost"),
            Err(WebError::Address(_))
        ));
    }
}
