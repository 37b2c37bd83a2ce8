//! What the daemon asks git of a remote: its URL, and pushing and fetching
//! a change's branch and the run records' refs, with the user's own
//! credentials and the network deadline. The commands are run by `Git`.

use super::{Git, GitError, NETWORK, RECORDS_REF};

impl Git {
    /// The URL of remote `name`.
    pub async fn remote_url(&self, name: &str) -> Result<String, GitError> {
        self.run(&["remote", "get-url", name]).await
    }

    /// Pushes `branch` to `remote` (forced only if it moves along).
    pub async fn push_branch(&self, remote: &str, branch: &str) -> Result<(), GitError> {
        let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
        self.run_env(&["push", "--quiet", remote, &spec], &[], NETWORK)
            .await
            .map(drop)
    }

    /// Whether the repository has a remote of that name.
    pub async fn has_remote(&self, name: &str) -> Result<bool, GitError> {
        Ok(self.run(&["remote"]).await?.lines().any(|r| r == name))
    }

    /// Pushes the records' ref to `remote`.
    pub async fn push_records(&self, remote: &str) -> Result<(), GitError> {
        let spec = format!("{RECORDS_REF}:{RECORDS_REF}");
        self.run_env(&["push", "--quiet", remote, &spec], &[], NETWORK)
            .await
            .map(drop)
    }

    /// Fetches every `refs/flotilla/` ref from `remote`.
    pub async fn fetch_records(&self, remote: &str) -> Result<(), GitError> {
        let spec = "+refs/flotilla/*:refs/flotilla/*";
        self.run_env(&["fetch", "--quiet", remote, spec], &[], NETWORK)
            .await
            .map(drop)
    }
}
