//! Claude-style `stream-json` output, which Claude Code (`--output-format
//! stream-json --verbose`) and Qwen Code (`-o stream-json`) both print: one
//! parser for both, with each CLI's quirks as a [`Flavor`].
//!
//! Lines: `system` (`init` with the session id, `api_retry`), `assistant`
//! (text and `tool_use` blocks), `user` (`tool_result` blocks), and one
//! final `result` with the answer, usage, cost and whether it failed.

use std::collections::HashMap;

use flotilla_actors::lane::Usage;
use flotilla_actors::lane::events::EventKind;
use serde_json::Value;

use super::common::{
    Tally, at, bool_at, message, parse, str_at, stray, text_of, tool_call, tool_result, u64_at,
};
use super::context_windows::ModelWindow;
use super::{Outcome, TurnParser};

/// Which CLI prints the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavor {
    /// Claude Code: an API error is a `<synthetic>` assistant message and
    /// `result.is_error`; cost and the context window are in `result`.
    Claude,
    /// Qwen Code: an API error is a *successful* result whose text starts
    /// with `[API Error:`; no cost; the context window is the model
    /// table's.
    Qwen,
}

/// Qwen's marker of an API error in a successful result.
const QWEN_API_ERROR: &str = "[API Error:";

/// Parses one turn of `stream-json`.
#[derive(Debug)]
pub(super) struct StreamJsonParser {
    flavor: Flavor,
    tally: Tally,
    /// Text of the last assistant message (the answer if no result comes).
    last_text: Option<String>,
    /// Tokens in the context at the last model call, for the used share.
    last_call_tokens: u64,
    /// The result's error says nothing but its subtype: stderr tells more.
    vague_error: bool,
    /// This turn's model calls so far: each message's latest usage, by
    /// message id. Qwen's `result.usage` counts the whole session on a
    /// resume, so its turn usage is their sum; for both CLIs the sum is
    /// the usage of a turn that ended without a result (stopped, lost).
    calls: HashMap<String, Usage>,
    /// The model and its window from the model table: Qwen's output tells
    /// no window, Claude's only in its result.
    window: ModelWindow,
}

impl StreamJsonParser {
    /// A parser for `flavor`, with its lane's model and the model table.
    pub(super) fn new(flavor: Flavor, window: ModelWindow) -> Self {
        Self {
            flavor,
            tally: Tally::default(),
            last_text: None,
            last_call_tokens: 0,
            vague_error: false,
            calls: HashMap::new(),
            window,
        }
    }

    fn system(&mut self, v: &Value) -> Vec<EventKind> {
        self.window.saw(str_at(v, &["model"]));
        if str_at(v, &["subtype"]) != Some("api_retry") {
            return Vec::new();
        }
        let status = at(v, &["error_status"]).map_or("-".to_owned(), Value::to_string);
        vec![EventKind::Note {
            text: format!(
                "API error {status} ({}); retry {} of {}",
                str_at(v, &["error"]).unwrap_or("unknown"),
                u64_at(v, &["attempt"]),
                u64_at(v, &["max_retries"]),
            ),
        }]
    }

    fn assistant(&mut self, v: &Value) -> Vec<EventKind> {
        let msg = at(v, &["message"]).unwrap_or(&Value::Null);
        let synthetic = str_at(msg, &["model"]) == Some("<synthetic>");
        let mut events = Vec::new();
        if !synthetic && at(msg, &["usage"]).is_some() && self.count_call(msg) {
            events.push(self.tally.usage_event());
        }
        let api_error = synthetic && at(v, &["error"]).is_some();
        for block in blocks(msg) {
            match str_at(block, &["type"]) {
                Some("text") => {
                    let text = str_at(block, &["text"]).unwrap_or("");
                    if api_error || self.is_qwen_error(text) {
                        events.extend(self.tally.fail(text));
                    } else {
                        events.extend(message(text));
                    }
                    self.last_text = Some(text.to_owned());
                }
                Some("tool_use") => events.push(tool_call(
                    str_at(block, &["name"]).unwrap_or("?"),
                    str_at(block, &["id"]),
                    at(block, &["input"]),
                )),
                _ => {}
            }
        }
        events
    }

    fn user(&mut self, v: &Value) -> Vec<EventKind> {
        let msg = at(v, &["message"]).unwrap_or(&Value::Null);
        let mut events = Vec::new();
        for block in blocks(msg) {
            match str_at(block, &["type"]) {
                Some("tool_result") => events.push(tool_result(
                    str_at(block, &["tool_use_id"]),
                    bool_at(block, &["is_error"]),
                    &text_of(at(block, &["content"])),
                )),
                Some("text") => {
                    let text = str_at(block, &["text"]).unwrap_or("");
                    if text.starts_with("[Request interrupted") {
                        events.push(EventKind::Note {
                            text: text.to_owned(),
                        });
                    }
                }
                _ => {}
            }
        }
        events
    }

