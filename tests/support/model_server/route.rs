//! What to answer: a request is classified by method and path into a model
//! turn of one wire API or a side request (probe, model list, token count);
//! a model turn turns the next scripted [`Reply`] into that API's frames.
//! Pure, apart from taking the reply and recording the request in `Shared`.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::RawRequest;
use super::tools::{self, Offered};
use super::wire::{self, Turn};
use super::{Api, RecordedRequest, Reply, Shared};

/// A response, before it is written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) body: Body,
}

/// A response body.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Body {
    Empty,
    /// One JSON document, sent after `delay`.
    Json {
        value: Value,
        delay: Duration,
    },
    /// Server-sent events, each frame complete (`data: …\n\n`), with `gap`
    /// before each.
    Sse {
        frames: Vec<String>,
        gap: Duration,
    },
}

impl Response {
    fn json(status: u16, value: Value) -> Self {
        Self {
            status,
            body: Body::Json {
                value,
                delay: Duration::ZERO,
            },
        }
    }
}

/// What a request is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// A model turn: takes a reply.
    Model {
        api: Api,
        stream: bool,
        model: String,
    },
    /// Anything else, answered at once.
    Side(Response),
}

/// Records `request`, takes a reply if it is a model turn, and answers.
pub(super) fn handle(shared: &Shared, request: RawRequest) -> Response {
    let (path, query) = match request.target.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (request.target.clone(), None),
    };
    let body = parse_body(&request.body);
    let kind = classify(&request.method, &path, &body);
    let (api, reply, response) = match kind {
        Kind::Side(response) => (None, None, response),
        Kind::Model { api, stream, model } => {
            let reply = shared.next_reply(|r| offers(api, &body, r));
            let seq = shared.lock().log.len() as u64 + 1;
            let turn = Ctx {
                api,
                stream,
                model,
                seq,
            };
            let response = answer(&turn, &body, &reply);
            (Some(api), Some(reply), response)
        }
    };
    shared.record(RecordedRequest {
        method: request.method,
        path,
        query,
        headers: request.headers,
        body,
        api,
        reply,
    });
    response
}

fn parse_body(raw: &[u8]) -> Value {
    if raw.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(raw).into_owned()))
}

/// Classifies a request by method and path (any prefix before the API's own
/// path is accepted).
pub(super) fn classify(method: &str, path: &str, body: &Value) -> Kind {
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = || {
        body.get("model")
            .and_then(Value::as_str)
            .unwrap_or("fake-model")
            .to_owned()
    };
    if method == "HEAD" {
        return Kind::Side(Response {
            status: 200,
            body: Body::Empty,
        });
    }
    if method == "GET" {
        return Kind::Side(get(path));
    }
    if method != "POST" {
        return Kind::Side(not_found(method, path));
    }
    if path.ends_with("/messages/count_tokens") {
        return Kind::Side(Response::json(200, json!({ "input_tokens": 11 })));
    }
    if path.ends_with("/messages") {
        let (api, model) = (Api::Anthropic, model());
        return Kind::Model { api, stream, model };
    }
    if path.ends_with("/responses") {
        // Codex always streams; a request that says nothing gets SSE.
        let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(true);
        let (api, model) = (Api::Responses, model());
        return Kind::Model { api, stream, model };
    }
    if path.ends_with("/chat/completions") {
        let (api, model) = (Api::Chat, model());
        return Kind::Model { api, stream, model };
    }
    if let Some((model, verb)) = gemini_target(path) {
        // The SDKs always ask `streamGenerateContent?alt=sse`: it gets SSE.
        return match verb {
            "countTokens" => Kind::Side(Response::json(200, json!({ "totalTokens": 11 }))),
            "streamGenerateContent" | "generateContent" => Kind::Model {
                api: Api::Gemini,
                stream: verb == "streamGenerateContent",
                model: model.to_owned(),
            },
            _ => Kind::Side(not_found(method, path)),
        };
    }
    Kind::Side(not_found(method, path))
}

