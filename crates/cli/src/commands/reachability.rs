//! `hub invite`'s reachability check: after the token is made, whether the
//! hub answers at each address pair the token carries, dialled from here
//! the way `host join` dials it (`flotilla_hub::enroll::probe`: the
//! enrollment port, the token's pinned CA and the hub's name, and an
//! application-level reply). All addresses at once, 3 s each, under a
//! spinner on a terminal.
//!
//! Owns the words: one line per address on stderr (reachable, or why not
//! and what to do; a loopback address is flagged because hosts on other
//! machines cannot use it) and the `reachability` array of `--json`. An
//! unreachable hub is a warning: the token stays valid and the exit code
//! stays 0. Never writes to stdout (the token is the only thing there).

use std::net::SocketAddr;

use flotilla_actors::federation::enroll::EnrollToken;
use flotilla_hub::enroll::client::EnrollClientError;
use flotilla_hub::enroll::probe::{self, PROBE_TIMEOUT, Reachability};
use serde_json::{Value, json};

/// Probes every address pair of `token`, with a spinner meanwhile.
pub(crate) async fn check(token: &EnrollToken) -> Vec<Reachability> {
    let waiting = crate::progress::Waiting::start(format!(
        "checking that hosts can reach the hub at {}...",
        token.hub_addrs.join(", ")
    ));
    let found = probe::probe(token, PROBE_TIMEOUT).await;
    drop(waiting);
    found
}

/// The `reachability` array of `hub invite --json`.
pub(crate) fn json(found: &[Reachability]) -> Value {
    let entries: Vec<Value> = found
        .iter()
        .map(|r| {
            let mut entry = json!({
                "addr": r.hub_addr,
                "enroll_addr": r.enroll_addr,
                "reachable": r.error.is_none(),
            });
            if let Some(e) = &r.error {
                entry["error"] = json!(e.to_string());
            }
            entry
        })
        .collect();
    Value::Array(entries)
}

/// One stderr line per address (the reachable ones are notes, silenced by
/// `-q`; the others are warnings).
pub(crate) fn report(found: &[Reachability]) {
    for r in found {
        match &r.error {
            None => crate::verbosity::note!(
                "reachable: the hub answered at {} (enrollment port {})",
                r.hub_addr,
                r.enroll_addr
            ),
            Some(e) => eprintln!(
                "warning: not reachable: the hub at {} did not answer: {}",
                r.hub_addr,
                advice(e)
            ),
        }
        if is_loopback(&r.hub_addr) {
            eprintln!(
                "warning: {} is a loopback address: hosts on other machines cannot use it; \
                 invite again with --addr HOST:PORT, an address they reach the hub by",
                r.hub_addr
            );
        }
    }
    if found.iter().any(|r| r.error.is_some()) {
        eprintln!(
            "the token is made and stays valid; `flotilla host join` works once the hub answers \
             (skip this check with --no-check)"
        );
    }
}

/// The reason, and what to do about it.
fn advice(error: &EnrollClientError) -> String {
    match error {
        EnrollClientError::Unreachable { addrs, reason } => format!(
            "no answer from its enrollment port {addrs} ({reason}); if the hub is not running, \
             start it with `flotilla hub run` (or `flotilla hub install` for a service); if it \
             is, check that its UDP ports are open to the hosts"
        ),
        EnrollClientError::CaMismatch { .. } | EnrollClientError::HubCertificate { .. } => {
            format!(
                "something other than this hub answers there ({error}); check the address (--addr)"
            )
        }
        other => other.to_string(),
    }
}

/// Whether `addr` (`HOST:PORT`) names this machine only.
fn is_loopback(addr: &str) -> bool {
    if let Ok(socket) = addr.parse::<SocketAddr>() {
        return socket.ip().is_loopback();
    }
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_told_apart() {
        assert!(is_loopback("127.0.0.1:7700"));
        assert!(is_loopback("[::1]:7700"));
        assert!(is_loopback("localhost:7700"));
        assert!(is_loopback("LocalHost.:7700"));
        assert!(!is_loopback("192.168.1.5:7700"));
        assert!(!is_loopback("hub.example:7700"));
        assert!(!is_loopback("[fd00::1]:7700"));
    }
}
