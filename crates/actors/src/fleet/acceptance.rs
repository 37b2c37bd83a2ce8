//! The daemon's literal acceptance of a step: what it found on disk and
//! what the author's checks did, judged against the task. No model takes
//! part and nothing here touches the disk: the host reads the files and
//! runs the checks, then hands the facts to [`judge`].

use serde::{Deserialize, Serialize};

use super::task::{Artifact, Check, Task};

/// How much of a check's output is kept as evidence or as a reason.
pub const TAIL_CHARS: usize = 2_000;

/// What the daemon found at one artifact's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactSeen {
    /// Nothing is there.
    Missing,
    /// Something is there but cannot be read as text (a directory, a
    /// symlink out of the fleet's directory, invalid UTF-8, too large).
    Unreadable(String),
    /// The file's text.
    Text(String),
}

/// What one of the author's checks did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckRan {
    /// The command line.
    pub run: String,
    /// Its exit code; `None` when it was killed (by a signal or the
    /// fleet's timeout) or could not start.
    pub exit: Option<i32>,
    /// It ran past the fleet's timeout and was killed.
    pub timed_out: bool,
    /// The last [`TAIL_CHARS`] characters of its stdout and stderr.
    pub tail: String,
}

/// One reason a step was not accepted, exact enough to act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shortfall {
    /// The artifact does not exist.
    Missing {
        /// Its path.
        path: String,
    },
    /// The artifact cannot be read as text.
    Unreadable {
        /// Its path.
        path: String,
        /// Why.
        why: String,
    },
    /// The artifact is shorter than required.
    TooShort {
        /// Its path.
        path: String,
        /// Characters it holds.
        chars: usize,
        /// Characters required.
        min_chars: usize,
    },
    /// The artifact lacks a required string.
    Lacks {
        /// Its path.
        path: String,
        /// The missing string.
        needle: String,
    },
    /// A check did not exit 0.
    CheckFailed {
        /// The command line.
        run: String,
        /// Its exit code, if it exited.
        exit: Option<i32>,
        /// It was killed at the fleet's timeout.
        timed_out: bool,
        /// The tail of its output.
        tail: String,
    },
    /// The member's turn did not complete (a fleet step only).
    TurnFailed {
        /// The lane's error class, when it has one.
        class: Option<String>,
        /// What the lane said.
        error: String,
    },
    /// The supervisor's plan could not be followed (a fleet's plan only).
    BadPlan {
        /// What was wrong with it, and what a good plan holds.
        why: String,
    },
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing { path } => write!(f, "{path} does not exist"),
            Self::Unreadable { path, why } => write!(f, "{path} cannot be read: {why}"),
            Self::TooShort {
                path,
                chars,
                min_chars,
            } => write!(
                f,
                "{path} has {chars} characters; at least {min_chars} are required"
            ),
            Self::Lacks { path, needle } => write!(f, "{path} does not contain {needle:?}"),
            Self::CheckFailed {
                run,
                exit,
                timed_out,
                tail,
            } => {
                match (timed_out, exit) {
                    (true, _) => write!(f, "`{run}` ran past the fleet's timeout")?,
                    (false, Some(code)) => write!(f, "`{run}` exited {code}")?,
                    (false, None) => write!(f, "`{run}` was killed or could not start")?,
                }
                if tail.is_empty() {
                    Ok(())
                } else {
                    write!(f, "; its output ends with:\n{tail}")
                }
            }
            Self::TurnFailed { class, error } => match class {
                Some(class) => write!(f, "the turn failed ({class}): {error}"),
                None => write!(f, "the turn failed: {error}"),
            },
            Self::BadPlan { why } => write!(f, "the plan cannot be followed: {why}"),
        }
    }
}

/// What was found for one accepted artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArtifactEvidence {
    /// Its path.
    pub path: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Its size in characters.
    pub chars: usize,
}

/// What an accepted step is recorded with.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// Every artifact, as found.
    pub artifacts: Vec<ArtifactEvidence>,
    /// Every check, with its output's tail.
    pub checks: Vec<CheckRan>,
}

/// The daemon's decision on one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every artifact and every check holds.
    Accepted(Evidence),
    /// At least one does not; every reason is listed.
    Bounced(Vec<Shortfall>),
}

impl Verdict {
    /// Every artifact of `task` unreadable for one reason (the place they
    /// are in could not be looked at).
    pub fn unreadable(task: &Task, why: &str) -> Self {
        Verdict::Bounced(
            task.artifacts
                .iter()
                .map(|a| Shortfall::Unreadable {
                    path: a.path.clone(),
                    why: why.to_owned(),
                })
                .collect(),
        )
    }
}

/// Judges a step: `seen` holds what was found at each of `task`'s
/// artifacts (in the same order) and `ran` what each of its checks did.
/// A fact missing from either counts as a failure, never as a pass.
pub fn judge(task: &Task, seen: &[ArtifactSeen], ran: &[CheckRan]) -> Verdict {
    let mut shortfalls = Vec::new();
    let mut evidence = Evidence::default();
    for (i, artifact) in task.artifacts.iter().enumerate() {
        let found = seen.get(i).unwrap_or(&ArtifactSeen::Missing);
        match judge_artifact(artifact, found) {
            Ok(e) => evidence.artifacts.push(e),
            Err(mut s) => shortfalls.append(&mut s),
        }
    }
    for (i, check) in task.checks.iter().enumerate() {
        match ran.get(i) {
            Some(r) if r.exit == Some(0) && !r.timed_out && r.run == check.run => {
                evidence.checks.push(r.clone());
            }
            Some(r) => shortfalls.push(failed(check, r)),
            None => shortfalls.push(Shortfall::CheckFailed {
                run: check.run.clone(),
                exit: None,
                timed_out: false,
                tail: "the check did not run".to_owned(),
            }),
        }
    }
    if shortfalls.is_empty() {
        Verdict::Accepted(evidence)
    } else {
        Verdict::Bounced(shortfalls)
    }
}

