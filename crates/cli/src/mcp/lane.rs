//! The `lane` tool: one tool, many actions, on this host or (with `host`)
//! another, through the same [`LaneClient`] as `flotilla lane`. Lanes the
//! session starts are owned by its peer, so their results also reach its
//! inbox. Read-only actions (`status`, `list`, `events`, `doctor`) work
//! without an identity.

use anyhow::Result;
use flotilla_actors::lane::{CliKind, Permissions};
use flotilla_actors::names::{GroupName, HostName, MessageId, PeerName};
use flotilla_actors::protocol::{
    self as p, LaneArchiveArgs, LaneDoctorArgs, LaneEventsArgs, LaneInterruptArgs, LaneListArgs,
    LaneResumeArgs, LaneStatusArgs, LaneWaitArgs,
};
use serde::Deserialize;
use serde_json::Value;

use super::tools::{Done, Session};
use crate::commands::lane_client::LaneClient;
use crate::exit::CliError;

/// What to do with a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Action {
    Run,
    Start,
    Resume,
    Wait,
    Status,
    Interrupt,
    Archive,
    List,
    Events,
    Doctor,
}

impl Action {
    fn reads_only(self) -> bool {
        matches!(
            self,
            Self::Status | Self::List | Self::Events | Self::Doctor
        )
    }
}

/// The `lane` tool's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LaneIn {
    action: Action,
    host: Option<String>,
    name: Option<String>,
    cli: Option<String>,
    prompt: Option<String>,
    cwd: Option<String>,
    model: Option<String>,
    permissions: Option<String>,
    timeout_s: Option<u64>,
    persistent: Option<bool>,
    /// Absent: the default (60 s); null: never.
    #[serde(default = "absent")]
    auto_archive_after_s: Option<Value>,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    inherit_groups: bool,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    all: bool,
    #[serde(default)]
    after: u64,
}

fn absent() -> Option<Value> {
    None
}

fn usage(what: impl Into<String>) -> anyhow::Error {
    CliError::usage(what, "see the lane tool's input schema in tools/list")
}

impl LaneIn {
    fn name(&self) -> Result<PeerName> {
        let name = self
            .name
            .as_deref()
            .ok_or_else(|| usage(format!("lane {:?} needs a name", self.action)))?;
        Ok(PeerName::new(name)?)
    }

    fn auto_archive(&self) -> Result<Option<u64>> {
        match &self.auto_archive_after_s {
            None => Ok(Some(60)),
            Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| usage("auto_archive_after_s: a number of seconds, or null")),
        }
    }

    fn start_args(&self, owner: PeerName, remote: bool) -> Result<p::LaneStartArgs> {
        let cli: CliKind = self
            .cli
            .as_deref()
            .ok_or_else(|| usage("start and run need a cli"))?
            .parse()
            .map_err(usage)?;
        let permissions: Permissions = match &self.permissions {
            Some(p) => p.parse().map_err(usage)?,
            None => Permissions::default(),
        };
        let prompt = self.prompt.clone().unwrap_or_default();
        if prompt.trim().is_empty() && cli != CliKind::Exec {
            return Err(usage("start and run need a prompt"));
        }
        let name = match &self.name {
            Some(n) => PeerName::new(n)?,
            None => {
                let id = MessageId::generate();
                PeerName::new(&format!("{cli}-{}", &id.as_str()[id.as_str().len() - 6..]))?
            }
        };
        let cwd = match (&self.cwd, remote) {
            (Some(d), _) => Some(d.clone()),
            (None, true) => None,
            (None, false) => Some(std::env::current_dir()?.display().to_string()),
        };
        Ok(p::LaneStartArgs {
            name,
            cli,
            cwd,
            model: self.model.clone(),
            permissions,
            timeout_secs: self.timeout_s,
            persistent: self.persistent.unwrap_or(false),
            auto_archive_secs: self.auto_archive()?,
            groups: self
                .groups
                .iter()
                .map(|g| GroupName::explicit(g))
                .collect::<Result<_, _>>()?,
            inherit_groups: self.inherit_groups,
            as_peer: Some(owner),
            owner: None,
            env: Vec::new(),
            args: self.args.clone(),
            restart_on_stall: false,
            force: false,
            claim: None,
            prompt,
        })
    }
}

/// Runs one lane action.
pub(crate) async fn call(s: &Session, a: LaneIn) -> Result<Done> {
    let me = match a.action.reads_only() {
        true => s.me(),
        false => Some(s.need_me("lane")?),
    };
    let host = a.host.as_deref().map(HostName::new).transpose()?;
    let mut c = LaneClient::connect(&s.env, host.clone(), me.clone()).await?;
    let at = host.map(|h| format!(" on {h}")).unwrap_or_default();
    match a.action {
        Action::Start | Action::Run => {
            let owner = me.ok_or_else(|| usage("no identity"))?;
            let started = c.call(&a.start_args(owner, c.is_remote())?).await?;
            if a.action == Action::Start {
                let line = format!("started {} turn {}{at}", started.lane, started.turn);
                return Done::new(started, line);
            }
            let wait = LaneWaitArgs {
                name: started.lane.name.clone(),
                timeout_ms: None,
            };
            finished(c.call(&wait).await?, &at)
        }
        Action::Resume => {
            let prompt = a
                .prompt
                .clone()
                .ok_or_else(|| usage("resume needs a prompt"))?;
            let resumed = c
                .call(&LaneResumeArgs {
                    name: a.name()?,
                    prompt,
                    fresh: false,
                    model: None,
                })
                .await?;
            let line = format!("resumed {} turn {}{at}", resumed.lane, resumed.turn);
            Done::new(resumed, line)
        }
        Action::Wait => {
            let wait = LaneWaitArgs {
                name: a.name()?,
                timeout_ms: a.timeout_s.map(|s| s * 1000),
            };
            finished(c.call(&wait).await?, &at)
        }
        Action::Status => {
            let view = c.call(&LaneStatusArgs { name: a.name()? }).await?;
            let line = format!(
                "{} is {:?}{at}, {} turn(s)",
                view.lane, view.phase, view.turns
            );
            Done::new(view, line)
        }
        Action::Interrupt => {
            let view = c.call(&LaneInterruptArgs { name: a.name()? }).await?;
            Done::new(view, format!("interrupted {}", a.name()?))
        }
        Action::Archive => {
            let view = c.call(&LaneArchiveArgs { name: a.name()? }).await?;
            Done::new(view, format!("archived {}", a.name()?))
        }
        Action::List => {
            let list = c.call(&LaneListArgs { all: a.all }).await?;
            let line = format!("{} lane(s){at}", list.lanes.len());
            Done::new(list, line)
        }
        Action::Events => {
            let op = LaneEventsArgs {
                name: a.name()?,
                after: a.after,
                wait_ms: 0,
                limit: None,
            };
            let events = c.call(&op).await?;
            let line = format!("{} event(s)", events.events.len());
            Done::new(events, line)
        }
        Action::Doctor => {
            let cli = a
                .cli
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(usage)?;
            let report = c.call(&LaneDoctorArgs { cli }).await?;
            let line = format!("{} CLI(s) checked{at}", report.clis.len());
            Done::new(report, line)
        }
    }
}

fn finished(event: flotilla_actors::lane::events::LaneEvent, at: &str) -> Result<Done> {
    let value = serde_json::to_value(&event)?;
    let status = value["status"].as_str().unwrap_or("finished").to_owned();
    let line = format!(
        "{}{at}: {status}",
        value["lane"].as_str().unwrap_or("the lane")
    );
    Ok(Done { value, line })
}
