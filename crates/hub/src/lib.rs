//! Flotilla's hub: it will route group-scoped messages between host daemons
//! over mutually authenticated QUIC, hold messages for offline hosts and give
//! the operator one roster. For now it is the transport: the hub's endpoint
//! ([`HubEndpoint`]) that authenticates hosts and runs the session
//! handshake, and the host's side of the link ([`link::connect`]).
//!
//! Owns QUIC: transport parameters ([`transport`]), sockets, timeouts and the
//! closing of connections. The protocol's decisions live in
//! `flotilla_actors::federation` and trust in `flotilla_actors::tls`; this
//! crate only drives them.

pub mod attempts;
pub mod budget;
mod budget_pace;
pub mod control;
pub mod core;
pub mod discovery;
pub mod endpoint;
pub mod enroll;
pub mod enroll_store;
pub mod grants;
pub mod group_policy;
pub mod groups_file;
pub mod hub_clock;
pub mod link;
pub mod live;
pub mod outbound;
mod private_file;
pub mod queue_writer;
pub mod revocation_list;
pub mod roster;
mod session;
pub mod setup;
pub mod store;
#[cfg(test)]
mod test_message;
pub mod transport;
pub mod view;
pub mod web;

pub use endpoint::{BindError, HubEndpoint, LinkEvent};
pub use flotilla_actors::tls::ALPN;
pub use link::{ConnectError, ConnectOptions, HubSession, SessionError, connect};
pub use private_file::StoreError;
