//! OpenAI Chat Completions (`POST …/chat/completions`): Qwen Code, pi and
//! opencode stream it; Grok CLI asks for whole answers. Also the error shape
//! of the Responses API.

use serde_json::{Value, json};

use super::{Ctx, Turn, sse, sse_raw};
use crate::model_server::{USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS};

/// Fixed so answers are reproducible.
const CREATED: u64 = 1_700_000_000;

fn usage() -> Value {
    json!({
        "prompt_tokens": USAGE_INPUT_TOKENS,
        "completion_tokens": USAGE_OUTPUT_TOKENS,
        "total_tokens": USAGE_INPUT_TOKENS + USAGE_OUTPUT_TOKENS,
    })
}

fn finish_reason(turn: &Turn) -> &'static str {
    match turn {
        Turn::Text(_) => "stop",
        Turn::Call(_) => "tool_calls",
    }
}

fn chunk(ctx: &Ctx, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": format!("chatcmpl-fake-{}", ctx.seq), "object": "chat.completion.chunk",
        "created": CREATED, "model": ctx.model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    })
}

fn tool_call(ctx: &Ctx, turn: &Turn) -> Option<Value> {
    let Turn::Call(call) = turn else { return None };
    Some(json!({
        "id": format!("call_fake_{}", ctx.seq), "type": "function",
        "function": { "name": call.name, "arguments": call.input.as_json_string() },
    }))
}

pub(super) fn stream(ctx: &Ctx, turn: &Turn) -> Vec<String> {
    let mut frames = Vec::new();
    match turn {
        Turn::Text(chunks) => {
            for (i, text) in chunks.iter().enumerate() {
                let delta = if i == 0 {
                    json!({ "role": "assistant", "content": text })
                } else {
                    json!({ "content": text })
                };
                frames.push(sse(None, &chunk(ctx, delta, None)));
            }
        }
        Turn::Call(_) => {
            let mut call = tool_call(ctx, turn).unwrap_or_default();
            call["index"] = 0.into();
            let delta = json!({ "role": "assistant", "content": null, "tool_calls": [call] });
            frames.push(sse(None, &chunk(ctx, delta, None)));
        }
    }
    let mut last = chunk(ctx, json!({}), Some(finish_reason(turn)));
    last["usage"] = usage();
    frames.push(sse(None, &last));
    frames.push(sse_raw("[DONE]"));
    frames
}

pub(super) fn whole(ctx: &Ctx, turn: &Turn) -> Value {
    let message = match tool_call(ctx, turn) {
        Some(call) => json!({ "role": "assistant", "content": null, "tool_calls": [call] }),
        None => json!({ "role": "assistant", "content": turn.full_text() }),
    };
    json!({
        "id": format!("chatcmpl-fake-{}", ctx.seq), "object": "chat.completion",
        "created": CREATED, "model": ctx.model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason(turn) }],
        "usage": usage(),
    })
}

/// The OpenAI error shape (Chat Completions and Responses).
pub(super) fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        400 | 404 | 413 | 422 => "invalid_request_error",
        401 | 403 => "authentication_error",
        429 => "rate_limit_error",
        _ => "server_error",
    };
    json!({ "error": { "message": message, "type": kind, "param": null, "code": null } })
}
