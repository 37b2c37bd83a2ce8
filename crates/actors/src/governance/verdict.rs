//! The reviewer's verdict: one fixed JSON shape ([`VERDICT_SHAPE`] tells
//! the reviewer model what it is) and [`parse_verdict`], which finds that
//! object in the model's final message and checks it.
//!
//! This module owns the shape and its rules; it never decides what a
//! verdict leads to (a merge, a bounce), and never reads a file.

use serde::{Deserialize, Serialize};

/// The most blocking findings, and the most notes, a verdict may hold.
pub const MAX_ENTRIES: usize = 200;

/// The most characters one finding's text, file or note may hold.
pub const MAX_TEXT_CHARS: usize = 4_000;

/// What the reviewer model is told to return, with an example and the
/// rules [`parse_verdict`] holds it to.
pub const VERDICT_SHAPE: &str = r#"Your verdict is one JSON object of exactly this shape, with no other fields:

{"verdict": "pass" | "fail", "blocking": [{"file": "src/x.rs", "line": 12, "finding": "what is wrong and what to do instead"}], "notes": ["a remark that does not block the change"]}

Rules:
- "verdict" is "pass" or "fail".
- "fail" needs at least one entry in "blocking"; "pass" has none ("blocking": []).
- Each blocking finding gives "file", the path relative to the repository root (no leading /, no ..); "line", counted from 1; and "finding", what is wrong, not empty.
- "notes" holds remarks that do not block; it may be empty.
- At most 200 blocking findings and 200 notes; each text at most 4000 characters."#;

/// How every error ends: what the reviewer must return instead.
const RETURN: &str = r#"return one JSON object {"verdict": "pass" | "fail", "blocking": [{"file": "src/x.rs", "line": 12, "finding": "..."}], "notes": ["..."]}"#;

/// Whether the change may go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Nothing blocks the change.
    Pass,
    /// At least one finding blocks it.
    Fail,
}

/// One problem that blocks the change, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The file, relative to the repository root.
    pub file: String,
    /// The line in it, counted from 1.
    pub line: u32,
    /// What is wrong.
    pub finding: String,
}

/// The reviewer's verdict, as returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// Pass or fail.
    pub verdict: Outcome,
    /// What blocks the change: at least one on a fail, none on a pass.
    #[serde(default)]
    pub blocking: Vec<Finding>,
    /// Remarks that do not block.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Why a reviewer's reply was not accepted as a verdict. Every message
/// ends with what the reviewer must return, so it can be sent back as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerdictError {
    /// The reply holds no JSON object at all.
    #[error("the reply holds no JSON object; {RETURN}")]
    NoJson,
    /// The JSON found does not parse.
    #[error("the reply's JSON does not parse ({detail}); {RETURN}")]
    NotJson {
        /// What the JSON parser said.
        detail: String,
    },
    /// The JSON parses but is not a verdict (a missing or unknown field,
    /// a wrong type).
    #[error("the reply's JSON is not a verdict ({detail}); {RETURN}, with no other fields")]
    Shape {
        /// What the parser said.
        detail: String,
    },
    /// The outcome and the blocking findings disagree.
    #[error("the verdict contradicts itself: {detail}; {RETURN}")]
    Inconsistent {
        /// How.
        detail: String,
    },
    /// A blocking finding is unusable.
    #[error("blocking[{index}] {detail}; {RETURN}")]
    BadFinding {
        /// Its position in `blocking`, from 0.
        index: usize,
        /// What is wrong with it.
        detail: String,
    },
    /// Too many findings or notes.
    #[error(
        "the verdict lists {count} {what}; at most {MAX_ENTRIES} are allowed, so keep the most important; {RETURN}"
    )]
    TooMany {
        /// "blocking findings" or "notes".
        what: &'static str,
        /// How many it lists.
        count: usize,
    },
    /// One text is too long.
    #[error(
        "{what} is {chars} characters long; at most {MAX_TEXT_CHARS} are allowed, so shorten it; {RETURN}"
    )]
    TooLong {
        /// Which text, e.g. `blocking[2].finding` or `notes[0]`.
        what: String,
        /// Its length in characters.
        chars: usize,
    },
}

/// Finds the verdict in a reviewer's final message and checks it.
///
/// The JSON is the last ```` ```json ```` fenced block, else the last
/// untagged ```` ``` ```` block, else the last top-level `{...}` object in
/// the text that parses as JSON (braces inside JSON strings do not count).
pub fn parse_verdict(text: &str) -> Result<Verdict, VerdictError> {
    let json = find_json(text)?;
    let verdict: Verdict = serde_json::from_str(json).map_err(|e| VerdictError::Shape {
        detail: e.to_string(),
    })?;
    verdict.check()?;
    Ok(verdict)
}