fn failed(check: &Check, ran: &CheckRan) -> Shortfall {
    Shortfall::CheckFailed {
        run: check.run.clone(),
        exit: ran.exit,
        timed_out: ran.timed_out,
        tail: ran.tail.clone(),
    }
}

fn judge_artifact(
    artifact: &Artifact,
    seen: &ArtifactSeen,
) -> Result<ArtifactEvidence, Vec<Shortfall>> {
    let path = artifact.path.clone();
    let text = match seen {
        ArtifactSeen::Missing => return Err(vec![Shortfall::Missing { path }]),
        ArtifactSeen::Unreadable(why) => {
            let why = why.clone();
            return Err(vec![Shortfall::Unreadable { path, why }]);
        }
        ArtifactSeen::Text(text) => text,
    };
    let chars = text.chars().count();
    let mut shortfalls = Vec::new();
    if chars < artifact.min_chars {
        shortfalls.push(Shortfall::TooShort {
            path: path.clone(),
            chars,
            min_chars: artifact.min_chars,
        });
    }
    for needle in &artifact.contains {
        if !text.contains(needle.as_str()) {
            shortfalls.push(Shortfall::Lacks {
                path: path.clone(),
                needle: needle.clone(),
            });
        }
    }
    if shortfalls.is_empty() {
        Ok(ArtifactEvidence {
            path,
            bytes: text.len(),
            chars,
        })
    } else {
        Err(shortfalls)
    }
}

/// The last `TAIL_CHARS` characters of `output`, cut at a character
/// boundary.
pub fn tail(output: &str) -> String {
    let count = output.chars().count();
    output
        .chars()
        .skip(count.saturating_sub(TAIL_CHARS))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn task() -> Task {
        Task::parse(
            r#"{"goal": "g", "artifacts": [{"path": "r.md", "min_chars": 10, "contains": ["Conclusion", "Sources"]}],
                "checks": [{"run": "make test"}]}"#,
        )
        .unwrap()
    }

    fn passed() -> CheckRan {
        CheckRan {
            run: "make test".into(),
            exit: Some(0),
            timed_out: false,
            tail: "ok".into(),
        }
    }

    #[test]
    fn every_shortfall_is_listed_with_its_reason() {
        let seen = [ArtifactSeen::Text("Conclusion".into())];
        let ran = [CheckRan {
            exit: Some(2),
            tail: "1 test failed".into(),
            ..passed()
        }];
        let Verdict::Bounced(why) = judge(&task(), &seen, &ran) else {
            panic!("bounced")
        };
        let text: Vec<String> = why.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "r.md does not contain \"Sources\"",
                "`make test` exited 2; its output ends with:\n1 test failed",
            ]
        );
        let short = [ArtifactSeen::Text(
            "Conclusion Sources".chars().take(9).collect(),
        )];
        let Verdict::Bounced(why) = judge(&task(), &short, &[passed()]) else {
            panic!("bounced")
        };
        assert!(
            why.iter()
                .any(|s| matches!(s, Shortfall::TooShort { chars: 9, .. }))
        );
    }

    #[test]
    fn characters_not_bytes_are_counted() {
        let t =
            Task::parse(r#"{"goal": "g", "artifacts": [{"path": "a", "min_chars": 3}]}"#).unwrap();
        assert!(matches!(
            judge(&t, &[ArtifactSeen::Text("éé".into())], &[]),
            Verdict::Bounced(_)
        ));
        let Verdict::Accepted(e) = judge(&t, &[ArtifactSeen::Text("ééé".into())], &[]) else {
            panic!("accepted")
        };
        assert_eq!((e.artifacts[0].bytes, e.artifacts[0].chars), (6, 3));
    }

    #[test]
    fn a_missing_fact_is_a_failure_never_a_pass() {
        let Verdict::Bounced(why) = judge(&task(), &[], &[]) else {
            panic!("bounced")
        };
        assert_eq!(why.len(), 2, "{why:?}");
        let timed_out = CheckRan {
            timed_out: true,
            ..passed()
        };
        let seen = [ArtifactSeen::Text("Conclusion Sources".into())];
        assert!(matches!(
            judge(&task(), &seen, &[timed_out]),
            Verdict::Bounced(_)
        ));
        let other = CheckRan {
            run: "true".into(),
            ..passed()
        };
        assert!(
            matches!(judge(&task(), &seen, &[other]), Verdict::Bounced(_)),
            "a result for another command does not count"
        );
        let Verdict::Accepted(e) = judge(&task(), &seen, &[passed()]) else {
            panic!("accepted")
        };
        assert_eq!(e.checks[0].tail, "ok");
    }

    #[test]
    fn the_tail_keeps_the_end_at_a_character_boundary() {
        let long = "é".repeat(TAIL_CHARS + 5) + "end";
        let t = tail(&long);
        assert_eq!(t.chars().count(), TAIL_CHARS);
        assert!(t.ends_with("end"));
    }
}
