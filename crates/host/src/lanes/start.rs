//! Starting a lane: checking the request (name, prompt, arguments,
//! groups, owner, working directory, the CLI installed and its version)
//! before anything exists, then registering its peer, storing it and
//! beginning its first turn; a first turn that cannot begin takes the lane
//! away again. Only the lane supervisor calls this; it must not touch a
//! running lane.

use flotilla_actors::lane::{CliKind, LaneRecord, LaneSpec};
use flotilla_actors::model::{PeerKind, PeerRecord, Timestamp};
use flotilla_actors::names::{GroupName, PeerId, PeerName};
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LaneStartArgs, LaneStartReply, PeerJoinArgs,
};
use ractor::Actor;

use super::{
    LaneMsg, LaneSupervisorRef, LaneSupervisorState, MAX_PROMPT, OPERATOR, call, cli, doctor, lane,
    version_floor,
};
use crate::context::HostContext;
use crate::registry::RegistryMsg;

impl LaneSupervisorState {
    pub(super) async fn start(
        &mut self,
        myself: &LaneSupervisorRef,
        args: LaneStartArgs,
    ) -> Result<LaneStartReply, ControlError> {
        let spec = self.spec(args.clone()).await?;
        let notes = self.version_notes(&spec, args.force).await?;
        let peer = self.lane_peer(&spec);
        // The lane and its peer are stored with its first turn, in that
        // turn's commit: a crash before it leaves nothing of the lane.
        let record = LaneRecord::new(spec.clone(), Timestamp::now());
        let (actor, _) = Actor::spawn_linked(
            None,
            lane::Lane,
            (self.ctx.clone(), record, Some(peer.clone())),
            myself.get_cell(),
        )
        .await
        .map_err(|e| ControlError::internal(format!("cannot start the lane: {e}")))?;
        self.lanes
            .insert(spec.name.clone(), (actor.clone(), spec.persistent));
        let begun = call(&actor, |reply| LaneMsg::BeginTurn {
            prompt: args.prompt.clone(),
            resume: false,
            reply,
        })
        .await;
        let turn = match begun {
            Ok(turn) => turn,
            Err(refused) => {
                // A lane whose first turn cannot start is not kept: no ghost
                // lane, no burned name.
                if let Err(e) = self.remove_now(&spec.name, actor, true).await {
                    tracing::warn!(lane = %spec.name, error = %e, "could not remove a lane whose start failed");
                }
                return Err(refused);
            }
        };
        Ok(LaneStartReply {
            lane: peer.id,
            turn,
            cwd: Some(spec.cwd.clone()),
            notes,
        })
    }

    /// The CLI's version against the supported range: refused below the
    /// floor unless `force`; notes for the operator otherwise.
    async fn version_notes(
        &self,
        spec: &LaneSpec,
        force: bool,
    ) -> Result<Vec<String>, ControlError> {
        let Some(connector) = cli::connector(spec.cli).filter(|_| spec.cli != CliKind::Exec) else {
            return Ok(Vec::new());
        };
        let program = self.ctx.config.cli_program(spec.cli, connector.program());
        Ok(version_floor::check_start(spec.cli, &program, force)
            .await?
            .into_iter()
            .collect())
    }

    /// Checks a start request and makes the lane's spec.
    async fn spec(&self, args: LaneStartArgs) -> Result<LaneSpec, ControlError> {
        let directory = self.ctx.directory();
        let lane_id = PeerId::new(self.ctx.host.clone(), args.name.clone());
        if self.lanes.contains_key(&args.name) {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("lane {} already exists", args.name),
            )
            .with_hint(format!(
                "continue it with `flotilla lane resume {}`, or pick another name",
                args.name
            )));
        }
        if directory.get(&lane_id).is_some() {
            return Err(ControlError::new(
                ErrorCode::AlreadyExists,
                format!("{lane_id} is already a peer"),
            )
            .with_hint("pick another lane name"));
        }
        if args.prompt.len() > MAX_PROMPT {
            return Err(ControlError::new(
                ErrorCode::TooLarge,
                format!(
                    "the prompt is {} bytes, over the limit of {MAX_PROMPT}",
                    args.prompt.len()
                ),
            ));
        }
        flotilla_actors::lane::input::check(&args.args, args.model.as_deref(), &args.env)?;
        if let Some(g) = args.groups.iter().find(|g| g.is_session()) {
            return Err(flotilla_actors::names::NameError::ReservedGroup(g.to_string()).into());
        }
        let owner = match &args.owner {
            Some(remote) => remote.clone(),
            None => ensure_owner(&self.ctx, args.as_peer.as_ref()).await?,
        };
        let cwd = resolve_cwd(args.cwd.as_deref())?;
        let host = self.ctx.host.to_string();
        if let Some(refused) =
            doctor::unusable(&self.ctx.config, &host, args.cli, &args.args, cwd.as_ref())
        {
            return Err(refused);
        }
        let mut groups = args.groups.clone();
        if args.inherit_groups
            && let Some(o) = directory.get(&owner)
        {
            groups.extend(o.groups.iter().filter(|g| !g.is_session()).cloned());
        }
        Ok(LaneSpec {
            name: args.name,
            cli: args.cli,
            cwd,
            model: args.model,
            permissions: args.permissions,
            timeout_secs: args.timeout_secs,
            persistent: args.persistent,
            auto_archive_secs: args.auto_archive_secs,
            groups,
            inherit_groups: args.inherit_groups,
            owner,
            env: args.env,
            args: args.args,
            restart_on_stall: args.restart_on_stall,
        })
    }

    fn lane_peer(&self, spec: &LaneSpec) -> PeerRecord {
        let mut groups: std::collections::BTreeSet<GroupName> =
            spec.groups.iter().cloned().collect();
        groups.insert(GroupName::session(&spec.owner));
        PeerRecord {
            id: PeerId::new(self.ctx.host.clone(), spec.name.clone()),
            kind: PeerKind::Lane,
            product: Some(spec.cli.to_string()),
            groups,
            joined_at: Timestamp::now(),
        }
    }
}

/// A lane's owner on this host: the `--as` peer, or the operator
/// (registered on first use).
pub(crate) async fn ensure_owner(
    ctx: &HostContext,
    as_peer: Option<&PeerName>,
) -> Result<PeerId, ControlError> {
    let directory = ctx.directory();
    if let Some(name) = as_peer {
        let id = PeerId::new(ctx.host.clone(), name.clone());
        return match directory.get(&id) {
            Some(_) => Ok(id),
            None => Err(crate::registry::not_registered(&id)),
        };
    }
    let operator = PeerName::new(OPERATOR).map_err(ControlError::from)?;
    let id = PeerId::new(ctx.host.clone(), operator.clone());
    if directory.get(&id).is_none() {
        let registry = ctx
            .children
            .registry()
            .ok_or_else(|| ControlError::unavailable("the registry"))?;
        let join = PeerJoinArgs {
            name: operator,
            groups: vec![],
            product: Some("operator".into()),
            session: None,
        };
        call(&registry, |r| RegistryMsg::Join(join.clone(), r)).await?;
    }
    Ok(id)
}

fn resolve_cwd(cwd: Option<&str>) -> Result<String, ControlError> {
    let dir = match cwd {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::current_dir().map_err(|e| ControlError::internal(e.to_string()))?,
    };
    if !dir.is_absolute() || !dir.is_dir() {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!(
                "working directory {} does not exist or is not absolute",
                dir.display()
            ),
        )
        .with_hint("pass an existing directory with -C/--cd"));
    }
    Ok(dir.display().to_string())
}
