//! A scripted model server on loopback, so tests drive the real vendor
//! coding-agent CLIs with every model call answered from a script.
//!
//! One server speaks every wire API the CLIs use, chosen by request path:
//! Anthropic Messages (`…/messages`), OpenAI Responses (`…/responses`), OpenAI
//! Chat Completions (`…/chat/completions`, streamed or not by the body's
//! `stream`) and Gemini (`…/models/{model}:streamGenerateContent` and
//! `:generateContent`). Any path prefix is accepted. Each model request takes
//! the next [`Reply`] of the [`Script`]; once the script is used up, every
//! model request gets the script's fallback (text `ok` unless set). Other
//! requests (connectivity probes, model lists, token counts) get a small
//! answer or a 404; every request is recorded.
//!
//! Lifecycle: [`ModelServer::start`] binds `127.0.0.1:0` and serves on its own
//! thread with its own single-threaded tokio runtime; dropping the server
//! stops it and cuts every open connection.
//!
//! Layers: `http` reads requests and writes responses (the only IO), `route`
//! decides what to answer (pure), `tools` finds a CLI's own tools in a
//! request, and `wire` holds the four APIs' frames and error shapes.

mod http;
mod route;
#[cfg(test)]
mod tests;
mod tools;
mod wire;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Input tokens reported in every model response.
pub const USAGE_INPUT_TOKENS: u64 = 11;
/// Output tokens reported in every model response.
pub const USAGE_OUTPUT_TOKENS: u64 = 5;

/// One scripted answer to one model request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A plain assistant text, in one piece.
    Text(String),
    /// A call of the CLI's own file-writing tool (found in the request's
    /// `tools` by its known name, with that tool's argument names). `path`
    /// should be absolute: most CLIs refuse relative paths.
    WriteFile {
        /// Where the file goes.
        path: PathBuf,
        /// What it holds.
        content: String,
    },
    /// A call of the CLI's own shell tool.
    Shell {
        /// The command line to run.
        command: String,
    },
    /// A call of the tool `name` with `args` as given, whether or not the
    /// request offers it (to see how a CLI refuses a tool). A freeform
    /// (custom) tool gets `args` as its input if it is a string.
    Tool {
        /// The tool's name as the model must call it.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// A call of the offered tool whose name is `name` or ends with
    /// `__NAME` after `server` (how CLIs name MCP tools:
    /// `mcp__flotilla__send`, `flotilla__send`, `flotilla_send`), taken from
    /// the tools the CLI advertised.
    McpTool {
        /// The MCP server's name.
        server: String,
        /// The tool's own name.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// An HTTP error with a JSON body in the API's own error shape.
    HttpError {
        /// The HTTP status.
        status: u16,
        /// The error's message.
        message: String,
    },
    /// `text` streamed word by word, waiting `chunk_delay` before each
    /// chunk, so a test can interrupt mid-turn or hit a deadline. A
    /// non-streaming request gets the whole text after the same total delay.
    Slow {
        /// The text.
        text: String,
        /// The pause before each chunk.
        chunk_delay: Duration,
    },
}

impl Reply {
    /// A plain text reply.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }
}

/// The replies to give, in order, and what to answer after them.
#[derive(Debug, Clone)]
pub struct Script {
    replies: VecDeque<Reply>,
    fallback: Reply,
    /// A tool reply waits for a request that offers its tool.
    tools_wait: bool,
}

impl Default for Script {
    fn default() -> Self {
        Self::new([])
    }
}

impl Script {
    /// These replies, one per model request, then text `ok` for ever.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self {
            replies: replies.into_iter().collect(),
            fallback: Reply::text("ok"),
            tools_wait: false,
        }
    }

    /// A scripted tool call is kept for the first request that offers its
    /// tool; requests before it (an interactive CLI's side requests, such
    /// as a title) get the fallback.
    pub fn tools_wait_for_offer(mut self) -> Self {
        self.tools_wait = true;
        self
    }

    /// Answers every model request after the scripted ones with `reply`.
    pub fn or_else(mut self, reply: Reply) -> Self {
        self.fallback = reply;
        self
    }

    /// The reply for the next model request.
    fn next_reply(&mut self, offers: impl Fn(&Reply) -> bool) -> Reply {
        if self.tools_wait && self.replies.front().is_some_and(|r| !offers(r)) {
            return self.fallback.clone();
        }
        self.replies
            .pop_front()
            .unwrap_or_else(|| self.fallback.clone())
    }
}

