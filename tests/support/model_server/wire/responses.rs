//! OpenAI Responses (`POST …/v1/responses`): Codex.

use serde_json::{Value, json};

use super::{CallInput, Ctx, Turn, sse};
use crate::model_server::{USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS};

fn usage() -> Value {
    json!({
        "input_tokens": USAGE_INPUT_TOKENS,
        "input_tokens_details": { "cached_tokens": 0 },
        "output_tokens": USAGE_OUTPUT_TOKENS,
        "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": USAGE_INPUT_TOKENS + USAGE_OUTPUT_TOKENS,
    })
}

fn event(name: &str, mut data: Value) -> String {
    data["type"] = name.into();
    sse(Some(name), &data)
}

/// The output item of a finished turn.
fn item(ctx: &Ctx, turn: &Turn) -> Value {
    let Turn::Call(call) = turn else {
        return json!({
            "type": "message", "id": format!("msg_fake_{}", ctx.seq), "status": "completed",
            "role": "assistant",
            "content": [{ "type": "output_text", "text": turn.full_text(), "annotations": [] }],
        });
    };
    let call_id = format!("call_fake_{}", ctx.seq);
    match &call.input {
        CallInput::Freeform(input) => json!({
            "type": "custom_tool_call", "id": format!("ctc_fake_{}", ctx.seq),
            "status": "completed", "call_id": call_id, "name": call.name, "input": input,
        }),
        CallInput::Json(_) => {
            let mut item = json!({
                "type": "function_call", "id": format!("fc_fake_{}", ctx.seq),
                "status": "completed", "call_id": call_id, "name": call.name,
                "arguments": call.input.as_json_string(),
            });
            // A tool of a namespace is called by its own name in that namespace.
            if let Some((ns, name)) = call.name.rsplit_once('.') {
                item["namespace"] = ns.into();
                item["name"] = name.into();
            }
            item
        }
    }
}

fn response(ctx: &Ctx, status: &str) -> Value {
    json!({ "id": format!("resp_fake_{}", ctx.seq), "object": "response",
            "created_at": 1_700_000_000, "status": status, "model": ctx.model })
}

pub(super) fn stream(ctx: &Ctx, turn: &Turn) -> Vec<String> {
    let mut frames = vec![event(
        "response.created",
        json!({ "response": response(ctx, "in_progress") }),
    )];
    if let Turn::Text(chunks) = turn {
        let id = format!("msg_fake_{}", ctx.seq);
        let open = json!({ "type": "message", "id": id, "status": "in_progress",
                           "role": "assistant", "content": [] });
        frames.push(event(
            "response.output_item.added",
            json!({ "output_index": 0, "item": open }),
        ));
        for delta in chunks {
            frames.push(event(
                "response.output_text.delta",
                json!({ "item_id": id, "output_index": 0, "content_index": 0, "delta": delta }),
            ));
        }
    }
    frames.push(event(
        "response.output_item.done",
        json!({ "output_index": 0, "item": item(ctx, turn) }),
    ));
    let mut done = response(ctx, "completed");
    done["output"] = json!([item(ctx, turn)]);
    done["usage"] = usage();
    frames.push(event("response.completed", json!({ "response": done })));
    frames
}

pub(super) fn whole(ctx: &Ctx, turn: &Turn) -> Value {
    let mut done = response(ctx, "completed");
    done["output"] = json!([item(ctx, turn)]);
    done["usage"] = usage();
    done
}
