//! `flotilla fleet start`: the spec from flags and an optional fleet file
//! (flags win), checked here for what a person can fix before the daemon
//! is asked; the daemon checks it all again (and the pair table) before
//! anything starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use flotilla_actors::fleet::{BudgetCard, FleetSpec, Lifecycle, MemberSpec};
use flotilla_actors::governance::ClaimId;
use flotilla_actors::lane::{CliKind, Permissions};
use flotilla_actors::names::{HostName, PeerName};
use flotilla_actors::protocol::FleetStartArgs as StartOp;
use serde::Deserialize;

use crate::args::FleetStartArgs;
use crate::exit::CliError;

/// A fleet file: the flags of `fleet start`, as TOML.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetFile {
    supervisor: Option<String>,
    supervisor_cmd: Option<String>,
    workers: Option<usize>,
    #[serde(default)]
    worker_cli: Vec<String>,
    worker_cmd: Option<String>,
    model: Option<String>,
    lifecycle: Option<String>,
    dir: Option<PathBuf>,
    max_busy: Option<usize>,
    #[serde(default)]
    hosts: Vec<String>,
    #[serde(default)]
    claims: Vec<String>,
    supervisor_permissions: Option<String>,
    worker_permissions: Option<String>,
    budget: Option<PathBuf>,
    task: Option<String>,
    turn_timeout: Option<String>,
    check_timeout: Option<String>,
    rotate_at: Option<f64>,
    rotate_now_at: Option<f64>,
    wall_wait: Option<String>,
    #[serde(default)]
    supervisor_fallback: Vec<String>,
    #[serde(default)]
    worker_fallback: Vec<String>,
    #[serde(rename = "as")]
    as_peer: Option<String>,
}

fn usage(message: String, hint: &str) -> anyhow::Error {
    CliError::usage(message, hint)
}

fn read_file(path: &Path) -> Result<FleetFile> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        usage(
            format!("cannot read the fleet file {}: {e}", path.display()),
            "give a TOML file with the fields of `flotilla fleet start` (docs/fleets.md#fleet-files)",
        )
    })?;
    toml::from_str(&text).map_err(|e| {
        usage(
            format!("the fleet file {}: {e}", path.display()),
            "its fields are those of `flotilla fleet start` (docs/fleets.md#fleet-files)",
        )
    })
}

/// A relative path from the fleet file is relative to the file.
fn beside(file: Option<&Path>, path: PathBuf) -> PathBuf {
    match file.and_then(Path::parent) {
        Some(base) if path.is_relative() => base.join(path),
        _ => path,
    }
}

fn cli_of(name: &str, what: &str) -> Result<CliKind> {
    name.parse()
        .map_err(|e: String| usage(format!("{what}: {e}"), "see `flotilla lane doctor`"))
}

/// A permission mode from the flag, else the fleet file, else `default`.
fn permissions_of(flag: Option<Permissions>, file: &Option<String>) -> Result<Permissions> {
    match (flag, file) {
        (Some(mode), _) => Ok(mode),
        (None, Some(name)) => name
            .parse()
            .map_err(|e: String| usage(e, "see `flotilla fleet start --help`")),
        (None, None) => Ok(Permissions::Default),
    }
}

fn lifecycle_of(name: &str) -> Result<Lifecycle> {
    match name {
        "task" => Ok(Lifecycle::Task),
        "service" => Ok(Lifecycle::Service),
        "smoke" => Ok(Lifecycle::Smoke),
        _ => Err(usage(
            format!("{name:?} is not a lifecycle"),
            "use task, service or smoke",
        )),
    }
}

fn duration_of(value: &str, what: &str) -> Result<Duration> {
    crate::args::parse_within(
        value,
        Duration::from_secs(1)..=Duration::from_secs(24 * 3600),
    )
    .map_err(|e| usage(format!("{what}: {e}"), "write it like 30s, 10m or 2h"))
}

