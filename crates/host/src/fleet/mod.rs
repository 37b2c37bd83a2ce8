//! Fleets on this host: the `Fleets` actor that runs them ([`runner`]),
//! does what their runs ask ([`actions`]) and answers service requests
//! ([`service`]); the ops that change them ([`start`]); their members'
//! lanes ([`members`]; those on other hosts through the hub, [`remote`], their
//! steps judged on their host, [`remote_judge`]);
//! what status shows ([`view`]); and the daemon's acceptance of a step
//! ([`acceptance`]), which reads the declared artifacts and runs the task
//! author's checks. Before a failed turn runs again, its member's model
//! endpoint is probed ([`probe`]). The rules themselves (plans, bounces,
//! budgets, rotation, the pair table) live in `flotilla_actors::fleet`;
//! this module gathers facts and does what the rules decide.

pub mod acceptance;
mod actions;
pub mod members;
mod notice;
mod probe;
mod remote;
mod remote_judge;
pub mod runner;
mod service;
mod start;
pub mod view;
