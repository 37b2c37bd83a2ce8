//! What each tool does: reads its arguments (closed shapes: an unknown or
//! mistyped field is a `bad_request`), then makes the same control-protocol
//! calls as the `flotilla` command, as the session's one peer. The daemon
//! applies every rule (scope, sizes, ownership); nothing here widens them.
//! Lane tools live in [`super::lane`].

use std::sync::Mutex;

use anyhow::Result;
use flotilla_actors::names::{GroupName, MessageId, PeerName};
use flotilla_actors::protocol::{
    self as p, BroadcastArgs, InboxAckArgs, InboxFetchArgs, Op, OutboxArgs, PeerRenameArgs,
    PeersArgs, ReplyArgs, RosterArgs, SendArgs, SendReply,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::commands::Env;
use crate::commands::mail::send_retrying;
use crate::exit::CliError;

/// Longest `wait_s` of `inbox`.
const MAX_WAIT_S: u64 = 60;

/// One MCP session: the home's daemon and the peer it acts as.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) env: Env,
    /// The identity given at start (`--as` / `FLOTILLA_PEER`), updated by
    /// `rename`; never taken from a tool's arguments.
    me: Mutex<Option<PeerName>>,
}

/// A tool's result: structured content and one short line of text.
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) value: Value,
    pub(crate) line: String,
}

impl Done {
    pub(crate) fn new(value: impl serde::Serialize, line: impl Into<String>) -> Result<Self> {
        Ok(Self {
            value: serde_json::to_value(value)?,
            line: line.into(),
        })
    }
}

impl Session {
    /// A session acting as `me` (checked as a name; the daemon checks the
    /// peer exists on each call).
    pub(crate) fn new(env: Env, me: Option<&str>) -> Result<Self> {
        let me = me.map(PeerName::new).transpose()?;
        Ok(Self {
            env,
            me: Mutex::new(me),
        })
    }

    /// The identity, if any.
    pub(crate) fn me(&self) -> Option<PeerName> {
        self.me.lock().ok().and_then(|m| m.clone())
    }

    /// The identity, or why a tool that needs one cannot run.
    pub(crate) fn need_me(&self, tool: &str) -> Result<PeerName> {
        self.me().ok_or_else(|| {
            CliError::usage(
                format!("{tool} acts as a peer, and this MCP server has no identity"),
                NO_IDENTITY_HINT,
            )
        })
    }
}

/// How to give the server an identity.
pub(crate) const NO_IDENTITY_HINT: &str = "start the server as `flotilla mcp --as NAME` (or with FLOTILLA_PEER=NAME; a lane's processes have it), after `flotilla peer join NAME`";

/// Reads a tool's arguments into its closed shape.
pub(crate) fn args<T: DeserializeOwned>(tool: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| {
        CliError::usage(
            format!("bad arguments for {tool}: {e}"),
            "see the tool's input schema in tools/list",
        )
    })
}

fn message_id(id: Option<String>) -> Result<MessageId> {
    Ok(match id {
        Some(id) => MessageId::new(&id)?,
        None => MessageId::generate(),
    })
}

