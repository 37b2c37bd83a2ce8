//! A fleet's task and its own definition of done: the artifacts it must
//! produce and the commands (from the task's author only) that must pass.
//! Parsing refuses what the daemon could not check safely: a path that
//! leaves the fleet's directory, an empty check, an unknown field.

use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

/// The most artifacts and checks one task may declare.
pub const MAX_ITEMS: usize = 64;

/// One task, as its author wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// What the fleet is to achieve, in the author's words.
    pub goal: String,
    /// The wall-clock hours the task may take (the budget's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hours: Option<f64>,
    /// Files that must exist when the work is done.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    /// Commands that must exit 0 when the work is done.
    #[serde(default)]
    pub checks: Vec<Check>,
}

/// A file the work must produce, relative to the fleet's directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// The file's path, relative to the fleet's directory, never leaving it.
    pub path: String,
    /// The fewest characters (not bytes) the file may hold.
    #[serde(default)]
    pub min_chars: usize,
    /// Strings the file must contain, each exactly as written.
    #[serde(default)]
    pub contains: Vec<String>,
}

/// A command that must exit 0; run by the daemon, never by a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// The command line, run by `sh -c`.
    pub run: String,
    /// Where it runs, relative to the fleet's directory (default: there).
    #[serde(default = "here")]
    pub cwd: String,
}

fn here() -> String {
    ".".to_owned()
}

/// Why a task (or a supervisor's addition to one) was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The JSON did not parse or has a field the format does not know.
    #[error("the task is not valid JSON of the task format ({0}); see docs/fleets.md#tasks")]
    Format(String),
    /// The goal is empty.
    #[error("the task has no goal; say what the fleet is to achieve in \"goal\"")]
    NoGoal,
    /// `hours` is not a positive number.
    #[error("\"hours\" must be a positive number of hours, not {0}")]
    Hours(f64),
    /// A path is absolute, empty or climbs out with `..`.
    #[error(
        "{field} {path:?} must be a relative path inside the fleet's directory (no leading /, no ..)"
    )]
    Path {
        /// Which field held it.
        field: &'static str,
        /// The path as written.
        path: String,
    },
    /// A check's command is empty.
    #[error("check {0} has an empty \"run\"; give the command line to run")]
    EmptyCheck(usize),
    /// An artifact's `contains` holds an empty string.
    #[error("artifact {0:?} lists an empty string in \"contains\"")]
    EmptyNeedle(String),
    /// Too many artifacts or checks.
    #[error("the task declares {count} {what}; at most {MAX_ITEMS} are allowed")]
    TooMany {
        /// "artifacts" or "checks".
        what: &'static str,
        /// How many it declared.
        count: usize,
    },
    /// A supervisor tried to add a command to run.
    #[error(
        "a supervisor may add artifacts to check, never commands to run; only the task's author sets \"checks\""
    )]
    CommandFromSupervisor,
}

impl Task {
    /// Parses and validates a task from its JSON text.
    pub fn parse(text: &str) -> Result<Task, TaskError> {
        let task: Task =
            serde_json::from_str(text).map_err(|e| TaskError::Format(e.to_string()))?;
        task.validate()?;
        Ok(task)
    }

    /// Checks every rule of the format.
    pub fn validate(&self) -> Result<(), TaskError> {
        if self.goal.trim().is_empty() {
            return Err(TaskError::NoGoal);
        }
        if let Some(h) = self.hours
            && !(h.is_finite() && h > 0.0)
        {
            return Err(TaskError::Hours(h));
        }
        count("artifacts", self.artifacts.len())?;
        count("checks", self.checks.len())?;
        self.artifacts.iter().try_for_each(Artifact::validate)?;
        for (i, check) in self.checks.iter().enumerate() {
            if check.run.trim().is_empty() {
                return Err(TaskError::EmptyCheck(i));
            }
            inside("check cwd", &check.cwd)?;
        }
        Ok(())
    }

    /// The task with a supervisor's additions: more artifacts to check
    /// (a path already declared keeps the stricter of both), never a
    /// command. `additions` is the supervisor's JSON
    /// (`{"artifacts": [...]}`).
    pub fn with_supervisor_additions(&self, additions: &str) -> Result<Task, TaskError> {
        let value: serde_json::Value =
            serde_json::from_str(additions).map_err(|e| TaskError::Format(e.to_string()))?;
        if value.get("checks").is_some() || value.get("run").is_some() {
            return Err(TaskError::CommandFromSupervisor);
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Additions {
            artifacts: Vec<Artifact>,
        }
        let add: Additions =
            serde_json::from_value(value).map_err(|e| TaskError::Format(e.to_string()))?;
        let mut task = self.clone();
        for artifact in add.artifacts {
            artifact.validate()?;
            match task.artifacts.iter_mut().find(|a| a.path == artifact.path) {
                Some(known) => known.tighten(artifact),
                None => task.artifacts.push(artifact),
            }
        }
        count("artifacts", task.artifacts.len())?;
        Ok(task)
    }
}

impl Artifact {
    fn validate(&self) -> Result<(), TaskError> {
        inside("artifact path", &self.path)?;
        if self.contains.iter().any(String::is_empty) {
            return Err(TaskError::EmptyNeedle(self.path.clone()));
        }
        Ok(())
    }

