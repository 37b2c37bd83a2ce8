//! The `fleet` tool: an agent leads a team from inside its session. A
//! worker of one fleet that starts a fleet leads it (the daemon records
//! the tie: a team of teams); the new fleet has its own budget, clock and
//! task and is started and stopped on its own. The tool goes through the
//! daemon's `fleet.*` ops like `flotilla fleet`; it never judges work or
//! runs a check itself. Read-only actions work without an identity.

use anyhow::Result;
use flotilla_actors::fleet::{BudgetCard, FleetSpec, Task};
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    Empty, FleetPauseArgs, FleetResumeArgs, FleetStartArgs, FleetStatusArgs, FleetStopArgs,
    FleetTaskArgs, FleetView,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::tools::{Done, Session};
use crate::exit::CliError;

/// What to do with a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Action {
    Start,
    Task,
    Status,
    List,
    Pause,
    Resume,
    Stop,
}

/// The `fleet` tool's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FleetIn {
    action: Action,
    name: Option<String>,
    spec: Option<Map<String, Value>>,
    task: Option<Value>,
    budget: Option<Value>,
}

fn usage(what: impl Into<String>) -> anyhow::Error {
    CliError::usage(
        what,
        "see the fleet tool's input schema in tools/list and docs/fleets.md",
    )
}

impl FleetIn {
    fn name(&self) -> Result<PeerName> {
        let name = self
            .name
            .as_deref()
            .ok_or_else(|| usage(format!("fleet {:?} needs a name", self.action)))?;
        Ok(PeerName::new(name)?)
    }

    fn task(&self) -> Result<Option<Task>> {
        self.task
            .clone()
            .map(|t| serde_json::from_value::<Task>(t).map_err(|e| usage(format!("task: {e}"))))
            .transpose()
    }

    /// The spec: the tool's `spec` with the fleet's name, the caller as
    /// its owner (`as`, never taken from the arguments) and, unless given,
    /// the server's directory.
    fn spec(&self, me: PeerName) -> Result<FleetSpec> {
        let mut spec = self
            .spec
            .clone()
            .ok_or_else(|| usage("start needs a spec (supervisor, workers, ...)"))?;
        if spec.contains_key("as") || spec.contains_key("name") {
            return Err(usage(
                "spec takes neither name (give it beside spec) nor as (a fleet is yours)",
            ));
        }
        spec.insert("name".into(), Value::String(self.name()?.to_string()));
        spec.insert("as".into(), Value::String(me.to_string()));
        if !spec.contains_key("dir") {
            let here = std::env::current_dir()?.display().to_string();
            spec.insert("dir".into(), Value::String(here));
        }
        serde_json::from_value(Value::Object(spec)).map_err(|e| usage(format!("spec: {e}")))
    }
}

fn line(v: &FleetView, what: &str) -> String {
    let state = serde_json::to_value(v.state).unwrap_or_default();
    format!(
        "fleet {} {what}: {}",
        v.name,
        state.as_str().unwrap_or_default()
    )
}

/// Runs one fleet action.
pub(crate) async fn call(s: &Session, a: FleetIn) -> Result<Done> {
    let mut c = s.env.client().await?;
    let view = match a.action {
        Action::List => {
            let list = c.call(&Empty {}).await?;
            let text = format!("{} fleet(s)", list.fleets.len());
            return Done::new(list, text);
        }
        Action::Start => {
            let me = s.need_me("fleet start")?;
            let op = FleetStartArgs {
                spec: a.spec(me)?,
                task: a.task()?,
            };
            c.call(&op).await?
        }
        Action::Task => {
            let task = a.task()?.ok_or_else(|| usage("task needs a task"))?;
            c.call(&FleetTaskArgs {
                name: a.name()?,
                task,
            })
            .await?
        }
        Action::Status => c.call(&FleetStatusArgs { name: a.name()? }).await?,
        Action::Pause => c.call(&FleetPauseArgs { name: a.name()? }).await?,
        Action::Stop => c.call(&FleetStopArgs { name: a.name()? }).await?,
        Action::Resume => {
            let budget = a
                .budget
                .clone()
                .map(|b| {
                    serde_json::from_value::<BudgetCard>(b)
                        .map_err(|e| usage(format!("budget: {e}")))
                })
                .transpose()?;
            c.call(&FleetResumeArgs {
                name: a.name()?,
                budget,
            })
            .await?
        }
    };
    let what = format!("{:?}", a.action).to_lowercase();
    let text = line(&view, &what);
    Done::new(view, text)
}
