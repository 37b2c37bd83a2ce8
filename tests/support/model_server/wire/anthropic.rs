//! Anthropic Messages (`POST …/v1/messages`): Claude Code, and pi's
//! `anthropic-messages` providers.

use serde_json::{Value, json};

use super::{Ctx, Turn, sse};
use crate::model_server::{USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS};

fn usage(output: u64) -> Value {
    json!({
        "input_tokens": USAGE_INPUT_TOKENS,
        "output_tokens": output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    })
}

fn stop_reason(turn: &Turn) -> &'static str {
    match turn {
        Turn::Text(_) => "end_turn",
        Turn::Call(_) => "tool_use",
    }
}

fn event(name: &str, mut data: Value) -> String {
    data["type"] = name.into();
    sse(Some(name), &data)
}

pub(super) fn stream(ctx: &Ctx, turn: &Turn) -> Vec<String> {
    let message = json!({
        "id": format!("msg_fake_{}", ctx.seq), "type": "message", "role": "assistant",
        "model": ctx.model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": usage(1),
    });
    let mut frames = vec![event("message_start", json!({ "message": message }))];
    match turn {
        Turn::Text(chunks) => {
            let block = json!({ "type": "text", "text": "" });
            frames.push(event(
                "content_block_start",
                json!({ "index": 0, "content_block": block }),
            ));
            for chunk in chunks {
                let delta = json!({ "type": "text_delta", "text": chunk });
                frames.push(event(
                    "content_block_delta",
                    json!({ "index": 0, "delta": delta }),
                ));
            }
        }
        Turn::Call(call) => {
            let block = json!({ "type": "tool_use", "id": format!("toolu_fake_{}", ctx.seq),
                                "name": call.name, "input": {} });
            frames.push(event(
                "content_block_start",
                json!({ "index": 0, "content_block": block }),
            ));
            let delta = json!({ "type": "input_json_delta",
                                "partial_json": call.input.as_json_string() });
            frames.push(event(
                "content_block_delta",
                json!({ "index": 0, "delta": delta }),
            ));
        }
    }
    frames.push(event("content_block_stop", json!({ "index": 0 })));
    let delta = json!({ "stop_reason": stop_reason(turn), "stop_sequence": null });
    let usage = json!({ "output_tokens": USAGE_OUTPUT_TOKENS });
    frames.push(event(
        "message_delta",
        json!({ "delta": delta, "usage": usage }),
    ));
    frames.push(event("message_stop", json!({})));
    frames
}

pub(super) fn whole(ctx: &Ctx, turn: &Turn) -> Value {
    let content = match turn {
        Turn::Text(_) => json!([{ "type": "text", "text": turn.full_text() }]),
        Turn::Call(call) => json!([{ "type": "tool_use", "id": format!("toolu_fake_{}", ctx.seq),
                                     "name": call.name, "input": call.input.as_json() }]),
    };
    json!({
        "id": format!("msg_fake_{}", ctx.seq), "type": "message", "role": "assistant",
        "model": ctx.model, "content": content, "stop_reason": stop_reason(turn),
        "stop_sequence": null, "usage": usage(USAGE_OUTPUT_TOKENS),
    })
}

pub(super) fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({ "type": "error", "error": { "type": kind, "message": message } })
}
