//! The four wire APIs' answers: SSE frames for a streamed turn, one JSON
//! document for a whole one, and each API's own error body. Every answer
//! carries token usage ([`USAGE_INPUT_TOKENS`], [`USAGE_OUTPUT_TOKENS`]) so
//! CLIs report it.
//!
//! [`USAGE_INPUT_TOKENS`]: super::USAGE_INPUT_TOKENS
//! [`USAGE_OUTPUT_TOKENS`]: super::USAGE_OUTPUT_TOKENS

mod anthropic;
mod chat;
mod gemini;
mod responses;

use serde_json::Value;

use super::Api;
use super::route::Ctx;

/// What the model says in one turn.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Turn {
    /// Text, in the chunks to stream it in (at least one).
    Text(Vec<String>),
    /// One tool call.
    Call(ToolCall),
}

/// A call of one tool.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolCall {
    pub(super) name: String,
    pub(super) input: CallInput,
}

/// A tool call's input.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum CallInput {
    /// JSON arguments (function tools).
    Json(Value),
    /// Raw text (freeform or custom tools, such as Codex's `apply_patch`).
    Freeform(String),
}

impl CallInput {
    /// The input as a JSON object (freeform text goes under `input`).
    fn as_json(&self) -> Value {
        match self {
            Self::Json(v) => v.clone(),
            Self::Freeform(text) => serde_json::json!({ "input": text }),
        }
    }

    /// The JSON arguments as a string, as OpenAI APIs carry them.
    fn as_json_string(&self) -> String {
        self.as_json().to_string()
    }
}

impl Turn {
    /// Text in one chunk.
    pub(super) fn text(text: impl Into<String>) -> Self {
        Self::Text(vec![text.into()])
    }

    /// Text in one chunk per word (spaces kept).
    pub(super) fn words(text: &str) -> Self {
        let chunks: Vec<String> = text.split_inclusive(' ').map(str::to_owned).collect();
        if chunks.is_empty() {
            return Self::text("");
        }
        Self::Text(chunks)
    }

    /// How many chunks a streamed answer paces.
    pub(super) fn chunk_count(&self) -> u32 {
        match self {
            Self::Text(chunks) => u32::try_from(chunks.len()).unwrap_or(u32::MAX),
            Self::Call(_) => 1,
        }
    }

    /// The whole text (empty for a call).
    fn full_text(&self) -> String {
        match self {
            Self::Text(chunks) => chunks.concat(),
            Self::Call(_) => String::new(),
        }
    }
}

/// The SSE frames of a streamed answer.
pub(super) fn stream(ctx: &Ctx, turn: &Turn) -> Vec<String> {
    match ctx.api {
        Api::Anthropic => anthropic::stream(ctx, turn),
        Api::Responses => responses::stream(ctx, turn),
        Api::Chat => chat::stream(ctx, turn),
        Api::Gemini => gemini::stream(ctx, turn),
    }
}

/// The JSON document of a whole (non-streamed) answer.
pub(super) fn whole(ctx: &Ctx, turn: &Turn) -> Value {
    match ctx.api {
        Api::Anthropic => anthropic::whole(ctx, turn),
        Api::Responses => responses::whole(ctx, turn),
        Api::Chat => chat::whole(ctx, turn),
        Api::Gemini => gemini::whole(ctx, turn),
    }
}

/// An error body in `api`'s shape.
pub(super) fn error(api: Api, status: u16, message: &str) -> Value {
    match api {
        Api::Anthropic => anthropic::error(status, message),
        Api::Responses | Api::Chat => chat::error(status, message),
        Api::Gemini => gemini::error(status, message),
    }
}

/// One SSE frame; `event` `None` gives a data-only frame.
fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// A data-only SSE frame whose data is `raw` as is.
fn sse_raw(raw: &str) -> String {
    format!("data: {raw}\n\n")
}
