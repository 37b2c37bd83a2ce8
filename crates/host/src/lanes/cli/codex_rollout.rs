//! Codex's rollout file, read only: the one place Codex tells the model's
//! context window and per-turn token use. `codex exec --json` reports only
//! the thread's cumulative usage, so the usage before the last turn and the
//! window come from `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-THREAD.jsonl`
//! (`token_count` and `task_started` events), when that file can be found.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use flotilla_actors::lane::Usage;
use serde_json::Value;

use super::common::{at, parse, u64_at};

/// What the rollout tells about the thread's last turn.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Rollout {
    /// Thread usage at the end of the last `token_count`.
    pub(super) total: Usage,
    /// Thread usage when the last turn started.
    pub(super) before_turn: Usage,
    /// The model's context window.
    pub(super) window: Option<u64>,
    /// Tokens in the context at the last model call.
    pub(super) last_call_tokens: u64,
}

/// Where Codex keeps its state for a lane with environment `env`: its
/// `CODEX_HOME` or `HOME/.codex`, the lane's environment first, then the
/// daemon's (which the CLI inherits).
pub(super) fn codex_home(env: &[(String, String)]) -> Option<PathBuf> {
    super::common::config_dir(env, "CODEX_HOME", ".codex")
}

/// Reads the rollout of `thread` under `codex_home`.
pub(super) fn read(codex_home: &Path, thread: &str) -> Option<Rollout> {
    let file = std::fs::File::open(find(codex_home, thread)?).ok()?;
    let mut rollout = Rollout::default();
    let mut seen = false;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.ok()?;
        if line.contains("\"task_started\"") {
            rollout.before_turn = rollout.total;
        } else if line.contains("\"token_count\"")
            && let Some(info) = parse(&line)
                .as_ref()
                .and_then(|v| at(v, &["payload", "info"]))
            && !info.is_null()
        {
            seen = true;
            rollout.total = usage(at(info, &["total_token_usage"]));
            rollout.last_call_tokens = u64_at(info, &["last_token_usage", "total_tokens"]);
            rollout.window = at(info, &["model_context_window"]).and_then(Value::as_u64);
        }
    }
    seen.then_some(rollout)
}

/// Codex's usage object (its input includes the cached part).
pub(super) fn usage(v: Option<&Value>) -> Usage {
    let v = v.unwrap_or(&Value::Null);
    Usage {
        input: u64_at(v, &["input_tokens"]),
        output: u64_at(v, &["output_tokens"]),
        cached: u64_at(v, &["cached_input_tokens"]),
    }
}

/// The rollout file of `thread`, newest day first.
fn find(codex_home: &Path, thread: &str) -> Option<PathBuf> {
    let suffix = format!("-{thread}.jsonl");
    let sessions = codex_home.join("sessions");
    for year in dirs_desc(&sessions) {
        for month in dirs_desc(&year) {
            for day in dirs_desc(&month) {
                let Ok(files) = std::fs::read_dir(&day) else {
                    continue;
                };
                let hit = files.flatten().find(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("rollout-") && name.ends_with(&suffix)
                });
                if let Some(e) = hit {
                    return Some(e.path());
                }
            }
        }
    }
    None
}

fn dirs_desc(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort_unstable_by(|a, b| b.cmp(a));
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = concat!(
        r#"{"type":"session_meta","payload":{"id":"T"}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"task_started"}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":11,"cached_input_tokens":0,"output_tokens":5,"total_tokens":16},"last_token_usage":{"input_tokens":11,"output_tokens":5,"total_tokens":16},"model_context_window":258400}}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"task_complete"}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"task_started"}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":22,"cached_input_tokens":4,"output_tokens":10,"total_tokens":32},"last_token_usage":{"input_tokens":11,"output_tokens":5,"total_tokens":16},"model_context_window":258400}}}"#,
        "\n",
    );

    #[test]
    fn finds_the_thread_and_reads_the_last_turn() {
        let home = tempfile::tempdir().expect("tempdir");
        let day = home.path().join("sessions/2026/11/30");
        std::fs::create_dir_all(&day).expect("mkdir");
        std::fs::create_dir_all(home.path().join("sessions/2026/12/01")).expect("mkdir");
        std::fs::write(day.join("rollout-2026-11-30T06-50-29-T.jsonl"), ROLLOUT).expect("write");
        std::fs::write(day.join("rollout-2026-11-30T06-50-29-U.jsonl"), "").expect("write");
        let r = read(home.path(), "T").expect("rollout");
        assert_eq!((r.total.input, r.total.cached, r.total.output), (22, 4, 10));
        assert_eq!((r.before_turn.input, r.before_turn.output), (11, 5));
        assert_eq!((r.window, r.last_call_tokens), (Some(258_400), 16));
        assert_eq!(read(home.path(), "U"), None);
        assert_eq!(read(home.path(), "missing"), None);
    }

    #[test]
    fn the_lanes_environment_says_where_codex_lives() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        assert_eq!(
            codex_home(&env(&[("CODEX_HOME", "/c"), ("HOME", "/h")])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            codex_home(&env(&[("HOME", "/h")])),
            Some(PathBuf::from("/h/.codex"))
        );
    }
}