/// Sends message `id` (retrying a daemon that restarts, with the same
/// id; a daemon that went away with it is named as such, with the id to
/// send it again with) and reports where the message went.
async fn sent<O: Op<Reply = SendReply>>(s: &Session, op: &O, id: &MessageId) -> Result<Done> {
    let reply = send_retrying(&s.env, op, id).await?;
    let to: Vec<String> = reply.recipients.iter().map(ToString::to_string).collect();
    let line = match to.is_empty() {
        true => format!("sent {}: nobody else is in that group yet", reply.id),
        false => format!("sent {} to {}", reply.id, to.join(", ")),
    };
    Done::new(reply, line)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Targets {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SendIn {
    to: Targets,
    body: String,
    summary: Option<String>,
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BroadcastIn {
    group: String,
    body: String,
    summary: Option<String>,
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyIn {
    to_message: String,
    body: String,
    summary: Option<String>,
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InboxIn {
    #[serde(default)]
    peek: bool,
    #[serde(default)]
    wait_s: u64,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RenameIn {
    new_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutboxIn {
    #[serde(default = "twenty")]
    limit: usize,
}

fn twenty() -> usize {
    20
}

/// Runs one tool.
pub(crate) async fn call(s: &Session, tool: &str, input: Value) -> Result<Done> {
    match tool {
        "whoami" => whoami(s, args::<NoArgs>(tool, input)?).await,
        "list_peers" => list_peers(s, args::<NoArgs>(tool, input)?).await,
        "send" => send(s, args(tool, input)?).await,
        "broadcast" => broadcast(s, args(tool, input)?).await,
        "inbox" => inbox(s, args(tool, input)?).await,
        "reply" => reply(s, args(tool, input)?).await,
        "rename" => rename(s, args(tool, input)?).await,
        "outbox" => outbox(s, args(tool, input)?).await,
        "lane" => super::lane::call(s, args(tool, input)?).await,
        "fleet" => super::fleet::call(s, args(tool, input)?).await,
        other => Err(p::ControlError::new(
            p::ErrorCode::NotFound,
            format!("there is no tool {other:?}"),
        )
        .with_hint(format!(
            "the tools are: {}",
            super::catalog::tools()
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into()),
    }
}

async fn whoami(s: &Session, _: NoArgs) -> Result<Done> {
    let roster = async {
        anyhow::Ok(
            s.env
                .client()
                .await?
                .call(&RosterArgs { all: false })
                .await?,
        )
    };
    let (daemon, host, own) = match roster.await {
        Ok(r) => {
            let own = s
                .me()
                .and_then(|me| r.peers.into_iter().find(|p| p.id.name == me));
            (true, Some(r.host.to_string()), own)
        }
        Err(_) => (false, None, None),
    };
    let me = s.me();
    let peer = match (&me, &host) {
        (Some(me), Some(h)) => Some(format!("{h}/{me}")),
        (Some(me), None) => Some(me.to_string()),
        _ => None,
    };
    let hint = match (&me, daemon, &own) {
        (None, _, _) => Some(NO_IDENTITY_HINT.to_owned()),
        (_, false, _) => {
            Some("no daemon answers for this home; start it with `flotilla up`".into())
        }
        (Some(me), true, None) => Some(format!(
            "{me} is not registered on this host; register it with `flotilla peer join {me}`"
        )),
        _ => None,
    };
    let groups: Vec<String> = own
        .as_ref()
        .map(|p| p.groups.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    let line = match (&peer, &hint) {
        (Some(p), None) => format!("you are {p} (groups: {})", groups.join(", ")),
        (_, Some(h)) => format!("no usable identity: {h}"),
        (None, None) => "no identity".to_owned(),
    };
    let value = json!({
        "peer": peer, "host": host, "registered": own.is_some(), "groups": groups,
        "daemon": daemon, "hint": hint,
    });
    Done::new(value, line)
}

async fn list_peers(s: &Session, _: NoArgs) -> Result<Done> {
    let me = s.need_me("list_peers")?;
    let reply = s
        .env
        .client()
        .await?
        .call(&PeersArgs { as_peer: me })
        .await?;
    let names: Vec<String> = reply.peers.iter().map(|p| p.id.to_string()).collect();
    let line = match names.is_empty() {
        true => "nobody shares a group with you yet".to_owned(),
        false => format!("{} peer(s): {}", names.len(), names.join(", ")),
    };
    Done::new(reply, line)
}

async fn send(s: &Session, a: SendIn) -> Result<Done> {
    let id = message_id(a.id)?;
    let to = match a.to {
        Targets::One(t) => vec![t],
        Targets::Many(t) => t,
    };
    let op = SendArgs {
        as_peer: s.need_me("send")?,
        to,
        summary: a.summary,
        body: a.body,
        id: Some(id.clone()),
    };
    sent(s, &op, &id).await
}

async fn broadcast(s: &Session, a: BroadcastIn) -> Result<Done> {
    let id = message_id(a.id)?;
    let op = BroadcastArgs {
        as_peer: s.need_me("broadcast")?,
        group: GroupName::explicit(&a.group)?,
        summary: a.summary,
        body: a.body,
        id: Some(id.clone()),
    };
    sent(s, &op, &id).await
}

async fn reply(s: &Session, a: ReplyIn) -> Result<Done> {
    let id = message_id(a.id)?;
    let op = ReplyArgs {
        as_peer: s.need_me("reply")?,
        to_message: MessageId::new(&a.to_message)?,
        summary: a.summary,
        body: a.body,
        id: Some(id.clone()),
    };
    sent(s, &op, &id).await
}

async fn inbox(s: &Session, a: InboxIn) -> Result<Done> {
    if a.wait_s > MAX_WAIT_S {
        return Err(CliError::usage(
            format!("wait_s {} is over the limit of {MAX_WAIT_S}", a.wait_s),
            "wait at most 60 s per call, and call again",
        ));
    }
    let me = s.need_me("inbox")?;
    let mut client = s.env.client().await?;
    let fetch = InboxFetchArgs {
        as_peer: me.clone(),
        wait_ms: a.wait_s * 1000,
        limit: a.limit,
    };
    let reply = client.call(&fetch).await?;
    let ids: Vec<MessageId> = reply.messages.iter().map(|m| m.id.clone()).collect();
    let acknowledged = !a.peek && !ids.is_empty();
    if acknowledged {
        client.call(&InboxAckArgs { as_peer: me, ids }).await?;
    }
    let line = match reply.messages.len() {
        0 => "no messages".to_owned(),
        n => format!("{n} message(s), {} more waiting", reply.remaining),
    };
    let value = json!({
        "peer": reply.peer, "messages": reply.messages, "remaining": reply.remaining,
        "acknowledged": acknowledged,
    });
    Done::new(value, line)
}

async fn rename(s: &Session, a: RenameIn) -> Result<Done> {
    let old = s.need_me("rename")?;
    let new = PeerName::new(&a.new_name)?;
    let op = PeerRenameArgs {
        old,
        new: new.clone(),
    };
    let view = s.env.client().await?.call(&op).await?;
    if let Ok(mut me) = s.me.lock() {
        *me = Some(new);
    }
    let line = format!("you are now {}", view.id);
    Done::new(view, line)
}

async fn outbox(s: &Session, a: OutboxIn) -> Result<Done> {
    let op = OutboxArgs {
        as_peer: s.need_me("outbox")?,
        limit: a.limit,
    };
    let reply = s.env.client().await?.call(&op).await?;
    let line = format!(
        "{} message(s); {} of this host's waiting for the hub",
        reply.messages.len(),
        reply.waiting_for_hub
    );
    Done::new(reply, line)
}
