//! The web roster's server: a loopback TCP listener, one task that reads
//! the hub's roster over its control socket every second (the same answer
//! as `hub roster --json`) and publishes the page's data, and one task per
//! connection answering a single GET.
//!
//! Owns sockets, timeouts and the bound on event-stream clients. Routing,
//! headers and the data's shape are in `http.rs` and `snapshot.rs`; must
//! not change the hub (it only reads through the control socket).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use super::WebError;
use super::health::HealthBook;
use super::http::{self, Route};
use super::snapshot::{self, WebSnapshot};
use super::token::Token;

/// How often the roster is read (and so, at most, how often the page's
/// data changes).
pub const READ_EVERY: Duration = Duration::from_secs(1);
/// A comment on the event stream this often keeps proxies and the page
/// from taking a quiet stream for a dead one.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Most event-stream clients at once; more get 503.
pub const MAX_EVENT_CLIENTS: usize = 32;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Most connections answered at once.
const MAX_CONNECTIONS: usize = 128;

/// Refuses any address but loopback: the roster is plain HTTP.
pub fn check_listen(text: &str) -> Result<SocketAddr, WebError> {
    let addr: SocketAddr = text
        .parse()
        .map_err(|_| WebError::Address(text.to_owned()))?;
    if !addr.ip().is_loopback() {
        return Err(WebError::NotLoopback(addr));
    }
    Ok(addr)
}

/// A bound web roster, not yet serving.
#[derive(Debug)]
pub struct WebServer {
    listener: TcpListener,
    token: Token,
}

impl WebServer {
    /// Binds `listen` (loopback only) and makes the token.
    pub async fn bind(listen: &str) -> Result<Self, WebError> {
        let addr = check_listen(listen)?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| WebError::Bind { addr, source })?;
        let token = Token::generate().map_err(|_| WebError::Random)?;
        Ok(Self { listener, token })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, WebError> {
        Ok(self.listener.local_addr()?)
    }

    /// The URL to open: the token rides in the fragment, which browsers
    /// never send, so it stays out of every request line and log.
    pub fn url(&self) -> Result<String, WebError> {
        Ok(format!(
            "http://{}/#token={}",
            self.local_addr()?,
            self.token.reveal()
        ))
    }

    /// Serves until `stop` resolves, reading the roster from the hub's
    /// control socket at `hub_socket`.
    pub async fn serve(self, hub_socket: PathBuf, stop: impl Future<Output = ()>) {
        let (publish, current) = watch::channel(Arc::<str>::from(""));
        let reader = tokio::spawn(read_roster(hub_socket, publish));
        let shared = Arc::new(Shared {
            token: self.token,
            current,
            events: Arc::new(Semaphore::new(MAX_EVENT_CLIENTS)),
            connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        });
        let accepting = async {
            loop {
                let Ok((stream, _)) = self.listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let Ok(permit) = shared.connections.clone().try_acquire_owned() else {
                    drop(stream);
                    continue;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    if let Err(e) = answer(stream, &shared).await {
                        tracing::debug!("web roster client: {e}");
                    }
                    drop(permit);
                });
            }
        };
        tokio::select! {
            () = accepting => {}
            () = stop => {}
        }
        reader.abort();
    }
}

/// What the connection tasks share.
struct Shared {
    token: Token,
    /// The page's data as JSON (empty before the first read).
    current: watch::Receiver<Arc<str>>,
    events: Arc<Semaphore>,
    connections: Arc<Semaphore>,
}

/// Reads the roster every [`READ_EVERY`] and publishes the page's data
/// when it changed.
async fn read_roster(hub_socket: PathBuf, publish: watch::Sender<Arc<str>>) {
    let mut book = HealthBook::default();
    let mut last = WebSnapshot::empty(None);
    let mut tick = tokio::time::interval(READ_EVERY);
    loop {
        tick.tick().await;
        let next = match crate::control::roster(&hub_socket).await {
            Ok(roster) => {
                book.record(&roster);
                snapshot::build(&roster, &book)
            }
            Err(e) => WebSnapshot {
                error: Some(e.to_string()),
                ..last.clone()
            },
        };
        // A new read time alone is no change.
        let same = WebSnapshot {
            generated_at: last.generated_at,
            ..next.clone()
        } == last;
        if !same || publish.borrow().is_empty() {
            let json = serde_json::to_string(&next).unwrap_or_default();
            publish.send_replace(Arc::from(json));
            last = next;
        }
    }
}

async fn answer(mut stream: TcpStream, shared: &Shared) -> Result<(), std::io::Error> {
    let request = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut stream)).await {
        Ok(Ok(Some(r))) => r,
        Ok(Ok(None)) => return Ok(()),
        Ok(Err(e)) => {
            let text = format!("{e}\n");
            return stream
                .write_all(&http::plain("400 Bad Request", "", &text))
                .await;
        }
        Err(_) => {
            return stream
                .write_all(&http::plain("408 Request Timeout", "", "too slow\n"))
                .await;
        }
    };
    let reply = match http::route(&request, &shared.token) {
        Route::Asset(kind, body) => http::response("200 OK", kind, "", body.as_bytes()),
        Route::Roster => {
            let json = shared.current.borrow().clone();
            if json.is_empty() {
                http::plain(
                    "503 Service Unavailable",
                    "Retry-After: 1\r\n",
                    "the hub was not read yet\n",
                )
            } else {
                http::response("200 OK", "application/json", "", json.as_bytes())
            }
        }
        Route::Events => return events(stream, shared).await,
        Route::Unauthorized => http::plain(
            "401 Unauthorized",
            "WWW-Authenticate: Bearer\r\n",
            "this needs the token printed when the web roster started\n",
        ),
        Route::MethodNotAllowed => http::plain(
            "405 Method Not Allowed",
            "Allow: GET\r\n",
            "read-only: GET only\n",
        ),
        Route::NotFound => http::plain("404 Not Found", "", "not found\n"),
    };
    stream.write_all(&reply).await?;
    stream.shutdown().await
}

/// Reads up to the end of the request head; `None` if the client left.
async fn read_head(stream: &mut TcpStream) -> Result<Option<http::Request>, WebError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(request) = http::parse(&buf)? {
            return Ok(Some(request));
        }
    }
}

/// The event stream: the data at once, then each change, and a comment
/// every [`KEEP_ALIVE`].
async fn events(mut stream: TcpStream, shared: &Shared) -> Result<(), std::io::Error> {
    let Ok(_permit) = shared.events.clone().try_acquire_owned() else {
        let text = format!("at most {MAX_EVENT_CLIENTS} live pages at once\n");
        return stream
            .write_all(&http::plain(
                "503 Service Unavailable",
                "Retry-After: 5\r\n",
                &text,
            ))
            .await;
    };
    let mut current = shared.current.clone();
    stream.write_all(&http::events_head()).await?;
    let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
    keep_alive.tick().await;
    let mut probe = [0u8; 64];
    let mut send_current = true;
    loop {
        if send_current {
            let json = current.borrow_and_update().clone();
            if !json.is_empty() {
                stream.write_all(&http::roster_event(&json)).await?;
            }
        }
        send_current = tokio::select! {
            changed = current.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                true
            }
            _ = keep_alive.tick() => {
                stream.write_all(b": keep-alive\n\n").await?;
                false
            }
            // The client closed: done. Anything it sends is ignored.
            read = stream.read(&mut probe) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return Ok(());
                }
                false
            }
        };
    }
}