/// `(model, verb)` of `…/models/{model}:{verb}`.
fn gemini_target(path: &str) -> Option<(&str, &str)> {
    let (_, last) = path.rsplit_once("/models/")?;
    last.split_once(':')
}

/// GET: model lists (OpenAI, Anthropic and Gemini shapes), 404 otherwise.
fn get(path: &str) -> Response {
    let trimmed = path.trim_end_matches('/');
    if trimmed.contains("/v1beta") && trimmed.ends_with("/models") {
        return Response::json(
            200,
            json!({ "models": [{ "name": "models/gemini-2.5-flash", "displayName": "Fake" }] }),
        );
    }
    if trimmed.ends_with("/models") {
        return Response::json(
            200,
            json!({
                "object": "list",
                "data": [{ "id": "fake-model", "object": "model", "type": "model",
                           "created": 0, "owned_by": "model-server", "display_name": "Fake",
                           "created_at": "2025-01-01T00:00:00Z" }],
                "has_more": false, "first_id": "fake-model", "last_id": "fake-model",
            }),
        );
    }
    if trimmed.is_empty() {
        return Response::json(200, json!({}));
    }
    not_found("GET", path)
}

fn not_found(method: &str, path: &str) -> Response {
    Response::json(
        404,
        json!({ "error": { "message": format!("model-server: no route for {method} {path}"),
                           "type": "not_found_error", "code": 404, "status": "NOT_FOUND" } }),
    )
}

/// A model turn's particulars.
#[derive(Debug, Clone)]
pub(super) struct Ctx {
    pub(super) api: Api,
    pub(super) stream: bool,
    /// The model the request named (echoed back).
    pub(super) model: String,
    /// This request's number, for unique ids.
    pub(super) seq: u64,
}

/// Whether the request offers the tool `reply` calls (a reply that calls
/// none fits any request).
fn offers(api: Api, body: &Value, reply: &Reply) -> bool {
    let offered = Offered::from_request(api, body);
    match reply {
        Reply::WriteFile { path, content } => tools::write_file(&offered, path, content).is_ok(),
        Reply::Shell { command } => tools::shell(&offered, command).is_ok(),
        Reply::McpTool { server, name, args } => tools::mcp(&offered, server, name, args).is_ok(),
        _ => true,
    }
}

/// The response to a model turn of `ctx` whose request body is `body`.
pub(super) fn answer(ctx: &Ctx, body: &Value, reply: &Reply) -> Response {
    let offered = || Offered::from_request(ctx.api, body);
    let (turn, pace) = match reply {
        Reply::HttpError { status, message } => {
            return Response::json(*status, wire::error(ctx.api, *status, message));
        }
        Reply::Text(text) => (Turn::text(text), Duration::ZERO),
        Reply::Slow { text, chunk_delay } => (Turn::words(text), *chunk_delay),
        Reply::WriteFile { path, content } => (
            tools::write_file(&offered(), path, content).map_or_else(Turn::text, Turn::Call),
            Duration::ZERO,
        ),
        Reply::Shell { command } => (
            tools::shell(&offered(), command).map_or_else(Turn::text, Turn::Call),
            Duration::ZERO,
        ),
        Reply::Tool { name, args } => (
            Turn::Call(tools::named(&offered(), name, args)),
            Duration::ZERO,
        ),
        Reply::McpTool { server, name, args } => (
            tools::mcp(&offered(), server, name, args).map_or_else(Turn::text, Turn::Call),
            Duration::ZERO,
        ),
    };
    let body = if ctx.stream {
        Body::Sse {
            frames: wire::stream(ctx, &turn),
            gap: pace,
        }
    } else {
        Body::Json {
            value: wire::whole(ctx, &turn),
            delay: pace * turn.chunk_count(),
        }
    };
    Response { status: 200, body }
}