impl Verdict {
    /// Checks the rules of [`VERDICT_SHAPE`] that serde cannot.
    pub fn check(&self) -> Result<(), VerdictError> {
        match (self.verdict, self.blocking.len()) {
            (Outcome::Fail, 0) => {
                return Err(inconsistent(
                    "it is \"fail\" but \"blocking\" is empty (a fail names at least one blocking finding)",
                ));
            }
            (Outcome::Pass, n) if n > 0 => {
                return Err(inconsistent(&format!(
                    "it is \"pass\" but \"blocking\" lists {n} finding(s) (a pass has none; put remarks that do not block in \"notes\")"
                )));
            }
            _ => {}
        }
        at_most("blocking findings", self.blocking.len())?;
        at_most("notes", self.notes.len())?;
        for (index, finding) in self.blocking.iter().enumerate() {
            finding.check(index)?;
        }
        for (i, note) in self.notes.iter().enumerate() {
            short(|| format!("notes[{i}]"), note)?;
        }
        Ok(())
    }
}

impl Finding {
    fn check(&self, index: usize) -> Result<(), VerdictError> {
        let bad = |detail: String| VerdictError::BadFinding { index, detail };
        if self.file.trim().is_empty() {
            return Err(bad("has an empty \"file\"".to_owned()));
        }
        if !relative(&self.file) {
            return Err(bad(format!(
                "has \"file\" {:?}, which must be relative to the repository root (no leading /, no ..)",
                self.file
            )));
        }
        if self.line == 0 {
            return Err(bad("has \"line\" 0 (lines count from 1)".to_owned()));
        }
        if self.finding.trim().is_empty() {
            return Err(bad("has an empty \"finding\"".to_owned()));
        }
        short(|| format!("blocking[{index}].file"), &self.file)?;
        short(|| format!("blocking[{index}].finding"), &self.finding)
    }
}

fn inconsistent(detail: &str) -> VerdictError {
    VerdictError::Inconsistent {
        detail: detail.to_owned(),
    }
}

fn at_most(what: &'static str, count: usize) -> Result<(), VerdictError> {
    if count > MAX_ENTRIES {
        return Err(VerdictError::TooMany { what, count });
    }
    Ok(())
}

fn short(what: impl FnOnce() -> String, text: &str) -> Result<(), VerdictError> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(VerdictError::TooLong {
            what: what(),
            chars,
        });
    }
    Ok(())
}

/// No leading `/` or `\`, no `..` component.
fn relative(path: &str) -> bool {
    !path.starts_with(['/', '\\']) && !path.split(['/', '\\']).any(|part| part == "..")
}

/// The JSON text of the verdict within the reply.
fn find_json(text: &str) -> Result<&str, VerdictError> {
    if let Some(block) = fenced(text) {
        return parses(block.trim()).map(|()| block.trim());
    }
    let objects = objects(text);
    if let Some(found) = objects.iter().rev().find(|o| parses(o).is_ok()) {
        return Ok(found);
    }
    match objects.last() {
        Some(last) => parses(last).map(|()| *last),
        None => Err(VerdictError::NoJson),
    }
}

fn parses(json: &str) -> Result<(), VerdictError> {
    serde_json::from_str::<serde::de::IgnoredAny>(json)
        .map(|_| ())
        .map_err(|e| VerdictError::NotJson {
            detail: e.to_string(),
        })
}

/// The body of the last ```` ```json ```` block, else of the last block
/// with no language; an unclosed fence is no block.
fn fenced(text: &str) -> Option<&str> {
    let blocks = fenced_blocks(text);
    let last_with = |want: fn(&str) -> bool| {
        blocks
            .iter()
            .rev()
            .find(|(info, _)| want(info))
            .map(|(_, body)| *body)
    };
    last_with(|info| info.eq_ignore_ascii_case("json")).or_else(|| last_with(str::is_empty))
}

/// Every closed fenced block: its language (the info string's first word)
/// and its body. A fence closes at a line of at least as many backticks.
fn fenced_blocks(text: &str) -> Vec<(&str, &str)> {
    let mut blocks = Vec::new();
    let mut open: Option<(&str, usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        match open {
            None if ticks >= 3 => {
                let info = trimmed[ticks..].split_whitespace().next().unwrap_or("");
                open = Some((info, ticks, offset + line.len()));
            }
            Some((info, fence, start)) if ticks >= fence && ticks == trimmed.len() => {
                blocks.push((info, &text[start..offset]));
                open = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    blocks
}

/// The top-level `{...}` objects of `text`, in order. Inside an object,
/// braces in JSON strings do not count; outside one, quotes do not either,
/// so prose around the JSON cannot hide it. A `{` never closed is skipped.
fn objects(text: &str) -> Vec<&str> {
    let mut open = Vec::new();
    let mut closed = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' if !open.is_empty() => in_string = true,
            b'{' => open.push(i),
            b'}' => closed.extend(open.pop().map(|start| (start, i))),
            _ => {}
        }
    }
    // `closed` is in order of closing: an object closes after every
    // object inside it, so each one drops the ones before it that it holds.
    let mut top: Vec<(usize, usize)> = Vec::new();
    for (start, end) in closed {
        while top.last().is_some_and(|&(inner, _)| inner > start) {
            top.pop();
        }
        top.push((start, end));
    }
    top.into_iter()
        .map(|(start, end)| &text[start..=end])
        .collect()
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
