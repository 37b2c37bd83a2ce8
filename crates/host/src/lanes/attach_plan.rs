//! The interactive session a person steps into (`lane.attach`'s reply):
//! the CLI's own interactive command line from
//! [`super::cli::interactive_plan`] resuming the lane's native session,
//! with the lane's identity, its own environment and its private CLI home
//! (prepared here, as before a turn), without message delivery hooks.
//! Builds and prepares only; never starts the CLI.

use flotilla_actors::protocol::{ControlError, ErrorCode, LANE_ATTACH_SCHEMA, LaneAttachReply};

use super::cli::{InteractiveContext, InteractivePlan, interactive_plan};
use super::lane::LaneState;

/// The reply that opens `session` of the lane; `held` says whether the
/// caller holds the lane, `pid` is the holding process.
pub(super) fn reply(
    state: &LaneState,
    session: &str,
    held: bool,
    pid: u32,
) -> Result<LaneAttachReply, ControlError> {
    let spec = &state.record.spec;
    let connector = super::cli::connector(spec.cli).ok_or_else(|| {
        ControlError::new(
            ErrorCode::BadRequest,
            format!("no connector for {} in this build", spec.cli),
        )
    })?;
    let program = state.ctx.config.cli_program(spec.cli, connector.program());
    let exe = std::env::current_exe()
        .map_err(|e| ControlError::internal(format!("cannot find the flotilla executable: {e}")))?;
    let identity = super::identity_of(&state.ctx, spec);
    let server = identity.mcp_server(&exe.display().to_string());
    let dir = state
        .ctx
        .home
        .state_dir
        .join("lanes")
        .join(spec.name.as_str());
    let ctx = InteractiveContext {
        program: &program,
        server: &server,
        hook: None,
        peer: spec.name.as_str(),
        pid,
        resume: Some(session),
        args: &[],
        dir: &dir,
        env: &spec.env,
    };
    let InteractivePlan {
        plan, env_removed, ..
    } = interactive_plan(spec.cli, &ctx)
        .map_err(|m| ControlError::new(ErrorCode::BadRequest, m))?;
    if let Some(home) = &plan.cli_home {
        super::cli_home::prepare(home).map_err(|e| {
            ControlError::internal(format!("cannot prepare the lane's CLI home: {e}"))
        })?;
    }
    let mut env = spec.env.clone();
    env.extend(plan.env.iter().cloned());
    env.extend(identity.env());
    let env_remove = identity
        .env_removed()
        .into_iter()
        .chain(env_removed.iter().copied())
        .map(str::to_owned)
        .collect();
    Ok(LaneAttachReply {
        schema: LANE_ATTACH_SCHEMA.into(),
        lane: state.id(),
        cli: spec.cli,
        native_session_id: session.to_owned(),
        argv: plan.argv,
        cwd: spec.cwd.clone(),
        env,
        env_remove,
        held,
        waited_for: None,
        interrupted: false,
    })
}
