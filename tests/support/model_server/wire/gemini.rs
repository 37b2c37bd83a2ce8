//! Gemini (`POST …/v1beta/models/{model}:streamGenerateContent?alt=sse` and
//! `:generateContent`): Gemini CLI, and pi's `google-generative-ai` providers.

use serde_json::{Value, json};

use super::{Ctx, Turn, sse};
use crate::model_server::{USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS};

fn usage() -> Value {
    json!({
        "promptTokenCount": USAGE_INPUT_TOKENS,
        "candidatesTokenCount": USAGE_OUTPUT_TOKENS,
        "totalTokenCount": USAGE_INPUT_TOKENS + USAGE_OUTPUT_TOKENS,
    })
}

/// One `GenerateContentResponse` with `parts`; `last` carries the finish.
fn piece(ctx: &Ctx, parts: Value, last: bool) -> Value {
    let mut candidate = json!({ "content": { "role": "model", "parts": parts }, "index": 0 });
    if last {
        candidate["finishReason"] = "STOP".into();
    }
    json!({ "candidates": [candidate], "usageMetadata": usage(), "modelVersion": ctx.model,
            "responseId": format!("fake-{}", ctx.seq) })
}

fn call_part(turn: &Turn) -> Option<Value> {
    let Turn::Call(call) = turn else { return None };
    Some(json!([{ "functionCall": { "name": call.name, "args": call.input.as_json() } }]))
}

pub(super) fn stream(ctx: &Ctx, turn: &Turn) -> Vec<String> {
    match turn {
        Turn::Text(chunks) => chunks
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let last = i + 1 == chunks.len();
                sse(None, &piece(ctx, json!([{ "text": text }]), last))
            })
            .collect(),
        Turn::Call(_) => vec![sse(None, &whole(ctx, turn))],
    }
}

pub(super) fn whole(ctx: &Ctx, turn: &Turn) -> Value {
    let parts = call_part(turn).unwrap_or_else(|| json!([{ "text": turn.full_text() }]));
    piece(ctx, parts, true)
}

pub(super) fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    };
    json!({ "error": { "code": status, "message": message, "status": kind } })
}
