//! Reads what `flotilla top` shows from this host's daemon (`host.status`,
//! `roster`, `lane.list`, `lane.events`; with `--all` the roster of every
//! host, and the hub's view when this home runs the hub) and carries out
//! the lane actions (`lane.interrupt`, `lane.archive`). Owns the
//! connection and each lane's event cursor; turns replies into the
//! model's rows. Must not draw or read keys.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Result;
use flotilla_actors::lane::events::{EventKind, LaneEvent};
use flotilla_actors::names::{HostName, PeerName};
use flotilla_actors::protocol::{
    HostStatusArgs, HubLinkState, LaneArchiveArgs, LaneEventsArgs, LaneInterruptArgs, LaneListArgs,
    LaneView, Op, RosterArgs, RosterPeer, RosterReply,
};
use flotilla_host::client::ClientError;

use super::model::{HostRow, LaneRow, PeerRow, Snapshot};
use crate::commands::Env;
use crate::commands::lane_client::LaneClient;

/// How long one poll may take before the connection is dropped.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// How long an interrupt or archive may take to be answered.
const ACTION_TIMEOUT: Duration = Duration::from_secs(10);
/// Events read per lane and poll; the follow pane shows as many.
const EVENT_BATCH: u32 = 500;
/// Lines kept for the follow pane.
pub(crate) const FOLLOW_LINES: usize = 200;

/// What is known of a lane's event log between polls.
#[derive(Debug, Default)]
struct Tail {
    /// The last event's sequence number.
    after: u64,
    last: String,
    context_pct: Option<f64>,
    lines: Vec<String>,
}

/// The daemon connection and what `top` remembers between polls.
pub(crate) struct Poller {
    env: Env,
    all: bool,
    client: Option<LaneClient>,
    tails: HashMap<String, Tail>,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller").field("all", &self.all).finish()
    }
}

impl Poller {
    pub(crate) fn new(env: &Env, all: bool) -> Self {
        Self {
            env: env.clone(),
            all,
            client: None,
            tails: HashMap::new(),
        }
    }

    /// Why the daemon cannot be read, for the status line.
    pub(crate) fn explain(&self, err: &anyhow::Error) -> String {
        let down = err.chain().any(|c| {
            matches!(
                c.downcast_ref::<ClientError>(),
                Some(ClientError::NotRunning { .. })
            )
        });
        if down {
            format!(
                "daemon not reachable at {} (start it with `flotilla up`); retrying",
                self.env.home.socket_path().display()
            )
        } else {
            format!(
                "cannot read the daemon: {}; retrying",
                crate::exit::message(err)
            )
        }
    }

    async fn client(&mut self) -> Result<&mut LaneClient> {
        if self.client.is_none() {
            self.client = Some(LaneClient::connect(&self.env, None, None).await?);
        }
        self.client
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("no connection"))
    }

    /// Reads everything once; a failure drops the connection (the next
    /// poll connects again).
    pub(crate) async fn snapshot(&mut self) -> Result<Snapshot> {
        let read = tokio::time::timeout(CALL_TIMEOUT, self.read());
        let result = match read.await {
            Ok(r) => r,
            Err(_) => Err(anyhow::anyhow!("the daemon did not answer within 3s")),
        };
        if result.is_err() {
            self.client = None;
        }
        result
    }

    async fn read(&mut self) -> Result<Snapshot> {
        let all = self.all;
        let client = self.client().await?;
        let status = client.call(&HostStatusArgs {}).await?;
        let roster = client.call(&RosterArgs { all }).await?;
        let lanes = client.call(&LaneListArgs { all: false }).await?.lanes;
        let mut rows = Vec::with_capacity(lanes.len());
        for lane in &lanes {
            self.read_events(lane).await?;
            rows.push(self.lane_row(lane, &roster.peers));
        }
        self.tails
            .retain(|k, _| lanes.iter().any(|l| l.lane.name.as_str() == k));
        let link = match &status.hub_link {
            None => ("no hub".to_owned(), None),
            Some(l) => (link_state(l.state).to_owned(), l.rtt_ms),
        };
        let mut hosts = hosts(&roster, link);
        if all {
            self.add_hub_view(&mut hosts).await;
        }
        Ok(Snapshot {
            hosts,
            peers: roster
                .peers
                .iter()
                .map(|p| peer_row(p, &roster.host))
                .collect(),
            lanes: rows,
        })
    }

    /// With this home running the hub, its view of every host (link state
    /// and round trip, hosts with no peers too); nothing otherwise.
    async fn add_hub_view(&self, hosts: &mut Vec<HostRow>) {
        let Ok(hub) = flotilla_host::hub_server::roster(&self.env.home).await else {
            return;
        };
        for h in hub.hosts {
            let name = h.host.to_string();
            let at = match hosts.iter().position(|r| r.name == name) {
                Some(at) => at,
                None => {
                    hosts.push(HostRow {
                        name,
                        ..HostRow::default()
                    });
                    hosts.len() - 1
                }
            };
            let row = &mut hosts[at];
            if at > 0 {
                row.link = format!("hub: {}", h.state);
            }
            row.rtt_ms = row.rtt_ms.or(h.rtt_ms);
            row.peers = row.peers.max(h.peers.len() + h.lanes.len());
        }
    }

    async fn read_events(&mut self, lane: &LaneView) -> Result<()> {
        let name = lane.lane.name.as_str().to_owned();
        let after = self.tails.get(&name).map_or(0, |t| t.after);
        let client = self.client().await?;
        let reply = client
            .call(&LaneEventsArgs {
                name: lane.lane.name.clone(),
                after,
                wait_ms: 0,
                limit: Some(EVENT_BATCH),
            })
            .await?;
        let tail = self.tails.entry(name).or_default();
        for e in &reply.events {
            tail.take(e);
        }
        Ok(())
    }

    fn lane_row(&self, lane: &LaneView, roster: &[RosterPeer]) -> LaneRow {
        let name = lane.lane.name.as_str().to_owned();
        let tail = self.tails.get(&name);
        let groups = roster
            .iter()
            .find(|p| p.id == lane.lane)
            .map(ordinary_groups)
            .unwrap_or_default();
        LaneRow {
            id: lane.lane.to_string(),
            cli: lane.cli.to_string(),
            phase: phase(lane),
            turn: lane.turns,
            context_pct: tail.and_then(|t| t.context_pct),
            last_event: tail.map(|t| t.last.clone()).unwrap_or_default(),
            groups,
            name,
        }
    }

    /// The last event lines of a lane read so far.
    pub(crate) fn follow_lines(&self, lane: &str) -> Vec<String> {
        self.tails
            .get(lane)
            .map(|t| t.lines.clone())
            .unwrap_or_default()
    }

    /// Interrupts a lane; the status line's text.
    pub(crate) async fn interrupt(&mut self, lane: &str) -> String {
        let reply = self.lane_op(lane, |name| LaneInterruptArgs { name }).await;
        let text = reply.map(|v| format!("asked {} to stop its turn", v.lane));
        self.outcome(text, "interrupt", lane)
    }

    /// Archives a lane; the status line's text.
    pub(crate) async fn archive(&mut self, lane: &str) -> String {
        let reply = self.lane_op(lane, |name| LaneArchiveArgs { name }).await;
        let text = reply.map(|v| format!("archived {}", v.lane));
        self.outcome(text, "archive", lane)
    }

    /// Calls a lane op that answers with the lane, within [`ACTION_TIMEOUT`].
    async fn lane_op<O: Op<Reply = LaneView>>(
        &mut self,
        lane: &str,
        op: impl FnOnce(PeerName) -> O,
    ) -> Result<LaneView> {
        let op = op(PeerName::new(lane)?);
        let call = async { self.client().await?.call(&op).await };
        match tokio::time::timeout(ACTION_TIMEOUT, call).await {
            Ok(reply) => reply,
            Err(_) => Err(anyhow::anyhow!("the daemon did not answer within 10s")),
        }
    }

    fn outcome(&mut self, result: Result<String>, verb: &str, lane: &str) -> String {
        result.unwrap_or_else(|e| {
            self.client = None;
            format!("cannot {verb} {lane}: {}", crate::exit::message(&e))
        })
    }
}

