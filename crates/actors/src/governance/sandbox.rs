//! Whether a CLI's commands are confined in a permission mode, and the
//! policy's sandbox rule for lanes in claims: with `sandbox = "required"`
//! (the default) a claim's lane runs only in a mode where its CLI either
//! runs commands inside its own sandbox or runs no shell at all. What each
//! mode does per CLI is docs/lanes-clis.md; this table is that page's
//! summary. Pure: no process, no file.

use serde::{Deserialize, Serialize};

use crate::lane::{CliKind, Permissions};

/// The policy's rule for one CLI's lanes in claims.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SandboxRule {
    /// Only a mode whose commands are confined (the default).
    #[default]
    Required,
    /// The permission ceiling alone decides (only the user's own file may
    /// say so).
    Off,
}

/// How a CLI's commands are held in one permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Commands run inside the CLI's own OS sandbox.
    Sandboxed(&'static str),
    /// The CLI runs no shell in this mode (asks are refused headless, or
    /// the shell tool is off).
    NoShell(&'static str),
    /// Commands run unconfined.
    Unconfined(&'static str),
    /// Not a model: an exec lane runs the user's own command.
    NotAModel,
}

/// How `cli`'s commands are held with `--permissions mode`.
pub fn confinement(cli: CliKind, mode: Permissions) -> Confinement {
    use Confinement::{NoShell, NotAModel, Sandboxed, Unconfined};
    use Permissions::{Bypass, Default, Workspace};
    match (cli, mode) {
        (CliKind::Exec, _) => NotAModel,
        (CliKind::Codex, Default) => Sandboxed("codex exec's read-only sandbox"),
        (CliKind::Codex, Workspace) => Sandboxed("codex's workspace-write sandbox"),
        (CliKind::Claude, Default) => NoShell("headless claude refuses every tool that asks"),
        (CliKind::Claude, Workspace) => NoShell("acceptEdits allows edits; the shell still asks"),
        (CliKind::Gemini | CliKind::Qwen, Default) => {
            NoShell("headless approval refuses the shell")
        }
        (CliKind::Gemini | CliKind::Qwen, Workspace) => NoShell("auto-edit; the shell still asks"),
        (CliKind::Pi, Workspace) => NoShell("pi's file tools only, no bash"),
        (CliKind::Opencode, Workspace) => NoShell("opencode asks for bash, refused in run"),
        (CliKind::Pi, Default) => Unconfined("pi runs bash unasked"),
        (CliKind::Opencode, Default) => Unconfined("opencode run allows bash by default"),
        (CliKind::Grok, _) => Unconfined("grok cannot limit its tools"),
        (_, Bypass) => Unconfined("bypass allows everything, unsandboxed"),
    }
}

/// Why a claim's lane may not run in that mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{cli} with --permissions {mode} runs commands unconfined ({why}); the policy requires a sandbox for lanes in claims"
)]
pub struct SandboxRefusal {
    /// The CLI.
    pub cli: CliKind,
    /// The mode asked for.
    pub mode: &'static str,
    /// What makes it unconfined.
    pub why: &'static str,
    /// The least permissive mode of this CLI that is confined, if any.
    pub confined: Option<Permissions>,
}

/// Checks `cli` in `mode` against `rule`.
pub fn check(cli: CliKind, mode: Permissions, rule: SandboxRule) -> Result<(), SandboxRefusal> {
    match (confinement(cli, mode), rule) {
        (Confinement::Unconfined(why), SandboxRule::Required) => Err(SandboxRefusal {
            cli,
            mode: mode.as_str(),
            why,
            confined: Permissions::ALL
                .into_iter()
                .find(|m| !matches!(confinement(cli, *m), Confinement::Unconfined(_))),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bypass_and_grok_are_never_confined_and_exec_is_not_a_model() {
        for cli in CliKind::ALL {
            let bypass = check(cli, Permissions::Bypass, SandboxRule::Required);
            assert_eq!(bypass.is_err(), cli != CliKind::Exec, "{cli}");
            assert_eq!(check(cli, Permissions::Bypass, SandboxRule::Off), Ok(()));
        }
        let grok = check(CliKind::Grok, Permissions::Default, SandboxRule::Required);
        assert_eq!(
            grok.map_err(|r| r.confined),
            Err(None),
            "no mode confines grok"
        );
    }

    #[test]
    fn a_refusal_names_the_least_mode_that_confines() {
        let pi = check(CliKind::Pi, Permissions::Default, SandboxRule::Required);
        let refusal = pi.expect_err("pi runs bash unasked");
        assert_eq!(refusal.confined, Some(Permissions::Workspace));
        assert!(
            refusal.to_string().contains("pi runs bash unasked"),
            "{refusal}"
        );
        for cli in [
            CliKind::Claude,
            CliKind::Codex,
            CliKind::Gemini,
            CliKind::Qwen,
        ] {
            assert_eq!(
                check(cli, Permissions::Default, SandboxRule::Required),
                Ok(())
            );
            assert_eq!(
                check(cli, Permissions::Workspace, SandboxRule::Required),
                Ok(())
            );
        }
        assert!(matches!(
            confinement(CliKind::Codex, Permissions::Workspace),
            Confinement::Sandboxed(_)
        ));
    }
}
