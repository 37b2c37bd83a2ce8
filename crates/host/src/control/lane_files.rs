//! `lane.files`: what is at some paths in a lane's working directory,
//! with each file's text, never following a path out of that directory.
//! A fleet brings a remote worker's artifacts home with it; relayed from
//! another host, only the host that placed the lane may ask
//! (`remote_lanes::serve`). Reading is `fleet::acceptance::look`'s job.

use std::path::Path;

use flotilla_actors::fleet::ArtifactSeen;
use flotilla_actors::fleet::task::stays_inside;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LANE_FILES_SCHEMA, LaneFile, LaneFileState, LaneFilesArgs,
    LaneFilesReply, MAX_LANE_FILE_BYTES, MAX_LANE_FILES, MAX_LANE_FILES_TOTAL,
};

use crate::context::HostContext;
use crate::fleet::acceptance::look;

/// Answers `lane.files` for a lane of this host.
pub(super) async fn files(
    ctx: &HostContext,
    args: LaneFilesArgs,
) -> Result<LaneFilesReply, ControlError> {
    check(&args)?;
    let lane = super::lanes::lane(ctx, &args.name).await?;
    let cwd = super::lanes::status(&lane).await?.cwd;
    let dir = Path::new(&cwd).to_path_buf();
    let paths = args.paths;
    let read = tokio::task::spawn_blocking(move || read_all(&dir, &paths))
        .await
        .map_err(|e| ControlError::internal(format!("reading the lane's files failed: {e}")))?;
    Ok(LaneFilesReply {
        schema: LANE_FILES_SCHEMA.into(),
        cwd,
        files: read,
    })
}

/// What no file system can fix: the number of paths and their shape.
fn check(args: &LaneFilesArgs) -> Result<(), ControlError> {
    if args.paths.is_empty() || args.paths.len() > MAX_LANE_FILES {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!(
                "lane.files takes 1 to {MAX_LANE_FILES} paths, not {}",
                args.paths.len()
            ),
        )
        .with_hint("ask again with fewer paths"));
    }
    if let Some(bad) = args.paths.iter().find(|p| !stays_inside(p)) {
        return Err(ControlError::new(
            ErrorCode::BadRequest,
            format!("{bad:?} is not a relative path inside the lane's working directory"),
        )
        .with_hint("give paths relative to the lane's directory, with no leading / and no .."));
    }
    Ok(())
}

/// Reads every path; once [`MAX_LANE_FILES_TOTAL`] bytes of text are in
/// the reply, the rest are `unreadable` (the answer must fit one frame).
fn read_all(dir: &Path, paths: &[String]) -> Vec<LaneFile> {
    let mut total = 0usize;
    paths
        .iter()
        .map(|path| {
            let seen = look(dir, path, MAX_LANE_FILE_BYTES, "the lane's directory");
            let seen = match seen {
                ArtifactSeen::Text(text) if total + text.len() > MAX_LANE_FILES_TOTAL => {
                    ArtifactSeen::Unreadable(format!(
                        "the files asked for together hold more than {MAX_LANE_FILES_TOTAL} bytes; ask for it alone"
                    ))
                }
                ArtifactSeen::Text(text) => {
                    total += text.len();
                    ArtifactSeen::Text(text)
                }
                other => other,
            };
            file_of(path, seen)
        })
        .collect()
}

fn file_of(path: &str, seen: ArtifactSeen) -> LaneFile {
    let (state, text, why) = match seen {
        ArtifactSeen::Text(text) => (LaneFileState::Text, Some(text), None),
        ArtifactSeen::Missing => (LaneFileState::Missing, None, None),
        ArtifactSeen::Unreadable(why) => (LaneFileState::Unreadable, None, Some(why)),
    };
    LaneFile {
        path: path.to_owned(),
        state,
        text,
        why,
    }
}
