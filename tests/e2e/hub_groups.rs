//! Issue 13, point 2: the hub operator decides which hosts may have peers
//! in a group (`hub-groups.toml`, `flotilla hub groups`). A real hub and a
//! real host daemon `work`, and hosts speaking frames directly with valid
//! certificates: `liar`, not allowed in `proj`, and `laptop`, allowed by a
//! pattern. The liar's membership in `proj` is dropped (its link stays up,
//! its other groups keep working), it never sees `proj`'s members and its
//! messages to them are refused with the rule; `work` and `laptop` keep
//! working; allowing the liar at the running hub lets it in.

use flotilla_actors::federation::{ForwardOutcome, ForwardRefusal, Frame, RosterDelta};
use flotilla_hub::HubSession;
use flotilla_tests::federation::{PATIENCE, host_home, hub_home, run_hub, wait_link};
use flotilla_tests::wait_until;
use serde_json::Value;

use crate::federation_rules::{forward, hub_peer_ids, liar_session, peer};

/// Sends a forward and returns the hub's verdict, with every peer the hub
/// announced to this host meanwhile.
async fn verdict_seeing(
    session: &mut HubSession,
    frame: Frame,
    seen: &mut Vec<String>,
) -> ForwardOutcome {
    session.send(&frame).await.expect("send");
    let read = async {
        loop {
            match session.recv().await.expect("recv") {
                Frame::Forwarded(f) => return f.outcome,
                Frame::RosterDelta(d) => {
                    seen.extend(d.upserts.iter().map(|p| p.record.id.to_string()));
                }
                _ => {}
            }
        }
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .expect("a verdict in time")
}

fn refused_out_of_scope(outcome: ForwardOutcome) -> String {
    match outcome {
        ForwardOutcome::Refused {
            code: ForwardRefusal::OutOfScope,
            reason,
        } => reason,
        other => panic!("expected out_of_scope, got {other:?}"),
    }
}

fn reset(id: &str, groups: &[&str]) -> Frame {
    Frame::RosterDelta(RosterDelta {
        reset: true,
        upserts: vec![peer(id, groups)],
        removed: Vec::new(),
    })
}

/// One host of `hub roster --json`.
fn hub_host(hub: &flotilla_tests::TestHome, name: &str) -> Value {
    let roster = hub.json(&["hub", "roster"]);
    roster["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["host"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Every message body `peer` of `host` has received so far (read once).
fn bodies(host: &flotilla_tests::TestHome, peer: &str, into: &mut Vec<String>) {
    let reply = host.json(&["inbox", "--as", peer]);
    into.extend(
        reply["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["body"].as_str().map(str::to_owned)),
    );
}

#[test]
fn issue_13_only_hosts_the_hub_allows_may_be_in_a_listed_group() {
    let (hub, addr) = hub_home();
    std::fs::write(
        hub.path().join("hub-groups.toml"),
        "[groups]\nproj = [\"work\", \"lap*\"]\n",
    )
    .expect("write hub-groups.toml");
    let _server = run_hub(&hub);
    let mut work = host_home(&hub, "work", &addr);
    work.spawn_daemon("work");
    wait_link(&work, "work's link", |l| l["state"] == "connected");
    work.ok(&["peer", "join", "builder", "-g", "proj"]);
    work.ok(&["peer", "join", "pal", "-g", "open"]);
    wait_until("work's peers at the hub", PATIENCE, || {
        let ids = hub_peer_ids(&hub);
        ids.contains(&"work/builder".to_owned()) && ids.contains(&"work/pal".to_owned())
    });
    let liar = host_home(&hub, "liar", &addr);
    let laptop = host_home(&hub, "laptop", &addr);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut spy = liar_session(&liar, "liar", &addr).await;
        let mut spy_saw = Vec::new();
        spy.send(&reset("liar/spy", &["proj", "open"]))
            .await
            .expect("roster");
        let in_proj = forward("liar/spy", "work/builder", Some("proj"), "let me in");
        let why = refused_out_of_scope(verdict_seeing(&mut spy, in_proj, &mut spy_saw).await);
        assert!(
            why.contains("hub groups") && why.contains("liar") && why.contains("proj"),
            "the reason names the rule: {why}"
        );
        let direct = forward("liar/spy", "work/builder", None, "psst");
        refused_out_of_scope(verdict_seeing(&mut spy, direct, &mut spy_saw).await);
        // Its link stays up and its unlisted group keeps working.
        let open = forward("liar/spy", "work/pal", Some("open"), "hello pal");
        let outcome = verdict_seeing(&mut spy, open, &mut spy_saw).await;
        assert_eq!(outcome, ForwardOutcome::Queued);
        assert!(
            !spy_saw.contains(&"work/builder".to_owned()),
            "the liar was shown proj's member: {spy_saw:?}"
        );
        assert!(spy_saw.contains(&"work/pal".to_owned()), "{spy_saw:?}");

        let mut lead = liar_session(&laptop, "laptop", &addr).await;
        let mut lead_saw = Vec::new();
        lead.send(&reset("laptop/lead", &["proj"]))
            .await
            .expect("roster");
        let allowed = forward("laptop/lead", "work/builder", Some("proj"), "from laptop");
        let outcome = verdict_seeing(&mut lead, allowed, &mut lead_saw).await;
        assert_eq!(outcome, ForwardOutcome::Queued);
        assert!(
            lead_saw.contains(&"work/builder".to_owned()),
            "{lead_saw:?}"
        );

        // The operator sees why the liar's peer is not in proj.
        let host = hub_host(&hub, "liar");
        let refused = host["refused"].as_array().cloned().unwrap_or_default();
        assert!(
            refused
                .iter()
                .any(|r| r["peer"] == "liar/spy" && r["group"] == "proj"),
            "hub roster shows the refused membership: {host}"
        );
        let spy_groups = host["peers"][0]["groups"].to_string();
        assert!(!spy_groups.contains("\"proj\""), "{spy_groups}");

        // The running hub follows a change of the list.
        hub.ok(&["hub", "groups", "allow", "proj", "liar"]);
        wait_until("the liar let into proj", PATIENCE, || {
            let host = hub_host(&hub, "liar");
            host["peers"][0]["groups"].to_string().contains("\"proj\"")
        });
        let now_allowed = forward("liar/spy", "work/builder", Some("proj"), "allowed now");
        let outcome = verdict_seeing(&mut spy, now_allowed, &mut spy_saw).await;
        assert_eq!(outcome, ForwardOutcome::Queued);
    });

    let mut got = Vec::new();
    wait_until("work/builder's messages", PATIENCE, || {
        bodies(&work, "builder", &mut got);
        got.len() >= 2
    });
    assert_eq!(got, ["from laptop", "allowed now"]);
    let mut pal = Vec::new();
    wait_until("work/pal's message", PATIENCE, || {
        bodies(&work, "pal", &mut pal);
        !pal.is_empty()
    });
    assert_eq!(pal, ["hello pal"]);
    let link = wait_link(&work, "work's link", |l| l["state"] == "connected");
    assert_eq!(link["state"], "connected");
}
