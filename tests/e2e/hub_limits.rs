//! Issue 13, point 4: what an enrolled host can make the hub hold or do
//! for it is bounded. A host that sends pings and never reads its pongs
//! made the hub's queue for it grow without end (15 → 107 MB); now the hub
//! closes its link once the bytes waiting for it pass `link_queue_bytes`.
//! A host that sends more frames than its budget is slowed, then cut, and
//! the operator sees both in `hub roster`. Honest hosts keep their links.

use std::time::{Duration, Instant};

use flotilla_actors::federation::{Frame, Hello};
use flotilla_tests::federation::{host_home, hub_home, link, run_hub, wait_link};
use flotilla_tests::wait_until;

use crate::federation_rules::{liar_session, liar_session_with};

use flotilla_actors::names::HostName;
use flotilla_hub::setup::{CertPaths, host_client_config};
use flotilla_hub::{ConnectOptions, HubSession};

const PATIENCE: Duration = Duration::from_secs(60);

/// A hub whose `[hub_server]` also has `extra`, running; its address.
fn hub_with(
    extra: &str,
) -> (
    flotilla_tests::TestHome,
    String,
    flotilla_tests::federation::Running,
) {
    let (hub, addr) = hub_home();
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    let config = config.replace("[hub_server]\n", &format!("[hub_server]\n{extra}"));
    assert!(config.contains(extra), "{config}");
    hub.write_config(&config);
    let server = run_hub(&hub);
    (hub, addr, server)
}

fn budget_of(hub: &flotilla_tests::TestHome, host: &str) -> serde_json::Value {
    let roster = hub.json(&["hub", "roster"]);
    roster["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["host"] == host)
        .map(|h| h["budget"].clone())
        .unwrap_or_default()
}

/// `liar`'s session, whose QUIC receive windows hold only a few frames,
/// so what it does not read soon waits at the hub.
async fn reluctant_session(home: &flotilla_tests::TestHome, addr: &str) -> HubSession {
    let mut transport = quinn::TransportConfig::default();
    transport.stream_receive_window(quinn::VarInt::from_u32(1024));
    transport.receive_window(quinn::VarInt::from_u32(4096));
    liar_session_with(home, "liar", addr, Some(transport)).await
}

#[test]
fn a_host_that_does_not_read_loses_its_link_not_the_hubs_memory() {
    let (hub, addr) = hub_home();
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    let config = config.replace("[hub_server]\n", "[hub_server]\nlink_queue_bytes = 65536\n");
    assert!(config.contains("link_queue_bytes"), "{config}");
    hub.write_config(&config);
    let _server = run_hub(&hub);
    let mut honest = host_home(&hub, "honest", &addr);
    honest.spawn_daemon("honest");
    wait_link(&honest, "honest's link", |l| l["state"] == "connected");

    let liar = host_home(&hub, "liar", &addr);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (sent, closed) = runtime.block_on(async {
        let mut session = reluctant_session(&liar, &addr).await;
        let deadline = Instant::now() + PATIENCE;
        let mut sent = 0u64;
        // Never reads: every pong stays with the hub once QUIC's window
        // is full. Bounded in count and time.
        while sent < 5_000_000 && Instant::now() < deadline {
            if session.send(&Frame::Ping { nonce: sent }).await.is_err() {
                return (sent, true);
            }
            sent += 1;
        }
        (sent, false)
    });
    assert!(
        closed,
        "the hub kept a link that does not read after {sent} pings"
    );
    let log = std::fs::read_to_string(hub.path().join("logs/hub.log")).unwrap_or_default();
    assert!(log.contains("does not read"), "the reason in the hub's log");
    assert_eq!(
        link(&honest)["state"],
        "connected",
        "honest hosts keep their links"
    );
}

#[test]
fn a_host_over_its_budget_is_slowed_then_cut_and_the_operator_sees_why() {
    let extra = "host_frames_per_sec = 200\nhost_budget_cut_secs = 6\n";
    let (hub, addr, _server) = hub_with(extra);
    let mut honest = host_home(&hub, "honest", &addr);
    honest.spawn_daemon("honest");
    wait_link(&honest, "honest's link", |l| l["state"] == "connected");
    let liar = host_home(&hub, "liar", &addr);
    let flood = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let mut session = liar_session(&liar, "liar", &addr).await;
            let deadline = Instant::now() + PATIENCE;
            let mut sent = 0u64;
            while sent < 5_000_000 && Instant::now() < deadline {
                if session.send(&Frame::Ping { nonce: sent }).await.is_err() {
                    return true;
                }
                sent += 1;
            }
            false
        })
    });
    wait_until("the liar slowed, in hub roster", PATIENCE, || {
        budget_of(&hub, "liar")["state"] == "slowed"
    });
    assert!(
        flood.join().expect("flood"),
        "the hub cut the flooding host"
    );
    let budget = budget_of(&hub, "liar");
    assert_eq!(budget["state"], "cut", "{budget}");
    let reason = budget["last_cut"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("200 frames/s"), "{budget}");
    assert!(budget["slowed_ms"].as_u64().unwrap_or(0) > 0, "{budget}");
    assert_eq!(budget_of(&hub, "honest")["state"], "ok");
    assert_eq!(
        link(&honest)["state"],
        "connected",
        "honest hosts keep their links"
    );
}

/// Failed handshakes on the main port (here: a host of another CA, forty
/// times) are logged at most five times per address and minute, then once
/// more with a note that the rest are not.
#[test]
fn a_flood_of_failed_handshakes_does_not_grow_the_hubs_log() {
    let (hub, addr) = hub_home();
    let _server = run_hub(&hub);
    let (other_ca, other_addr) = hub_home();
    let stranger = host_home(&other_ca, "stranger", &other_addr);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let certs = CertPaths::new(stranger.path().join("certs"));
        let endpoint =
            quinn::Endpoint::client((std::net::Ipv4Addr::LOCALHOST, 0).into()).expect("endpoint");
        for _ in 0..40 {
            let config = host_client_config(&certs).expect("client config");
            let options = ConnectOptions::new(addr.parse().expect("addr"), "hub.test", config);
            let hello = Hello::new(HostName::new("stranger").expect("host"));
            let linked =
                tokio::time::timeout(PATIENCE, flotilla_hub::connect(&endpoint, &options, hello))
                    .await
                    .expect("an answer");
            assert!(linked.is_err(), "another CA's host is refused");
        }
    });
    let failures = || {
        std::fs::read_to_string(hub.path().join("logs/hub.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("hub link failed"))
            .count()
    };
    wait_until("the failures logged", PATIENCE, || failures() >= 5);
    let logged = failures();
    assert!(
        logged <= 6,
        "{logged} failures logged for one address (five and the note)"
    );
    let log = std::fs::read_to_string(hub.path().join("logs/hub.log")).unwrap_or_default();
    assert!(
        log.contains("are not logged"),
        "the note that the rest are not"
    );
}
