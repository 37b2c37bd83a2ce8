//! The supervisor's plan: the one JSON object each supervisor turn must
//! return, what the daemon checks in it before anything is dispatched, and
//! the prompts the daemon writes to the supervisor and the workers.
//!
//! ```json
//! {"dispatch": [{"to": "worker-1", "step": "draft", "prompt": "...",
//!                "artifacts": [{"path": "worker-1/draft.md", "min_chars": 200}]}],
//!  "done": false}
//! ```
//!
//! `done: true` asks the daemon to judge the whole task. A plan is refused
//! with every reason when it names an unknown or busy worker, repeats a
//! worker, reuses an accepted step, gives no work and is not done, or adds
//! a command (`run` or `checks` anywhere in an item). Pure: no IO.

use serde::Deserialize;
use serde_json::Value;

use super::reply::unfence;
use super::steps::StepLedger;
use super::task::{Artifact, Task};

/// Longest step id.
const MAX_STEP: usize = 64;
/// Step ids the daemon keeps for itself.
pub const RESERVED_STEPS: [&str; 2] = ["plan", "final"];

/// One piece of work for one worker.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize, schemars::JsonSchema)]
pub struct Assignment {
    /// The worker's role (`worker-1`, ...).
    pub to: String,
    /// The supervisor's id for the step.
    pub step: String,
    /// What the worker is asked to do.
    pub prompt: String,
    /// What the daemon checks when the worker's turn ends.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    /// The member's lane turn, once it started.
    #[serde(default)]
    pub turn: Option<u32>,
    /// Its turn starts a fresh native session (after a rotation).
    #[serde(default)]
    pub fresh: bool,
}

impl Assignment {
    /// What the step is judged against when its turn ends: its own
    /// artifacts, never a command.
    pub fn judged_against(&self) -> Task {
        Task {
            goal: self.step.clone(),
            hours: None,
            artifacts: self.artifacts.clone(),
            checks: Vec::new(),
        }
    }
}

/// A plan the daemon accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Work to dispatch now.
    pub dispatch: Vec<Assignment>,
    /// The supervisor says the task is done: judge it whole.
    pub done: bool,
    /// The task with the supervisor's added artifacts.
    pub task: Task,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    #[serde(default)]
    dispatch: Vec<Value>,
    #[serde(default)]
    done: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItem {
    to: String,
    step: String,
    prompt: String,
    #[serde(default)]
    artifacts: Vec<Value>,
    #[serde(default)]
    domain: Option<String>,
    #[serde(default)]
    task_type: Option<String>,
}

/// Checks a supervisor's pick of a worker for a step's domain and task
/// type (the capability matrix); `Ok` when it may take it.
pub type Route<'a> = &'a dyn Fn(&str, Option<&str>, Option<&str>) -> Result<(), String>;

/// Checks a supervisor's reply: `workers` are the fleet's worker roles,
/// `busy` those with a step in flight. Every fault is returned.
pub fn parse_plan(
    reply: &str,
    task: &Task,
    workers: &[String],
    busy: &[String],
    ledger: &StepLedger,
    route: Route<'_>,
) -> Result<Plan, Vec<String>> {
    let raw: RawPlan = serde_json::from_str(unfence(reply.trim())).map_err(|e| {
        vec![format!(
            "the reply is not one plan object ({e}); answer with the JSON object only"
        )]
    })?;
    let mut faults = Vec::new();
    let mut dispatch = Vec::new();
    let mut task = task.clone();
    for (i, item) in raw.dispatch.into_iter().enumerate() {
        match item_of(item, &mut task, workers, busy, ledger, &dispatch, route) {
            Ok(a) => dispatch.push(a),
            Err(why) => faults.push(format!("dispatch[{i}]: {why}")),
        }
    }
    if !raw.done && dispatch.is_empty() && faults.is_empty() {
        faults.push("the plan dispatches nothing and is not done".into());
    }
    if raw.done && !dispatch.is_empty() {
        faults.push("a plan that is done dispatches nothing more".into());
    }
    if faults.is_empty() {
        Ok(Plan {
            dispatch,
            done: raw.done,
            task,
        })
    } else {
        Err(faults)
    }
}

