//! What a lane placed from another host may ask for, decided by the host
//! that runs it: where it works (`remote_lane_roots`), the highest
//! permission mode (`remote_lane_max_permissions`), the environment
//! variables it may set (`remote_lane_env`) and whether a CLI other than
//! `exec` takes native arguments (`remote_lane_args`).
//!
//! A request beyond a limit is refused with the key that refused it and
//! what the operator can change; nothing is quietly narrowed. The rules are
//! plain functions; the one that needs the file system (resolving a
//! directory) takes the resolver as an argument.
//!
//! `exec` is the exception for arguments only: its arguments are the
//! command, and a host that allows `exec` lanes already runs any command
//! for the allowed groups.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use flotilla_actors::lane::{CliKind, Permissions};
use flotilla_actors::protocol::LaneStartArgs;

use crate::config::HostConfig;

/// A limit in the config (or its flag) has a bad value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitsError {
    /// A root is not an absolute path.
    #[error("remote_lane_roots: {0:?} is not an absolute path")]
    RelativeRoot(PathBuf),
    /// The permission mode is not one of ours.
    #[error("remote_lane_max_permissions: {0}")]
    Permissions(String),
    /// A name that no environment variable can have.
    #[error("remote_lane_env: {0:?} is not a variable name (not empty, no `=`, no NUL)")]
    EnvName(String),
}

/// Why a remote lane request goes beyond this host's limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The working directory is not inside an allowed root.
    #[error(
        "the working directory {dir} is outside the directories remote lanes may use here \
         (remote_lane_roots: {roots}); drop -C for a fresh directory, or its operator can \
         add a root to remote_lane_roots"
    )]
    Cwd {
        /// The directory asked for.
        dir: String,
        /// The allowed roots, listed.
        roots: String,
    },
    /// The working directory is inside a root but does not exist.
    #[error("the working directory {dir} does not exist here (remote_lane_roots: {roots})")]
    MissingCwd {
        /// The directory asked for.
        dir: String,
        /// The allowed roots, listed.
        roots: String,
    },
    /// The permission mode is above the highest granted.
    #[error(
        "permissions {asked} are above the highest this host grants remote lanes \
         (remote_lane_max_permissions = {max}); ask for {max} or less, or its operator can \
         raise remote_lane_max_permissions"
    )]
    Permissions {
        /// The mode asked for.
        asked: Permissions,
        /// The highest granted.
        max: Permissions,
    },
    /// An environment variable that is not on the allow-list.
    #[error(
        "remote lanes may not set {name} here (remote_lane_env: {allowed}); drop --env \
         {name}, or its operator can add it to remote_lane_env"
    )]
    Env {
        /// The variable.
        name: String,
        /// The allowed names, listed.
        allowed: String,
    },
    /// Native arguments to a CLI other than `exec`.
    #[error(
        "{cli} lanes placed from other hosts take no native arguments here \
         (remote_lane_args = false); drop the arguments after --, or its operator can set \
         remote_lane_args = true"
    )]
    Args {
        /// The CLI.
        cli: CliKind,
    },
}

/// The limits, from `config.toml` (or the flags that override it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneLimits {
    roots: Vec<PathBuf>,
    max_permissions: Permissions,
    env: BTreeSet<String>,
    args: bool,
}

impl LaneLimits {
    /// Reads the limits from the config; `default_root` is the only root
    /// when `remote_lane_roots` is empty. A bad value names its key.
    pub fn from_config(config: &HostConfig, default_root: &Path) -> Result<Self, LimitsError> {
        let roots = if config.remote_lane_roots.is_empty() {
            vec![default_root.to_path_buf()]
        } else {
            config.remote_lane_roots.clone()
        };
        if let Some(root) = roots.iter().find(|r| !r.is_absolute()) {
            return Err(LimitsError::RelativeRoot(root.clone()));
        }
        let max_permissions = config
            .remote_lane_max_permissions
            .parse()
            .map_err(LimitsError::Permissions)?;
        if let Some(name) = config.remote_lane_env.iter().find(|n| !is_env_name(n)) {
            return Err(LimitsError::EnvName(name.clone()));
        }
        Ok(Self {
            roots,
            max_permissions,
            env: config.remote_lane_env.iter().cloned().collect(),
            args: config.remote_lane_args,
        })
    }

    /// Checks everything but the directory: permissions, environment and
    /// native arguments.
    pub fn check(&self, start: &LaneStartArgs) -> Result<(), Refusal> {
        check_permissions(start.permissions, self.max_permissions)?;
        check_env(&start.env, &self.env)?;
        check_args(start.cli, &start.args, self.args)
    }

    /// The directory a request's `cwd` names, resolved by `canonicalize`
    /// (symlinks and `..` followed) and inside a root: first as written,
    /// so nothing outside the roots is ever looked at, then as resolved,
    /// so a symlink cannot lead out.
    pub fn resolve_cwd(
        &self,
        requested: &str,
        canonicalize: impl Fn(&Path) -> std::io::Result<PathBuf>,
    ) -> Result<PathBuf, Refusal> {
        let roots = || {
            let listed: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            listed.join(", ")
        };
        let outside = || Refusal::Cwd {
            dir: requested.to_owned(),
            roots: roots(),
        };
        let written = normalize(Path::new(requested))
            .filter(|p| within(p, &self.roots))
            .ok_or_else(outside)?;
        let resolved = canonicalize(&written).map_err(|_| Refusal::MissingCwd {
            dir: requested.to_owned(),
            roots: roots(),
        })?;
        let real_roots: Vec<PathBuf> = self
            .roots
            .iter()
            .filter_map(|r| canonicalize(r).ok())
            .collect();
        if within(&resolved, &real_roots) {
            Ok(resolved)
        } else {
            Err(outside())
        }
    }
}

/// Is `name` a name an environment variable can have?
fn is_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// How much a permission mode allows, in order.
fn rank(p: Permissions) -> u8 {
    match p {
        Permissions::Default => 0,
        Permissions::Workspace => 1,
        Permissions::Bypass => 2,
    }
}

/// A mode above `max` is refused, never lowered.
pub fn check_permissions(asked: Permissions, max: Permissions) -> Result<(), Refusal> {
    if rank(asked) <= rank(max) {
        Ok(())
    } else {
        Err(Refusal::Permissions { asked, max })
    }
}

/// Every variable the request sets must be on the allow-list.
pub fn check_env(env: &[(String, String)], allowed: &BTreeSet<String>) -> Result<(), Refusal> {
    match env.iter().find(|(name, _)| !allowed.contains(name)) {
        None => Ok(()),
        Some((name, _)) => Err(Refusal::Env {
            name: name.clone(),
            allowed: if allowed.is_empty() {
                "none".to_owned()
            } else {
                allowed.iter().cloned().collect::<Vec<_>>().join(", ")
            },
        }),
    }
}

/// Native arguments only where the operator accepts them; `exec`'s
/// arguments are its command.
pub fn check_args(cli: CliKind, args: &[String], accepted: bool) -> Result<(), Refusal> {
    if args.is_empty() || accepted || cli == CliKind::Exec {
        Ok(())
    } else {
        Err(Refusal::Args { cli })
    }
}

/// `path` with `.` and `..` taken away as written (no file system), if it
/// is absolute and never climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::RootDir => out.push(Component::RootDir),
            Component::CurDir => {}
            Component::ParentDir if !out.pop() => return None,
            Component::ParentDir => {}
            Component::Normal(name) => out.push(name),
            Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Is `path` one of `roots` or below one (whole components)?
fn within(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

#[cfg(test)]
mod tests;
