//! The plain follow of `flotilla fleet watch`: the daemon's decisions and
//! the members' live lane events, interleaved as they come (each line
//! prefixed by who it is from), or only one of them (`--only`, what a
//! control-room pane runs), until the fleet's task is no longer running.
//! It only reads (fleet status, history, lane events); the tmux control
//! room is `fleet_watch`'s.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;
use flotilla_actors::lane::events::LaneEvent;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    ErrorCode, FleetHistoryArgs, FleetMemberView, FleetState, FleetStatusArgs, FleetView,
    LaneEventsArgs, LaneEventsReply, RemoteCallArgs,
};
use flotilla_host::client::{ClientError, ControlClient};
use serde::Serialize;

use super::Env;
use super::fleet_room::DECISIONS;
use crate::exit::{CliError, FAILED, OK};
use crate::output::{self, outln};

/// Schema id of a decision line of the JSON follow.
const DECISION_SCHEMA: &str = "flotilla.fleet-decision.v1";

/// Schema id of a member's event line of the JSON follow.
const MEMBER_EVENT_SCHEMA: &str = "flotilla.fleet-member-event.v1";

/// One member's lane event in the JSON follow
/// (`flotilla.fleet-member-event.v1`): the event's own fields and the
/// member's role.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct MemberEvent {
    /// The member's role (`supervisor`, `worker-1`, ...).
    pub(crate) role: String,
    /// The lane event, as `lane events --json` shows it.
    #[serde(flatten)]
    pub(crate) event: LaneEvent,
}

/// How often the follow asks again.
const EVERY: Duration = Duration::from_millis(500);

/// What a follow shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Only {
    /// The decisions and every member's events.
    All,
    /// The daemon's decisions.
    Decisions,
    /// One member's events, by role.
    Member(String),
}

impl Only {
    /// `--only WHAT`: `decisions` or a role.
    pub(crate) fn parse(what: Option<&str>) -> Self {
        match what {
            None => Self::All,
            Some(DECISIONS) => Self::Decisions,
            Some(role) => Self::Member(role.to_owned()),
        }
    }

    fn decisions(&self) -> bool {
        matches!(self, Self::All | Self::Decisions)
    }

    fn member(&self, role: &str) -> bool {
        match self {
            Self::All => true,
            Self::Decisions => false,
            Self::Member(r) => r == role,
        }
    }
}

/// Follows fleet `name` until its task is no longer running (exit 0
/// completed, 1 anything else). With `--json`, one line per decision
/// (`flotilla.fleet-decision.v1`) and per member event
/// (`flotilla.fleet-member-event.v1`), in time order.
pub(crate) async fn follow(env: &Env, name: PeerName, only: Only) -> Result<u8> {
    let ended = follow_to_the_end(env, name, only).await;
    settle_terminal();
    ended
}

/// On a terminal, waits (at most crossterm's 2 s) until the terminal has
/// taken in all that was printed. A tmux pane whose command exits drops
/// the output it has not read yet, so a control-room pane lost the lines
/// its follow printed last; a terminal answers a question about the
/// cursor only once it has processed everything written before it.
fn settle_terminal() {
    use std::io::{IsTerminal, Write};
    let mut stdout = std::io::stdout();
    if stdout.is_terminal() {
        let _ = stdout.flush();
        let _ = ratatui::crossterm::cursor::position();
    }
}

async fn follow_to_the_end(env: &Env, name: PeerName, only: Only) -> Result<u8> {
    let mut client = env.client().await?;
    let mut shown = 0usize;
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let mut checked = false;
    loop {
        // The state first: what is printed below is then all there was
        // when the task ended.
        let view = client.call(&FleetStatusArgs { name: name.clone() }).await?;
        if !checked {
            check_role(&view, &only)?;
            checked = true;
        }
        // One poll's lines, from every source, in the order they happened.
        let mut lines: Vec<(u64, String)> = Vec::new();
        if only.decisions() {
            let reply = client
                .call(&FleetHistoryArgs { name: name.clone() })
                .await?;
            for d in reply.decisions.iter().skip(shown) {
                let line = if env.json {
                    output::json_text_as(DECISION_SCHEMA, d)?
                } else {
                    let line = format!("{}  {}", Timestamp(d.at_ms), d.text);
                    prefixed(&only, "fleet", line)
                };
                lines.push((d.at_ms, line));
            }
            shown = reply.decisions.len();
        }
        for m in view.members.iter().filter(|m| only.member(&m.role)) {
            let after = seen.entry(m.role.clone()).or_default();
            for event in member_events(&mut client, m, after).await? {
                let at = event.at.0;
                let line = if env.json {
                    let event = MemberEvent {
                        role: m.role.clone(),
                        event,
                    };
                    output::json_text_as(MEMBER_EVENT_SCHEMA, &event)?
                } else {
                    prefixed(&only, &m.role, output::event_line(&event))
                };
                lines.push((at, line));
            }
        }
        lines.sort_by_key(|(at, _)| *at);
        for (_, line) in lines {
            outln!("{line}")?;
        }
        match view.state {
            FleetState::Running | FleetState::Paused => {}
            FleetState::Completed => return Ok(OK),
            _ => return Ok(FAILED),
        }
        tokio::time::sleep(EVERY).await;
    }
}

/// A role the fleet does not have is refused (exit 2), naming the roles.
fn check_role(view: &FleetView, only: &Only) -> Result<()> {
    let Only::Member(role) = only else {
        return Ok(());
    };
    if view.members.iter().any(|m| &m.role == role) {
        return Ok(());
    }
    let roles: Vec<&str> = view.members.iter().map(|m| m.role.as_str()).collect();
    Err(CliError::usage(
        format!("fleet {} has no member {role:?}", view.name),
        format!(
            "give --only {DECISIONS} or one of its roles: {}",
            roles.join(", ")
        ),
    ))
}

/// `line` from `who`, prefixed with it when sources are interleaved.
fn prefixed(only: &Only, who: &str, line: String) -> String {
    match only {
        Only::All => format!("{who:<12} {line}"),
        _ => line,
    }
}

/// A member's events after `after` (moved on), from its own host; a
/// lane not made yet (before the member's first turn) has none.
async fn member_events(
    client: &mut ControlClient,
    member: &FleetMemberView,
    after: &mut u64,
) -> Result<Vec<LaneEvent>> {
    let op = LaneEventsArgs {
        name: PeerName::new(&member.lane)?,
        after: *after,
        wait_ms: 0,
        limit: None,
    };
    let answer = match &member.host {
        None => client.call(&op).await,
        Some(host) => {
            let remote = RemoteCallArgs {
                host: host.clone(),
                as_peer: None,
                op: "lane.events".into(),
                args: serde_json::to_value(&op)?,
            };
            match client.call(&remote).await {
                Ok(value) => Ok(serde_json::from_value::<LaneEventsReply>(value)?),
                Err(e) => Err(e),
            }
        }
    };
    let reply = match answer {
        Ok(reply) => reply,
        Err(ClientError::Refused(e)) if e.code == ErrorCode::NotFound => return Ok(Vec::new()),
        // A member's host out of reach for now: its events come later.
        Err(ClientError::Refused(_)) if member.host.is_some() => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    if let Some(last) = reply.events.last() {
        *after = last.seq;
    }
    Ok(reply.events)
}
