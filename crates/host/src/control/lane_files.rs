//! `lane.files`: what is at some paths in a lane's working directory,
//! with each file's text, never following a path out of that directory.
//! A fleet brings a remote worker's artifacts home with it; relayed from
//! another host, only the host that placed the lane may ask
//! (`remote_lanes::serve`). Reading is `fleet::acceptance::look`'s job.

use std::path::Path;

use flotilla_actors::fleet::ArtifactSeen;
use flotilla_actors::fleet::task::stays_inside;
use flotilla_actors::protocol::{
    ControlError, ErrorCode, LANE_FILES_SCHEMA, LaneFile, LaneFilesArgs, LaneFilesReply,
    MAX_LANE_FILE_BYTES, MAX_LANE_FILES, MAX_LANE_FILES_TOTAL,
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
            LaneFile::new(path, seen)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_actors::names::PeerName;

    fn args(paths: &[&str]) -> LaneFilesArgs {
        LaneFilesArgs {
            name: PeerName::new("box").expect("name"),
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    #[test]
    fn no_path_too_many_paths_and_a_path_that_leaves_are_refused() {
        assert!(check(&args(&["a.md", "d/b.md"])).is_ok());
        let none = check(&args(&[])).expect_err("refused");
        assert_eq!(none.code, ErrorCode::BadRequest);
        let many: Vec<String> = (0..=MAX_LANE_FILES).map(|i| format!("f{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(check(&args(&many)).is_err());
        for bad in ["../x", "/etc/hostname", "a/../../x", ""] {
            let e = check(&args(&["ok.md", bad])).expect_err("refused");
            assert!(
                e.message.contains("not a relative path"),
                "{bad:?}: {}",
                e.message
            );
        }
    }
}
