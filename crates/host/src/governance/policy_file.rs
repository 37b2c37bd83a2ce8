//! Reading the policy's files (`policy.toml` in the user's config, then a
//! repository's `.flotilla/policy.toml` under it) and the `policy` op that
//! shows the result, or what is wrong with it.
//!
//! Owns reading the files. Must not interpret them
//! (`flotilla_actors::governance::policy` does).

use std::path::Path;

use flotilla_actors::governance::policy::{Layer, Policy};
use flotilla_actors::protocol::{ControlError, PolicyArgs, PolicyReply, PolicySource};

use super::git::Git;
use crate::context::HostContext;

/// The policy of the user's file over `top`'s (when in a repository), with
/// where each layer is and whether it exists.
pub(crate) fn load(user: &Path, top: Option<&Path>) -> (Vec<PolicySource>, Result<Policy, String>) {
    let repo = top.map(|t| t.join(".flotilla/policy.toml"));
    let mut sources = Vec::new();
    let mut texts = Vec::new();
    for (path, role) in [(Some(user.to_path_buf()), "user"), (repo, "repository")] {
        let Some(path) = path else { continue };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return (
                    sources,
                    Err(format!("cannot read the policy {}: {e}", path.display())),
                );
            }
        };
        let shown = path.to_string_lossy().into_owned();
        sources.push(PolicySource {
            path: shown.clone(),
            role: role.into(),
            present: text.is_some(),
        });
        texts.push(text.map(|t| (shown, t)));
    }
    let layer = |i: usize| -> Option<Layer<'_>> {
        let (path, text) = texts.get(i)?.as_ref()?;
        Some(Layer {
            path: path.as_str(),
            text: text.as_str(),
        })
    };
    let policy = Policy::from_layers(layer(0), layer(1)).map_err(|e| e.to_string());
    (sources, policy)
}

/// `policy`: the effective policy for a repository (or the user's alone).
pub(crate) async fn show(ctx: &HostContext, args: PolicyArgs) -> Result<PolicyReply, ControlError> {
    let top = match &args.repo {
        Some(dir) => Git::open(Path::new(dir))
            .await
            .ok()
            .map(|g| g.dir().to_path_buf()),
        None => None,
    };
    let (sources, policy) = load(&ctx.home.policy_file(), top.as_deref());
    Ok(PolicyReply {
        schema: "flotilla.policy.v1".into(),
        repo: top.map(|t| t.to_string_lossy().into_owned()),
        sources,
        valid: policy.is_ok(),
        error: policy.as_ref().err().cloned(),
        policy: policy.ok(),
    })
}
