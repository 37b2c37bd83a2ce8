//! How fleets look on a terminal: `fleet status` (and the replies of
//! start, task, pause, resume and stop), `fleet list`, `fleet history`,
//! `fleet pairs` and `fleet request` (`fleet watch` is `fleet_watch`'s).
//! JSON output prints the daemon's replies as they are.

use anyhow::Result;
use flotilla_actors::fleet::pairs::PAIRS;
use flotilla_actors::model::Timestamp;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{
    Empty, FleetHistoryArgs, FleetRequestArgs, FleetView, ServiceRequest,
};

use super::Env;
use crate::exit::{FAILED, OK};
use crate::output::{self, out, outln};
use crate::table;

fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// Prints one fleet.
pub(crate) fn print(v: &FleetView) -> Result<()> {
    let state = serde_json::to_value(v.state)?;
    let state = state.as_str().unwrap_or_default();
    outln!("fleet {}: {state}", v.name)?;
    if let Some(reason) = &v.paused_reason {
        outln!("  paused: {reason}")?;
    }
    outln!("  dir {}  group {}", v.dir, v.group)?;
    match &v.task {
        Some(task) => outln!("  task: {}", task.goal)?,
        None => outln!("  no task yet: flotilla fleet task {} task.json", v.name)?,
    }
    let mut members = table::new(&[
        "ROLE", "LANE", "CLI", "PHASE", "TURNS", "STEP", "CONTEXT", "TOKENS", "COST", "INBOX",
    ]);
    for m in &v.members {
        let phase = m.phase.map(|p| format!("{p:?}").to_lowercase());
        members.add_row(vec![
            m.role.clone(),
            match &m.host {
                Some(host) => format!("{host}/{}", m.lane),
                None => m.lane.clone(),
            },
            m.cli.to_string(),
            or_dash(phase),
            m.turns.to_string(),
            or_dash(m.step.clone()),
            or_dash(m.context_used_pct.map(|p| format!("{p:.0}%"))),
            or_dash(m.usage.map(|u| u.input + u.output)),
            or_dash(m.cost_usd.map(|c| format!("{c:.4}"))),
            m.inbox_depth.to_string(),
        ]);
    }
    out!("{}", table::render(&members))?;
    for m in &v.members {
        if let Some(claim) = &m.claim {
            outln!(
                "  {} works on claim {claim} (branch {})",
                m.role,
                claim.branch()
            )?;
        }
    }
    for s in &v.steps {
        let what = if s.evidence.is_some() {
            "accepted".to_owned()
        } else {
            format!("bounced {}", s.bounces)
        };
        outln!("  step {}: {what}", s.step)?;
        for reason in &s.last_reasons {
            if s.evidence.is_none() {
                outln!(
                    "    - {}",
                    reason.to_string().lines().next().unwrap_or_default()
                )?;
            }
        }
    }
    let spent = &v.spent;
    outln!(
        "  spent: {} model calls, {} rounds, {} tokens{}",
        spent.model_calls,
        spent.rounds,
        spent.tokens,
        if spent.cost.is_empty() {
            String::new()
        } else {
            format!(", cost {:?}", spent.cost)
        }
    )?;
    let caps = serde_json::to_string(&v.budget)?;
    if caps != "{}" {
        outln!("  budget: {caps}")?;
    }
    for d in &v.recent {
        outln!("  {}  {}", Timestamp(d.at_ms), d.text)?;
    }
    Ok(())
}

/// `fleet list`.
pub(crate) async fn list(env: &Env) -> Result<u8> {
    let reply = env.client().await?.call(&Empty {}).await?;
    if env.json {
        output::json(&reply)?;
        return Ok(OK);
    }
    if reply.fleets.is_empty() {
        outln!(
            "no fleets: flotilla fleet start NAME --supervisor CLI --workers N --worker-cli CLI"
        )?;
        return Ok(OK);
    }
    let mut t = table::new(&["FLEET", "STATE", "MEMBERS", "TASK", "CALLS", "DIR"]);
    for f in &reply.fleets {
        let state = serde_json::to_value(f.state)?;
        t.add_row(vec![
            f.name.to_string(),
            state.as_str().unwrap_or_default().to_owned(),
            f.members.len().to_string(),
            or_dash(f.task.as_ref().map(|t| t.goal.clone())),
            f.spent.model_calls.to_string(),
            f.dir.clone(),
        ]);
    }
    out!("{}", table::render(&t))?;
    Ok(OK)
}

/// `fleet history`.
pub(crate) async fn history(env: &Env, name: PeerName) -> Result<u8> {
    let reply = env.client().await?.call(&FleetHistoryArgs { name }).await?;
    if env.json {
        output::json(&reply)?;
    } else {
        for d in &reply.decisions {
            outln!("{}  {}", Timestamp(d.at_ms), d.text)?;
        }
    }
    Ok(OK)
}

/// `fleet request`: prints the checked reply (exit 0) or the faults of the
/// last one (exit 1).
pub(crate) async fn request(env: &Env, a: crate::args::FleetRequestCli) -> Result<u8> {
    let text = super::fleet::read_source(&a.request, "the request")?;
    let mut request: ServiceRequest = serde_json::from_str(&text).map_err(|e| {
        crate::exit::CliError::usage(
            format!("the request: {e}"),
            "give {\"to\": ROLE, \"body\": {...}, \"reply\": {\"required\": [...], \"allowed\": {...}}} (docs/fleets.md#service-mode)",
        )
    })?;
    if a.to.is_some() {
        request.to = a.to;
    }
    let op = FleetRequestArgs {
        name: super::fleet_start::check_name(&a.name)?,
        request,
    };
    let progress = crate::progress::Waiting::start("the member answers");
    let reply = env.client().await?.call(&op).await;
    drop(progress);
    let reply = reply?;
    if env.json {
        output::json(&reply)?;
    } else if let Some(value) = &reply.reply {
        outln!("{}", serde_json::to_string_pretty(value)?)?;
    } else {
        outln!("the reply was refused {} times:", reply.bounces)?;
        for f in &reply.faults {
            outln!("  - {f}")?;
        }
    }
    Ok(if reply.passed { OK } else { FAILED })
}

/// What `fleet pairs --json` prints (`flotilla.fleet-pairs.v1`).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub(crate) struct PairsReply {
    /// Schema id: `flotilla.fleet-pairs.v1`.
    pub(crate) schema: String,
    /// Every pair Flotilla's tests ran.
    pub(crate) pairs: Vec<flotilla_actors::fleet::pairs::Pair>,
}

/// `fleet pairs`: the pair table this build ships.
pub(crate) fn pairs(env: &Env) -> Result<u8> {
    if env.json {
        output::json(&PairsReply {
            schema: "flotilla.fleet-pairs.v1".into(),
            pairs: PAIRS.to_vec(),
        })?;
        return Ok(OK);
    }
    let mut t = table::new(&["SUPERVISOR", "WORKER", "LIFECYCLE", "STATUS", "EVIDENCE"]);
    for p in PAIRS {
        t.add_row(vec![
            p.supervisor.to_string(),
            p.worker.to_string(),
            serde_json::to_value(p.lifecycle)?
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            serde_json::to_value(p.status)?
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            p.evidence.to_owned(),
        ]);
    }
    out!("{}", table::render(&t))?;
    Ok(OK)
}