impl Tail {
    fn take(&mut self, e: &LaneEvent) {
        self.after = self.after.max(e.seq);
        self.last = summary(&e.kind);
        match &e.kind {
            EventKind::TurnCompleted(r) if r.context_used_pct.is_some() => {
                self.context_pct = r.context_used_pct;
            }
            EventKind::Usage {
                context_used_pct: Some(pct),
                ..
            } => {
                self.context_pct = Some(*pct);
            }
            _ => {}
        }
        self.lines.push(crate::output::event_line(e));
        if self.lines.len() > FOLLOW_LINES {
            let extra = self.lines.len() - FOLLOW_LINES;
            self.lines.drain(..extra);
        }
    }
}

/// An event on one short line.
fn summary(kind: &EventKind) -> String {
    let text = match kind {
        EventKind::LaneStarted { .. } => "lane.started".to_owned(),
        EventKind::TurnStarted { .. } => "turn.started".to_owned(),
        EventKind::Message { text } => format!("message: {text}"),
        EventKind::ToolCall { name, .. } => format!("tool.call {name}"),
        EventKind::ToolResult { is_error, .. } => {
            format!("tool.result{}", if *is_error { " (error)" } else { "" })
        }
        EventKind::Usage { .. } => "usage".to_owned(),
        EventKind::Error { message } => format!("error: {message}"),
        EventKind::Note { text } => format!("note: {text}"),
        EventKind::TurnCompleted(r) => format!("turn.completed {}", r.status),
    };
    let line = text.lines().next().unwrap_or_default();
    flotilla_actors::lane::events::clip(line, 80)
}

fn phase(lane: &LaneView) -> String {
    serde_json::to_value(lane.phase)
        .ok()
        .and_then(|p| p.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn link_state(state: HubLinkState) -> &'static str {
    match state {
        HubLinkState::Connecting => "connecting",
        HubLinkState::Connected => "connected",
        HubLinkState::Disconnected => "disconnected",
    }
}

fn ordinary_groups(p: &RosterPeer) -> Vec<String> {
    let groups = p.groups.iter().filter(|g| !g.is_session());
    groups.map(|g| g.as_str().to_owned()).collect()
}

fn peer_row(p: &RosterPeer, host: &HostName) -> PeerRow {
    let local = &p.id.host == host;
    PeerRow {
        id: p.id.to_string(),
        kind: p.kind.to_string(),
        groups: ordinary_groups(p),
        state: p.state.clone(),
        inbox: local.then_some(p.inbox_depth),
    }
}

/// This host first (with its hub link), then every other host the roster
/// names (its state is its peers' state: its link to the hub).
fn hosts(roster: &RosterReply, link: (String, Option<f64>)) -> Vec<HostRow> {
    let mut rows = vec![HostRow {
        name: roster.host.to_string(),
        link: link.0,
        rtt_ms: link.1,
        peers: 0,
    }];
    for p in &roster.peers {
        let host = p.id.host.to_string();
        match rows.iter_mut().find(|r| r.name == host) {
            Some(row) => row.peers += 1,
            None => rows.push(HostRow {
                name: host,
                link: p.state.clone(),
                rtt_ms: None,
                peers: 1,
            }),
        }
    }
    rows
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
