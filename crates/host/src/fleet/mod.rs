//! Fleets on this host. For now: the daemon's acceptance of a step
//! ([`acceptance`]), which reads the declared artifacts and runs the task
//! author's checks, then leaves the decision to
//! [`flotilla_actors::fleet::judge`]. The rules themselves live in
//! `flotilla_actors::fleet`; this module only gathers the facts.

pub mod acceptance;