    fn result(&mut self, v: &Value) -> Vec<EventKind> {
        self.tally.ended = true;
        let text = str_at(v, &["result"]);
        if let Some(t) = text {
            self.tally.result = Some(t.to_owned());
        }
        self.usage(v);
        let mut events = vec![self.tally.usage_event()];
        if let Some(denied) = denials(v) {
            events.push(EventKind::Note {
                text: format!("permission denied for: {denied}"),
            });
        }
        let subtype = str_at(v, &["subtype"]).unwrap_or("success");
        let qwen_error = text.is_some_and(|t| self.is_qwen_error(t));
        if bool_at(v, &["is_error"]) || subtype != "success" || qwen_error {
            let why = match text.filter(|t| !t.trim().is_empty()) {
                Some(t) => t.to_owned(),
                None => {
                    self.vague_error = true;
                    match str_at(v, &["terminal_reason"]) {
                        Some(r) => format!("{subtype} ({r})"),
                        None => subtype.to_owned(),
                    }
                }
            };
            events.extend(self.tally.fail(&why));
        }
        events
    }

    /// Records one model call's usage (the latest for its message id):
    /// the context it filled, and the turn's usage as their sum; true
    /// when that changed.
    fn count_call(&mut self, msg: &Value) -> bool {
        let id = str_at(msg, &["id"]).unwrap_or_default().to_owned();
        let read = u64_at(msg, &["usage", "cache_read_input_tokens"]);
        let input = u64_at(msg, &["usage", "input_tokens"]);
        let call = Usage {
            input: match self.flavor {
                Flavor::Claude => {
                    input + read + u64_at(msg, &["usage", "cache_creation_input_tokens"])
                }
                // Qwen's input tokens already hold the cached ones.
                Flavor::Qwen => input,
            },
            output: u64_at(msg, &["usage", "output_tokens"]),
            cached: read,
        };
        self.last_call_tokens = call.input + call.output;
        self.window.saw(str_at(msg, &["model"]));
        self.tally
            .context(self.last_call_tokens, self.window.tokens());
        if self.calls.insert(id, call) == Some(call) {
            return false;
        }
        self.tally.usage = Usage::default();
        for c in self.calls.values() {
            self.tally.usage += *c;
        }
        true
    }

    fn usage(&mut self, v: &Value) {
        let read = u64_at(v, &["usage", "cache_read_input_tokens"]);
        let created = u64_at(v, &["usage", "cache_creation_input_tokens"]);
        self.tally.usage = match self.flavor {
            Flavor::Qwen if !self.calls.is_empty() => self.tally.usage,
            Flavor::Qwen => Usage {
                input: u64_at(v, &["usage", "input_tokens"]),
                output: u64_at(v, &["usage", "output_tokens"]),
                cached: read,
            },
            Flavor::Claude => Usage {
                input: u64_at(v, &["usage", "input_tokens"]) + created + read,
                output: u64_at(v, &["usage", "output_tokens"]),
                cached: read,
            },
        };
        self.tally.cost_usd = at(v, &["total_cost_usd"]).and_then(Value::as_f64);
        if self.calls.is_empty() {
            // No model call reported its own usage: the result's.
            self.last_call_tokens = self.tally.usage.input + self.tally.usage.output;
        }
        // Claude tells the window in its result; else the model table's.
        let told = at(v, &["modelUsage"])
            .and_then(Value::as_object)
            .and_then(|m| m.values().map(|u| u64_at(u, &["contextWindow"])).max())
            .filter(|w| *w > 0);
        let window = told.unwrap_or_else(|| self.window.tokens());
        self.tally.context(self.last_call_tokens, window);
    }

    fn is_qwen_error(&self, text: &str) -> bool {
        self.flavor == Flavor::Qwen && text.trim_start().starts_with(QWEN_API_ERROR)
    }
}

/// The content blocks of a message.
fn blocks(msg: &Value) -> impl Iterator<Item = &Value> {
    at(msg, &["content"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The tools whose use was refused, if any.
fn denials(v: &Value) -> Option<String> {
    let names: Vec<&str> = at(v, &["permission_denials"])?
        .as_array()?
        .iter()
        .filter_map(|d| str_at(d, &["tool_name"]))
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

impl TurnParser for StreamJsonParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        let Some(v) = parse(line) else {
            return stray(line);
        };
        if let Some(id) = str_at(&v, &["session_id"]) {
            self.tally.session = Some(id.to_owned());
        }
        match str_at(&v, &["type"]) {
            Some("system") => self.system(&v),
            Some("assistant") => self.assistant(&v),
            Some("user") => self.user(&v),
            Some("result") => self.result(&v),
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        if self.tally.result.is_none() {
            self.tally.result = self.last_text.clone();
        }
        let mut outcome = self.tally.outcome(exit, stderr_tail);
        let last = super::tail(stderr_tail, 512);
        if self.vague_error && !last.is_empty() {
            outcome.error = outcome.error.map(|e| format!("{e}: {last}"));
        }
        outcome
    }
}
