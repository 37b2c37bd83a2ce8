//! Tests of the model server: the pure parts (routing, tools, frames) without
//! sockets, then the whole server through a plain tokio TCP client on
//! loopback.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::http::parse_head;
use super::route::{Body, Ctx, Kind, answer, classify};
use super::tools::{Offered, add_file_patch};
use super::*;

fn ctx(api: Api, stream: bool) -> Ctx {
    Ctx {
        api,
        stream,
        model: "m".into(),
        seq: 7,
    }
}

/// The JSON documents in SSE frames (`[DONE]` skipped).
fn data_of(frames: &[String]) -> Vec<Value> {
    frames
        .iter()
        .filter_map(|f| f.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("frame data is JSON"))
        .collect()
}

fn sse_frames(body: &Body) -> (&[String], Duration) {
    match body {
        Body::Sse { frames, gap } => (frames, *gap),
        other => panic!("expected SSE, got {other:?}"),
    }
}

#[test]
fn paths_choose_the_api_and_streaming() {
    let stream = json!({ "stream": true, "model": "x" });
    let model = |k: Kind| match k {
        Kind::Model { api, stream, model } => (api, stream, model),
        Kind::Side(r) => panic!("side request: {r:?}"),
    };
    let k = classify("POST", "/v1/messages", &stream);
    assert_eq!(model(k), (Api::Anthropic, true, "x".into()));
    let k = classify("POST", "/api/v1/responses", &json!({}));
    assert_eq!(model(k).0, Api::Responses);
    let k = classify("POST", "/v1/chat/completions", &json!({}));
    assert_eq!(model(k), (Api::Chat, false, "fake-model".into()));
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
    let k = classify("POST", path, &json!({}));
    assert_eq!(model(k), (Api::Gemini, true, "gemini-2.5-flash".into()));
    let k = classify("POST", "/v1beta/models/g:generateContent", &json!({}));
    assert_eq!(model(k), (Api::Gemini, false, "g".into()));
    for (method, path) in [
        ("HEAD", "/"),
        ("GET", "/v1/models"),
        ("POST", "/v1/messages/count_tokens"),
        ("POST", "/v1beta/models/g:countTokens"),
        ("POST", "/v1/telemetry"),
    ] {
        assert!(matches!(classify(method, path, &json!({})), Kind::Side(_)));
    }
}

#[test]
fn text_streams_in_each_api_with_usage() {
    for api in [Api::Anthropic, Api::Responses, Api::Chat, Api::Gemini] {
        let r = answer(&ctx(api, true), &json!({}), &Reply::text("hello there"));
        let (frames, _) = sse_frames(&r.body);
        let all = data_of(frames)
            .iter()
            .map(Value::to_string)
            .collect::<String>();
        assert!(all.contains("hello there"), "{api:?}: {all}");
        assert!(
            all.contains("\"output_tokens\":5")
                || all.contains("\"completion_tokens\":5")
                || all.contains("\"candidatesTokenCount\":5"),
            "{api:?} carries usage: {all}"
        );
    }
    let r = answer(&ctx(Api::Chat, true), &json!({}), &Reply::text("x"));
    let (frames, _) = sse_frames(&r.body);
    assert_eq!(frames.last().map(String::as_str), Some("data: [DONE]\n\n"));
}