fn item_of(
    item: Value,
    task: &mut Task,
    workers: &[String],
    busy: &[String],
    ledger: &StepLedger,
    planned: &[Assignment],
    route: Route<'_>,
) -> Result<Assignment, String> {
    if names_a_command(&item) {
        return Err("a supervisor may add artifacts to check, never a command to run".into());
    }
    let raw: RawItem = serde_json::from_value(item).map_err(|e| e.to_string())?;
    if !workers.contains(&raw.to) {
        return Err(format!(
            "{:?} is not a worker of this fleet (workers: {})",
            raw.to,
            workers.join(", ")
        ));
    }
    if busy.contains(&raw.to) || planned.iter().any(|a| a.to == raw.to) {
        return Err(format!("{} already has a step", raw.to));
    }
    step_id(&raw.step)?;
    if ledger
        .steps
        .get(&raw.step)
        .is_some_and(|s| s.accepted.is_some())
    {
        return Err(format!("step {:?} was already accepted", raw.step));
    }
    if raw.prompt.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    route(&raw.to, raw.domain.as_deref(), raw.task_type.as_deref())
        .map_err(|why| format!("{} may not take step {:?}: {why}", raw.to, raw.step))?;
    let additions = serde_json::json!({ "artifacts": raw.artifacts }).to_string();
    let step_task = Task {
        artifacts: Vec::new(),
        ..task.clone()
    }
    .with_supervisor_additions(&additions)
    .map_err(|e| e.to_string())?;
    *task = task
        .with_supervisor_additions(&additions)
        .map_err(|e| e.to_string())?;
    Ok(Assignment {
        to: raw.to,
        step: raw.step,
        prompt: raw.prompt,
        artifacts: step_task.artifacts,
        turn: None,
        fresh: false,
    })
}

fn names_a_command(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == "run" || k == "checks" || names_a_command(v)),
        Value::Array(items) => items.iter().any(names_a_command),
        _ => false,
    }
}

fn step_id(step: &str) -> Result<(), String> {
    let fine = !step.is_empty()
        && step.len() <= MAX_STEP
        && step
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !fine {
        return Err(format!(
            "step {step:?} must be 1 to {MAX_STEP} letters, digits, '-', '_' or '.'"
        ));
    }
    if RESERVED_STEPS.contains(&step) {
        return Err(format!("step {step:?} is reserved for the daemon"));
    }
    Ok(())
}

/// The supervisor's first prompt: its role, the task, the workers and the
/// plan's shape.
pub fn kickoff(task: &Task, workers: &[String], routing: &str) -> String {
    let done = serde_json::to_string_pretty(&DoneView(task)).unwrap_or_default();
    format!(
        "You are the supervisor of a fleet. You never do the work yourself: you \
         split it into steps, dispatch each step to a worker, and read what the \
         daemon reports. The daemon, not you, decides when the work is done. \
         Between turns, the fleet tool's status (or `flotilla fleet status`) \
         shows each worker's progress: `quiet_secs` is how long a running \
         worker has been silent.\n\n\
         Goal: {goal}\n\nDefinition of done (checked by the daemon):\n{done}\n\n\
         Workers: {workers}\n\n{routing}{gap}{shape}",
        goal = task.goal,
        workers = workers.join(", "),
        gap = if routing.is_empty() { "" } else { "\n\n" },
        shape = PLAN_SHAPE,
    )
}

/// The supervisor's prompt after a round, or after its plan was refused.
pub fn report(lines: &[String]) -> String {
    format!(
        "The daemon reports:\n{}\n\n{}",
        lines
            .iter()
            .map(|l| format!("- {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
        PLAN_SHAPE
    )
}

/// A worker's prompt for `a`.
pub fn work_prompt(a: &Assignment) -> String {
    if a.artifacts.is_empty() {
        return format!("Step {}: {}", a.step, a.prompt);
    }
    let files = a
        .artifacts
        .iter()
        .map(|x| format!("- {}", describe(x)))
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "Step {}: {}\n\nThe daemon accepts this step when these files exist in the \
         working directory:\n{files}",
        a.step, a.prompt
    )
}

/// A worker's prompt after its step was bounced.
pub fn bounce_prompt(a: &Assignment, bounce: u32, reasons: &[String]) -> String {
    format!(
        "Your step {} was not accepted (bounce {bounce} of {}). The daemon found:\n{}\n\n{}",
        a.step,
        super::steps::MAX_BOUNCES,
        reasons
            .iter()
            .map(|r| format!("- {r}"))
            .collect::<Vec<_>>()
            .join("\n"),
        work_prompt(a)
    )
}

fn describe(a: &Artifact) -> String {
    let mut out = a.path.clone();
    if a.min_chars > 0 {
        out.push_str(&format!(", at least {} characters", a.min_chars));
    }
    for needle in &a.contains {
        out.push_str(&format!(", containing {needle:?}"));
    }
    out
}

struct DoneView<'a>(&'a Task);

impl serde::Serialize for DoneView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("artifacts", &self.0.artifacts)?;
        map.serialize_entry("checks", &self.0.checks)?;
        map.end()
    }
}

const PLAN_SHAPE: &str = "Answer with one JSON object and nothing else:\n\
{\"dispatch\": [{\"to\": \"worker-1\", \"step\": \"a-short-id\", \"prompt\": \"what to do\", \
\"artifacts\": [{\"path\": \"worker-1/file.md\", \"min_chars\": 100, \"contains\": [\"...\"]}]}], \
\"done\": false}\n\
Dispatch at most one step per idle worker. Artifacts are optional: they are what the \
daemon checks when the step ends. You may not add commands. When you believe the \
definition of done holds, answer {\"dispatch\": [], \"done\": true}.";

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
