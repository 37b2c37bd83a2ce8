//! Flotilla's host daemon: the actor tree (see [`supervisor`]), the control
//! socket, homes, config, the daemon's lifecycle and its service files, and
//! the client the `flotilla` command uses to talk to it.

pub mod client;
pub mod config;
pub mod context;
pub mod control;
mod crash_point;
pub mod daemon;
pub mod enrollment;
pub mod fleet;
mod frame_fit;
pub mod governance;
pub mod home;
pub mod hub_link;
pub mod hub_server;
pub mod lanes;
pub mod lock;
mod logging;
pub mod registry;
pub mod remote_lanes;
pub mod router;
pub mod service;
mod sessions;
pub mod status;
pub mod store_file;
pub mod supervisor;
mod verdict;
pub mod watchdog;
