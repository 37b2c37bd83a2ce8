//! Which versions of each CLI a lane may run: none older than the floor
//! (the oldest version whose headless flags and output the connector was
//! checked against), with a note for one newer than the newest tested.
//! `lane doctor` reports it; a lane start below the floor is refused with
//! the reason unless it says `force`. The version is read once per program
//! file (its path and modification time), so starts stay fast.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{ControlError, ErrorCode};

use super::doctor::{TESTED_VERSIONS, printed_version};

/// Floors below the tested version: a CLI's oldest version still checked
/// against its connector, once a newer one is pinned for the tests. A CLI
/// not listed has its tested version (tests/clis/package.json) as floor.
const OLDER_FLOORS: &[(CliKind, &str)] = &[
    // Pinned before 2.1.332 (which hides MCP tools behind its tool search).
    (CliKind::Claude, "2.1.197"),
    // Pinned before 0.24.4 (which calls hidden MCP tools through `tool_call`).
    (CliKind::Qwen, "0.15.10"),
];

/// The oldest version of `cli` a lane runs.
fn floor(cli: CliKind) -> Option<&'static str> {
    OLDER_FLOORS
        .iter()
        .find(|(k, _)| *k == cli)
        .map(|f| f.1)
        .or_else(|| TESTED_VERSIONS.iter().find(|t| t.0 == cli).map(|t| t.2))
}

/// Where an installed version stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Standing {
    /// Between the floor and the newest tested version.
    Supported,
    /// Older than the floor.
    TooOld { found: String, floor: String },
    /// Newer than the newest tested version: it may work.
    Newer { found: String, tested: String },
    /// No version could be read, or this CLI has no floor.
    Unknown,
}

/// The first `X.Y.Z` in `text`.
pub(super) fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.').map(|p| p.parse::<u64>().ok());
            match (parts.next(), parts.next(), parts.next()) {
                (Some(Some(a)), Some(Some(b)), Some(Some(c))) => Some((a, b, c)),
                _ => None,
            }
        })
}

/// Where `printed` (what `--version` printed) stands for `cli`.
pub(super) fn standing(cli: CliKind, printed: Option<&str>) -> Standing {
    let floor = floor(cli);
    let tested = TESTED_VERSIONS.iter().find(|t| t.0 == cli).map(|t| t.2);
    let (Some(floor), Some(tested), Some(found)) = (floor, tested, printed.and_then(parse_version))
    else {
        return Standing::Unknown;
    };
    // Compare what the CLI prints with what those versions print.
    let printed_floor = parse_version(printed_version(cli, floor));
    let printed_tested = parse_version(printed_version(cli, tested));
    let shown = printed.unwrap_or_default().trim().to_owned();
    match (printed_floor, printed_tested) {
        (Some(f), _) if found < f => Standing::TooOld {
            found: shown,
            floor: floor.to_owned(),
        },
        (_, Some(t)) if found > t => Standing::Newer {
            found: shown,
            tested: tested.to_owned(),
        },
        _ => Standing::Supported,
    }
}

/// What `--version` printed, by program file and modification time.
type Versions = HashMap<(PathBuf, SystemTime), Option<String>>;

/// The versions read so far.
static SEEN: Mutex<Option<Versions>> = Mutex::new(None);

/// The version `path` prints, read once per file version.
async fn version(path: &Path) -> Option<String> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let key = (path.to_owned(), modified);
    if let Ok(seen) = SEEN.lock()
        && let Some(v) = seen.as_ref().and_then(|m| m.get(&key))
    {
        return v.clone();
    }
    let v = super::doctor::version_of(path).await;
    if let Ok(mut seen) = SEEN.lock() {
        seen.get_or_insert_with(HashMap::new).insert(key, v.clone());
    }
    v
}

/// Refuses a lane of `cli` run by `program` below the floor, unless
/// `force`; returns a note for the lane's events when it runs anyway or
/// is newer than the newest tested version.
pub(super) async fn check_start(
    cli: CliKind,
    program: &str,
    force: bool,
) -> Result<Option<String>, ControlError> {
    let Some(path) = super::doctor::find_program(program) else {
        return Ok(None);
    };
    match standing(cli, version(&path).await.as_deref()) {
        Standing::TooOld { found, floor } if !force => Err(ControlError::new(
            ErrorCode::Forbidden,
            format!("{cli} {found} is older than the oldest version flotilla supports ({floor})"),
        )
        .with_hint(format!(
            "upgrade {cli} to {floor} or newer, or pass --force to try this one anyway (`flotilla lane doctor` checks every CLI)"
        ))),
        Standing::TooOld { found, floor } => Ok(Some(format!(
            "{cli} {found} is older than the oldest supported ({floor}); started anyway (--force)"
        ))),
        Standing::Newer { found, tested } => Ok(Some(format!(
            "{cli} {found} is newer than the newest version tested ({tested}); it may still work"
        ))),
        Standing::Supported | Standing::Unknown => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_the_cli_prints() {
        assert_eq!(parse_version("2.1.197 (Claude Code)"), Some((2, 1, 197)));
        assert_eq!(parse_version("codex-cli 0.171.0"), Some((0, 171, 0)));
        assert_eq!(parse_version("v1.2"), None);
    }

    #[test]
    fn below_the_floor_is_too_old_and_above_the_tested_is_newer() {
        assert_eq!(
            standing(CliKind::Claude, Some("2.1.197 (Claude Code)")),
            Standing::Supported
        );
        assert!(matches!(
            standing(CliKind::Claude, Some("1.0.3 (Claude Code)")),
            Standing::TooOld { .. }
        ));
        assert!(matches!(
            standing(CliKind::Codex, Some("codex-cli 0.200.1")),
            Standing::Newer { .. }
        ));
        // grok 0.0.34 prints a hard-coded 1.0.1.
        assert_eq!(standing(CliKind::Grok, Some("1.0.1")), Standing::Supported);
        assert_eq!(standing(CliKind::Exec, Some("1.0.0")), Standing::Unknown);
        assert_eq!(standing(CliKind::Claude, None), Standing::Unknown);
    }
}