/// The wire API a model request was spoken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (`POST …/messages`).
    Anthropic,
    /// OpenAI Responses (`POST …/responses`).
    Responses,
    /// OpenAI Chat Completions (`POST …/chat/completions`).
    Chat,
    /// Gemini (`POST …/models/{model}:streamGenerateContent` or `:generateContent`).
    Gemini,
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `GET`, `POST`, `HEAD`, …
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The query string (after `?`), if any.
    pub query: Option<String>,
    /// Headers in arrival order, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when empty, a JSON string when the
    /// body was not JSON.
    pub body: Value,
    /// The wire API, when this was a model request.
    pub api: Option<Api>,
    /// The scripted reply it consumed, when this was a model request.
    pub reply: Option<Reply>,
}

impl RecordedRequest {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether this request was a model turn (it consumed a reply).
    pub fn is_model(&self) -> bool {
        self.api.is_some()
    }
}

/// What the serving thread and the test share.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Signalled at every recorded request, for the `wait_for_*` methods.
    recorded: Condvar,
}

#[derive(Debug)]
struct State {
    script: Script,
    log: Vec<RecordedRequest>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the reply for a model request; `offers` tells whether the
    /// request offers a reply's tool.
    fn next_reply(&self, offers: impl Fn(&Reply) -> bool) -> Reply {
        self.lock().script.next_reply(offers)
    }

    fn record(&self, request: RecordedRequest) {
        self.lock().log.push(request);
        self.recorded.notify_all();
    }

    /// Waits until `count(log) >= n`, for at most `timeout`.
    fn wait(
        &self,
        what: &str,
        n: usize,
        timeout: Duration,
        count: impl Fn(&[RecordedRequest]) -> usize,
    ) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        while count(&state.log) < n {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out after {timeout:?} waiting for {n} {what}; got: {:#?}",
                summary(&state.log)
            );
            state = self
                .recorded
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        state.log.clone()
    }
}

/// `METHOD path` of each request, for failure messages.
fn summary(log: &[RecordedRequest]) -> Vec<String> {
    log.iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// A running scripted model server; stops when dropped.
#[derive(Debug)]
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Dropped or fired to stop the serving thread.
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ModelServer {
    /// Binds `127.0.0.1:0` and serves `script` on a thread of its own.
    pub fn start(script: Script) -> Self {
        Self::start_at(SocketAddr::from(([127, 0, 0, 1], 0)), script)
    }

    /// Binds `addr` (on loopback: the address of a server the test
    /// stopped, to bring its endpoint back) and serves `script`.
    pub fn start_at(addr: SocketAddr, script: Script) -> Self {
        assert!(addr.ip().is_loopback(), "tests bind loopback only");
        let listener = std::net::TcpListener::bind(addr).expect("bind the model server's address");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script,
                log: Vec::new(),
            }),
            recorded: Condvar::new(),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let serving = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("model-server-{}", addr.port()))
            .spawn(move || run(listener, serving, rx))
            .expect("spawn the model server thread");
        Self {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The bound address (always on 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash or `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Appends a reply to the script (before the fallback).
    pub fn push(&self, reply: Reply) {
        self.shared.lock().script.replies.push_back(reply);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().log.clone()
    }

    /// The model requests received so far, in order.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_model)
            .collect()
    }

    /// Waits until at least `n` requests of any kind arrived; returns all.
    /// Panics after `timeout`.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.shared.wait("requests", n, timeout, <[_]>::len)
    }

    /// Waits until at least `n` model requests arrived; returns them.
    /// Panics after `timeout`.
    pub fn wait_for_model_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let log = self.shared.wait("model requests", n, timeout, |log| {
            log.iter().filter(|r| r.is_model()).count()
        });
        log.into_iter().filter(RecordedRequest::is_model).collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The serving thread: a runtime of its own; dropping it at the end cancels
/// every connection still open.
fn run(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    shutdown: tokio::sync::oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("model server runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
        http::serve(listener, shared, async {
            let _ = shutdown.await;
        })
        .await;
    });
}