/// The `fleet.start` request from the command line.
pub(crate) fn request(a: FleetStartArgs) -> Result<StartOp> {
    let file_path = a.file.clone();
    let f = match &file_path {
        Some(path) => read_file(path)?,
        None => FleetFile::default(),
    };
    let fp = file_path.as_deref();
    let supervisor = match (a.supervisor, &f.supervisor) {
        (Some(cli), _) => cli,
        (None, Some(name)) => cli_of(name, "supervisor")?,
        (None, None) => {
            return Err(usage(
                "a fleet needs its supervisor's CLI".into(),
                "add --supervisor CLI (claude, codex, ..., or exec with --supervisor-cmd)",
            ));
        }
    };
    let worker_clis = if a.worker_cli.is_empty() {
        f.worker_cli
            .iter()
            .map(|n| cli_of(n, "worker_cli"))
            .collect::<Result<Vec<_>>>()?
    } else {
        a.worker_cli.clone()
    };
    let Some(last) = worker_clis.last().copied() else {
        return Err(usage(
            "a fleet needs its workers' CLI".into(),
            "add --worker-cli CLI (repeat it for mixed workers)",
        ));
    };
    let count = a.workers.or(f.workers).unwrap_or(worker_clis.len());
    let worker_cmd = a.worker_cmd.clone().or(f.worker_cmd.clone());
    let model = a.model.clone().or(f.model.clone());
    let pick = |flag: &Vec<String>, file: &Vec<String>| {
        if flag.is_empty() {
            file.clone()
        } else {
            flag.clone()
        }
    };
    let worker_fallback = pick(&a.worker_fallback, &f.worker_fallback);
    let supervisor_fallback = pick(&a.supervisor_fallback, &f.supervisor_fallback);
    let supervisor_permissions =
        permissions_of(a.supervisor_permissions, &f.supervisor_permissions)?;
    let worker_permissions = permissions_of(a.worker_permissions, &f.worker_permissions)?;
    let member = |cli: CliKind, cmd: &Option<String>, fallback: &Vec<String>| MemberSpec {
        cli,
        model: model.clone(),
        command: if cli == CliKind::Exec {
            cmd.clone()
        } else {
            None
        },
        fallback_models: fallback.clone(),
        host: None,
        claim: None,
        permissions: Permissions::Default,
    };
    let hosts = hosts_of(pick(&a.hosts, &f.hosts))?;
    let claims = claims_of(pick(&a.claims, &f.claims), count)?;
    let workers = (0..count)
        .map(|i| MemberSpec {
            host: (!hosts.is_empty()).then(|| hosts[i % hosts.len()].clone()),
            claim: claims.get(i).cloned(),
            permissions: worker_permissions,
            ..member(
                worker_clis.get(i).copied().unwrap_or(last),
                &worker_cmd,
                &worker_fallback,
            )
        })
        .collect();
    let supervisor_cmd = a.supervisor_cmd.clone().or(f.supervisor_cmd.clone());
    let lifecycle = match (a.lifecycle, &f.lifecycle) {
        (Some(l), _) => l,
        (None, Some(name)) => lifecycle_of(name)?,
        (None, None) => Lifecycle::Task,
    };
    let dir = match a.dir.clone().or(f.dir.clone().map(|d| beside(fp, d))) {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let dir = std::path::absolute(&dir)
        .with_context(|| format!("cannot resolve the directory {}", dir.display()))?;
    let budget = match a.budget.clone().or(f.budget.clone().map(|b| beside(fp, b))) {
        Some(path) => read_budget(&path)?,
        None => BudgetCard::default(),
    };
    let task = match a.task.clone().or(f
        .task
        .clone()
        .map(|t| beside(fp, PathBuf::from(t)).display().to_string()))
    {
        Some(source) => Some(super::fleet::read_task(&source)?),
        None => None,
    };
    let turn_timeout = match (a.turn_timeout, &f.turn_timeout) {
        (Some(d), _) => Some(d),
        (None, Some(v)) => Some(duration_of(v, "turn_timeout")?),
        _ => None,
    };
    let check_timeout = match (a.check_timeout, &f.check_timeout) {
        (Some(d), _) => d,
        (None, Some(v)) => duration_of(v, "check_timeout")?,
        _ => Duration::from_secs(1800),
    };
    let wall_wait = match (a.wall_wait, &f.wall_wait) {
        (Some(d), _) => d,
        (None, Some(v)) => duration_of(v, "wall_wait")?,
        _ => Duration::from_secs(300),
    };
    // A lane's own processes have FLOTILLA_PEER: a fleet a member starts
    // is its own (and its fleet's sub-team).
    let from_env = std::env::var("FLOTILLA_PEER")
        .ok()
        .filter(|p| !p.is_empty());
    let as_peer = match a.as_peer.clone().or(f.as_peer.clone()).or(from_env) {
        Some(name) => Some(check_name(&name)?),
        None => None,
    };
    let spec = FleetSpec {
        name: check_name(&a.name)?,
        supervisor: MemberSpec {
            permissions: supervisor_permissions,
            ..member(supervisor, &supervisor_cmd, &supervisor_fallback)
        },
        workers,
        lifecycle,
        dir: dir.display().to_string(),
        max_busy: a.max_busy.or(f.max_busy),
        budget,
        turn_timeout_secs: turn_timeout.map(|d| d.as_secs().max(1)),
        check_timeout_secs: check_timeout.as_secs().max(1),
        wall_wait_secs: wall_wait.as_secs().max(1),
        matrix: Vec::new(),
        rotate_at_pct: a
            .rotate_at
            .or(f.rotate_at)
            .unwrap_or(flotilla_actors::fleet::rotation::DEFAULT_THRESHOLD_PCT),
        rotate_now_at_pct: a.rotate_now_at.or(f.rotate_now_at),
        as_peer,
    };
    spec.validate()
        .map_err(|e| usage(e, "see `flotilla fleet start --help`"))?;
    Ok(StartOp { spec, task })
}

/// The claims of `--claim` (or the file's `claims`), one per worker at most.
fn claims_of(ids: Vec<String>, workers: usize) -> Result<Vec<ClaimId>> {
    if ids.len() > workers {
        return Err(usage(
            format!("{} claims for {workers} workers", ids.len()),
            "give each worker one claim at most (--workers N to have more)",
        ));
    }
    ids.iter()
        .map(|id| {
            ClaimId::parse(id).map_err(|e| {
                usage(
                    e.to_string(),
                    "name a claim of the fleet's repository (`flotilla claim list REPO`)",
                )
            })
        })
        .collect()
}

/// The hosts of `--host` (or the file's `hosts`), checked.
fn hosts_of(names: Vec<String>) -> Result<Vec<HostName>> {
    names
        .iter()
        .map(|name| {
            HostName::new(name).map_err(|e| {
                usage(
                    format!("{name:?} is not a host name: {e}"),
                    "name a host of the federation (`flotilla hub roster` at the hub lists them)",
                )
            })
        })
        .collect()
}

/// A budget card from a file.
pub(crate) fn read_budget(path: &Path) -> Result<BudgetCard> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        usage(
            format!("cannot read the budget card {}: {e}", path.display()),
            "give a TOML or JSON file (docs/fleets.md#budgets)",
        )
    })?;
    BudgetCard::parse(&text).map_err(|e| {
        usage(
            format!("the budget card {}: {e}", path.display()),
            "its caps are model_calls, rounds, wall_hours, tokens and cost (docs/fleets.md#budgets)",
        )
    })
}

/// Checks a fleet name.
pub(crate) fn check_name(name: &str) -> Result<PeerName> {
    PeerName::new(name).map_err(|e| {
        usage(
            format!("{name:?} is not a valid fleet name: {e}"),
            "use letters, digits, '-' and '_'",
        )
    })
}