    /// Keeps the stricter rule of `self` and `other` for the same path.
    fn tighten(&mut self, other: Artifact) {
        self.min_chars = self.min_chars.max(other.min_chars);
        for needle in other.contains {
            if !self.contains.contains(&needle) {
                self.contains.push(needle);
            }
        }
    }
}

fn count(what: &'static str, count: usize) -> Result<(), TaskError> {
    if count > MAX_ITEMS {
        return Err(TaskError::TooMany { what, count });
    }
    Ok(())
}

/// `path` is relative and never climbs out of its root.
fn inside(field: &'static str, path: &str) -> Result<(), TaskError> {
    if stays_inside(path) {
        Ok(())
    } else {
        Err(TaskError::Path {
            field,
            path: path.to_owned(),
        })
    }
}

/// Whether `path` is relative and never climbs out of the directory it
/// is relative to: not empty, no leading `/`, no `..`, no NUL.
pub fn stays_inside(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\0')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{"goal": "write the report", "hours": 4,
        "artifacts": [{"path": "worker-1/report.md", "min_chars": 800, "contains": ["Conclusion"]}],
        "checks": [{"run": "cargo test --quiet", "cwd": "."}]}"#;

    #[test]
    fn the_documented_example_parses() {
        let task = Task::parse(EXAMPLE).unwrap();
        assert_eq!(task.artifacts[0].min_chars, 800);
        assert_eq!(task.checks[0].cwd, ".");
        assert_eq!(task.hours, Some(4.0));
    }

    #[test]
    fn paths_that_leave_the_directory_are_refused() {
        for path in ["/etc/passwd", "../x", "a/../../x", "", "a/\0"] {
            let text = format!(
                r#"{{"goal": "g", "artifacts": [{{"path": {}}}]}}"#,
                serde_json::to_string(path).unwrap()
            );
            let err = Task::parse(&text).unwrap_err();
            assert!(matches!(err, TaskError::Path { .. }), "{path:?}: {err}");
        }
        let cwd = r#"{"goal": "g", "checks": [{"run": "true", "cwd": "/"}]}"#;
        assert!(matches!(
            Task::parse(cwd).unwrap_err(),
            TaskError::Path { .. }
        ));
    }

    #[test]
    fn bad_fields_are_named() {
        let unknown = Task::parse(r#"{"goal": "g", "artifact": []}"#).unwrap_err();
        assert!(unknown.to_string().contains("artifact"), "{unknown}");
        assert_eq!(Task::parse(r#"{"goal": " "}"#), Err(TaskError::NoGoal));
        assert_eq!(
            Task::parse(r#"{"goal": "g", "hours": 0}"#),
            Err(TaskError::Hours(0.0))
        );
        assert_eq!(
            Task::parse(r#"{"goal": "g", "checks": [{"run": ""}]}"#),
            Err(TaskError::EmptyCheck(0))
        );
    }

    #[test]
    fn a_supervisor_adds_artifacts_but_never_commands() {
        let task = Task::parse(EXAMPLE).unwrap();
        let refused = task.with_supervisor_additions(r#"{"checks": [{"run": "curl x | sh"}]}"#);
        assert_eq!(refused, Err(TaskError::CommandFromSupervisor));
        let smuggled =
            task.with_supervisor_additions(r#"{"artifacts": [], "extra": {"run": "x"}}"#);
        assert!(
            matches!(smuggled, Err(TaskError::Format(_))),
            "{smuggled:?}"
        );
        let more = task
            .with_supervisor_additions(
                r#"{"artifacts": [{"path": "worker-1/report.md", "min_chars": 10, "contains": ["Sources"]},
                                  {"path": "worker-2/data.csv"}]}"#,
            )
            .unwrap();
        assert_eq!(more.checks, task.checks, "the author's checks only");
        assert_eq!(more.artifacts.len(), 2);
        assert_eq!(more.artifacts[0].min_chars, 800, "the stricter bound stays");
        assert_eq!(more.artifacts[0].contains, ["Conclusion", "Sources"]);
    }
}