#[test]
fn slow_text_comes_word_by_word_with_a_gap() {
    let reply = Reply::Slow {
        text: "one two three".into(),
        chunk_delay: Duration::from_millis(30),
    };
    let r = answer(&ctx(Api::Anthropic, true), &json!({}), &reply);
    let (frames, gap) = sse_frames(&r.body);
    assert_eq!(gap, Duration::from_millis(30));
    let deltas: Vec<_> = data_of(frames)
        .into_iter()
        .filter_map(|d| d["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(deltas, ["one ", "two ", "three"]);
    let r = answer(&ctx(Api::Chat, false), &json!({}), &reply);
    let Body::Json { value, delay } = r.body else {
        panic!("json")
    };
    assert_eq!(delay, Duration::from_millis(90));
    assert_eq!(value["choices"][0]["message"]["content"], "one two three");
}

#[test]
fn write_file_uses_each_clis_own_tool_and_argument_names() {
    let path = PathBuf::from("/w/out.txt");
    let reply = Reply::WriteFile {
        path: path.clone(),
        content: "hi\n".into(),
    };
    let anthropic = json!({ "tools": [{ "name": "Write", "input_schema":
        { "properties": { "file_path": {}, "content": {} } } }] });
    let r = answer(&ctx(Api::Anthropic, false), &anthropic, &reply);
    let Body::Json { value, .. } = r.body else {
        panic!("json")
    };
    assert_eq!(value["content"][0]["name"], "Write");
    assert_eq!(value["content"][0]["input"]["file_path"], "/w/out.txt");

    let opencode = json!({ "tools": [
        { "type": "function", "function": { "name": "bash", "parameters": { "properties": { "command": {} } } } },
        { "type": "function", "function": { "name": "write", "parameters":
            { "properties": { "filePath": {}, "content": {} } } } }] });
    let r = answer(&ctx(Api::Chat, false), &opencode, &reply);
    let Body::Json { value, .. } = r.body else {
        panic!("json")
    };
    let call = &value["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "write");
    let args: Value =
        serde_json::from_str(call["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(args, json!({ "filePath": "/w/out.txt", "content": "hi\n" }));

    let codex = json!({ "tools": [{ "type": "custom", "name": "apply_patch" }] });
    let r = answer(&ctx(Api::Responses, true), &codex, &reply);
    let (frames, _) = sse_frames(&r.body);
    let done = data_of(frames)
        .into_iter()
        .find(|d| d["type"] == "response.output_item.done")
        .expect("item done");
    assert_eq!(done["item"]["type"], "custom_tool_call");
    assert_eq!(done["item"]["input"], add_file_patch("/w/out.txt", "hi\n"));

    let gemini = json!({ "tools": [{ "functionDeclarations": [{ "name": "write_file",
        "parametersJsonSchema": { "properties": { "file_path": {}, "content": {} } } }] }] });
    let r = answer(&ctx(Api::Gemini, true), &gemini, &reply);
    let (frames, _) = sse_frames(&r.body);
    let part = &data_of(frames)[0]["candidates"][0]["content"]["parts"][0];
    assert_eq!(part["functionCall"]["name"], "write_file");
    assert_eq!(part["functionCall"]["args"]["file_path"], "/w/out.txt");
}

#[test]
fn shell_and_missing_tools() {
    let codex = json!({ "tools": [{ "type": "function", "name": "exec_command",
        "parameters": { "properties": { "cmd": {}, "workdir": {} } } }] });
    let offered = Offered::from_request(Api::Responses, &codex);
    let call = tools::shell(&offered, "echo hi").expect("shell tool");
    assert_eq!(call.name, "exec_command");
    assert_eq!(
        call.input,
        wire::CallInput::Json(json!({ "cmd": "echo hi" }))
    );
    let none = Offered::from_request(Api::Chat, &json!({ "tools": [] }));
    let why = tools::write_file(&none, "/x".as_ref(), "y").expect_err("no tool");
    assert!(why.contains("no file-writing tool"), "{why}");
}

#[test]
fn http_errors_take_each_apis_shape() {
    let reply = Reply::HttpError {
        status: 400,
        message: "bad".into(),
    };
    let shape = |api| {
        let r = answer(&ctx(api, true), &json!({}), &reply);
        assert_eq!(r.status, 400);
        let Body::Json { value, .. } = r.body else {
            panic!("json")
        };
        value
    };
    assert_eq!(
        shape(Api::Anthropic)["error"]["type"],
        "invalid_request_error"
    );
    assert_eq!(shape(Api::Anthropic)["type"], "error");
    assert_eq!(shape(Api::Chat)["error"]["message"], "bad");
    assert_eq!(shape(Api::Gemini)["error"]["status"], "INVALID_ARGUMENT");
}

#[test]
fn heads_parse_incrementally() {
    let raw = b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
    assert!(parse_head(&raw[..20]).expect("partial").is_none());
    let (req, len) = parse_head(raw).expect("ok").expect("complete");
    assert_eq!(req.method, "POST");
    assert_eq!(req.target, "/v1/messages?beta=true");
    assert_eq!(req.header("content-length"), Some("2"));
    assert_eq!(&raw[len..], b"{}");
}

// ---- the whole server, over loopback TCP ----

/// A response as the test client read it.
#[derive(Debug)]
struct Got {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

/// Reads one response (length-delimited or chunked) off `stream`.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Got {
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed before a response head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf.drain(..head_end).collect()).expect("utf-8 head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .expect("status line")
        .split(' ')
        .nth(1)
        .expect("code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body_done = |buf: &[u8]| match get("content-length") {
        Some(n) => buf.len() >= n.parse::<usize>().expect("length"),
        None => buf.windows(5).any(|w| w == b"0\r\n\r\n"),
    };
    while !body_done(buf) {
        let n = stream.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed mid-body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let len = match get("content-length") {
        Some(n) => n.parse().expect("length"),
        None => buf.windows(5).position(|w| w == b"0\r\n\r\n").expect("end") + 5,
    };
    let body = String::from_utf8(buf.drain(..len).collect()).expect("utf-8 body");
    Got {
        status: status.parse().expect("status"),
        headers,
        body,
    }
}

fn post(path: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn connect(server: &ModelServer) -> TcpStream {
    TcpStream::connect(server.addr()).await.expect("connect")
}

#[tokio::test]
async fn one_connection_serves_a_script_then_the_fallback() {
    let server = ModelServer::start(
        Script::new([Reply::text("first"), Reply::text("second")]).or_else(Reply::text("rest")),
    );
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    let mut stream = connect(&server).await;
    let mut buf = Vec::new();
    stream
        .write_all(b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .expect("write");
    assert_eq!(read_response(&mut stream, &mut buf).await.status, 200);
    let streamed = json!({ "model": "m", "stream": true, "messages": [] });
    for want in ["first", "second", "rest", "rest"] {
        stream
            .write_all(&post("/v1/chat/completions", &streamed))
            .await
            .expect("write");
        let got = read_response(&mut stream, &mut buf).await;
        assert_eq!(got.status, 200);
        assert!(
            got.headers
                .contains(&("content-type".into(), "text/event-stream".into()))
        );
        assert!(
            got.body.contains(&format!("\"content\":\"{want}\"")),
            "{}",
            got.body
        );
    }
    let log = server.wait_for_model_requests(4, Duration::from_secs(5));
    assert_eq!(log[0].api, Some(Api::Chat));
    assert_eq!(log[0].body["model"], "m");
    assert_eq!(log[0].header("Content-Type"), Some("application/json"));
    assert_eq!(log[3].reply, Some(Reply::text("rest")));
    let all = server.requests();
    assert_eq!((all.len(), all[0].method.as_str()), (5, "HEAD"));
}

#[tokio::test]
async fn chunked_and_pipelined_requests_are_read() {
    let server = ModelServer::start(Script::new([Reply::text("a"), Reply::text("b")]));
    let mut stream = connect(&server).await;
    let body = json!({ "model": "g", "messages": [] }).to_string();
    let (left, right) = body.split_at(5);
    let chunked = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         {:x}\r\n{left}\r\n{:x}\r\n{right}\r\n0\r\n\r\n",
        left.len(),
        right.len()
    );
    let mut both = chunked.into_bytes();
    both.extend(post("/v1/chat/completions", &json!({ "model": "g" })));
    stream.write_all(&both).await.expect("write");
    let mut buf = Vec::new();
    let first = read_response(&mut stream, &mut buf).await;
    let second = read_response(&mut stream, &mut buf).await;
    let first: Value = serde_json::from_str(&first.body).expect("json");
    assert_eq!(first["choices"][0]["message"]["content"], "a");
    assert!(second.body.contains("\"b\""));
    let log = server.requests();
    assert_eq!(log[0].body, json!({ "model": "g", "messages": [] }));
}

#[tokio::test]
async fn unknown_paths_get_404_and_are_recorded() {
    let server = ModelServer::start(Script::new([Reply::text("kept")]));
    let mut stream = connect(&server).await;
    let mut buf = Vec::new();
    stream
        .write_all(&post("/v1/telemetry", &json!({ "e": 1 })))
        .await
        .expect("write");
    let got = read_response(&mut stream, &mut buf).await;
    assert_eq!(got.status, 404);
    stream
        .write_all(b"GET /v1/models HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .expect("write");
    let got = read_response(&mut stream, &mut buf).await;
    assert!(got.body.contains("fake-model"));
    let log = server.wait_for_requests(2, Duration::from_secs(5));
    assert_eq!(log[0].path, "/v1/telemetry");
    assert_eq!(log[0].body, json!({ "e": 1 }));
    assert!(server.model_requests().is_empty(), "no reply consumed");
}

#[tokio::test]
async fn a_slow_stream_can_be_cut_and_the_server_stops_on_drop() {
    let reply = Reply::Slow {
        text: "w ".repeat(1000),
        chunk_delay: Duration::from_millis(20),
    };
    let server = ModelServer::start(Script::new([reply, Reply::text("next")]));
    let mut stream = connect(&server).await;
    let body = json!({ "stream": true, "messages": [] });
    stream
        .write_all(&post("/v1/messages", &body))
        .await
        .expect("write");
    let mut chunk = [0u8; 4096];
    let mut seen = String::new();
    let started = Instant::now();
    while !seen.contains("text_delta") {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no delta: {seen}"
        );
        let n = stream.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed early");
        seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
    }
    drop(stream);
    // The server goes on serving others after a client hangs up mid-stream.
    let mut other = connect(&server).await;
    other
        .write_all(&post("/v1/messages", &json!({})))
        .await
        .expect("write");
    let got = read_response(&mut other, &mut Vec::new()).await;
    assert!(got.body.contains("next"), "{}", got.body);
    drop(server);
    // Dropped: the open connection is cut.
    let n = other.read(&mut chunk).await.unwrap_or(0);
    assert_eq!(n, 0);
}
