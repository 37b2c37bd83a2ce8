//! The `lane.files` op: what is at some paths in a lane's working
//! directory, with the text of each file. A fleet brings a remote
//! worker's artifacts home with it (through `remote.call`, so only the
//! host that placed the lane may ask). Types only; the host reads the
//! files, never following a path out of the lane's directory.

use serde::{Deserialize, Serialize};

use crate::fleet::ArtifactSeen;
use crate::names::PeerName;

/// Schema id of `lane.files`'s reply.
pub const LANE_FILES_SCHEMA: &str = "flotilla.lane-files.v1";

/// Most paths one `lane.files` asks for.
pub const MAX_LANE_FILES: usize = 64;

/// Most bytes of one file's text in a reply (a bigger file is
/// `unreadable`, never truncated).
pub const MAX_LANE_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Most bytes of text in one reply, all files together (what is over
/// it is `unreadable`): the answer must fit one hub frame.
pub const MAX_LANE_FILES_TOTAL: usize = 5 * 1024 * 1024;

/// Arguments of `lane.files`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneFilesArgs {
    /// The lane.
    pub name: PeerName,
    /// Paths relative to the lane's working directory (no leading `/`,
    /// no `..`), at most [`MAX_LANE_FILES`].
    pub paths: Vec<String>,
}

/// What is at one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LaneFileState {
    /// A regular file of UTF-8 text: `text` holds it.
    Text,
    /// Nothing is there.
    Missing,
    /// Something is there that cannot be read as text: `why` says why.
    Unreadable,
}

/// One path's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneFile {
    /// The path, as asked.
    pub path: String,
    /// What is there.
    pub state: LaneFileState,
    /// The file's text (state `text`).
    pub text: Option<String>,
    /// Why it cannot be read (state `unreadable`).
    pub why: Option<String>,
}

impl LaneFile {
    /// The answer for `path`, from what is there.
    pub fn new(path: &str, seen: ArtifactSeen) -> Self {
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

    /// What is there, as acceptance judges it (an answer that says `text`
    /// without one is unreadable).
    pub fn seen(&self) -> ArtifactSeen {
        match (self.state, &self.text) {
            (LaneFileState::Text, Some(text)) => ArtifactSeen::Text(text.clone()),
            (LaneFileState::Missing, _) => ArtifactSeen::Missing,
            _ => ArtifactSeen::Unreadable(
                self.why
                    .clone()
                    .unwrap_or_else(|| "its host could not read it".to_owned()),
            ),
        }
    }
}

/// Reply of `lane.files` (`flotilla.lane-files.v1`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneFilesReply {
    /// Schema id: `flotilla.lane-files.v1`.
    pub schema: String,
    /// The lane's working directory (on the lane's host).
    pub cwd: String,
    /// One answer per path, in the order asked.
    pub files: Vec<LaneFile>,
}
