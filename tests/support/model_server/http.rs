//! HTTP/1.1 on the model server's sockets: the accept loop, reading requests
//! (fixed-length or chunked bodies, keep-alive, pipelining) and writing
//! responses (JSON with a length, or SSE as a chunked stream). The only IO of
//! the model server; what to answer is decided in `route`.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use super::Shared;
use super::route::{self, Body, Response};

/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted (CLIs send their whole history each turn).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One request off the wire.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawRequest {
    pub(super) method: String,
    /// The target as sent: path and query.
    pub(super) target: String,
    /// Header names in lower case.
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl RawRequest {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client asked to close after this exchange.
    fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Accepts connections until `shutdown` completes; one task each.
pub(super) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(connection(stream, Arc::clone(&shared)));
            }
        }
    }
}

/// Serves one connection until the client closes it or a write fails.
async fn connection<S: AsyncRead + AsyncWrite + Unpin>(stream: S, shared: Arc<Shared>) {
    let mut conn = Conn::new(stream);
    while let Ok(Some(request)) = conn.read_request().await {
        let close = request.wants_close();
        let head_only = request.method == "HEAD";
        let response = route::handle(&shared, request);
        if write_response(&mut conn.stream, &response, head_only, close)
            .await
            .is_err()
            || close
        {
            return;
        }
    }
}

/// A connection and the bytes read from it but not yet used.
struct Conn<S> {
    stream: S,
    buf: Vec<u8>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    fn new(stream: S) -> Self {
        Self {
            stream,
            buf: Vec::new(),
        }
    }

    /// Reads more bytes into the buffer; `Ok(false)` at end of stream.
    async fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// The next request; `Ok(None)` when the client closed between requests.
    async fn read_request(&mut self) -> io::Result<Option<RawRequest>> {
        let Some((mut request, head_len)) = self.read_head().await? else {
            return Ok(None);
        };
        self.buf.drain(..head_len);
        if request
            .header("expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
        {
            self.stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await?;
        }
        request.body = if request
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
        {
            self.read_chunked().await?
        } else {
            let len = match request.header("content-length") {
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| invalid("bad content-length"))?,
                None => 0,
            };
            self.read_exact(len).await?
        };
        Ok(Some(request))
    }

    /// Reads until a whole head is buffered; returns it and its length.
    async fn read_head(&mut self) -> io::Result<Option<(RawRequest, usize)>> {
        loop {
            if let Some(parsed) = parse_head(&self.buf)? {
                return Ok(Some(parsed));
            }
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("request head too large"));
            }
            if !self.fill().await? {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(invalid("closed mid-request"))
                };
            }
        }
    }

    async fn read_exact(&mut self, len: usize) -> io::Result<Vec<u8>> {
        if len > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        while self.buf.len() < len {
            if !self.fill().await? {
                return Err(invalid("closed mid-body"));
            }
        }
        Ok(self.buf.drain(..len).collect())
    }

    async fn read_line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf.drain(..end + 2).take(end).collect();
                return Ok(line);
            }
            if self.buf.len() > MAX_HEAD || !self.fill().await? {
                return Err(invalid("bad chunked body"));
            }
        }
    }

    /// A `Transfer-Encoding: chunked` body, trailers skipped.
    async fn read_chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line().await?;
            let size = chunk_size(&line)?;
            if size == 0 {
                while !self.read_line().await?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(invalid("request body too large"));
            }
            body.extend(self.read_exact(size).await?);
            if !self.read_line().await?.is_empty() {
                return Err(invalid("chunk without CRLF"));
            }
        }
    }
}

/// Parses a request head at the start of `buf`; `Ok(None)` if incomplete.
pub(super) fn parse_head(buf: &[u8]) -> io::Result<Option<(RawRequest, usize)>> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    let status = req.parse(buf).map_err(|e| invalid(&e.to_string()))?;
    let httparse::Status::Complete(len) = status else {
        return Ok(None);
    };
    let request = RawRequest {
        method: req.method.unwrap_or_default().to_owned(),
        target: req.path.unwrap_or_default().to_owned(),
        headers: req
            .headers
            .iter()
            .map(|h| {
                let value = String::from_utf8_lossy(h.value).into_owned();
                (h.name.to_ascii_lowercase(), value)
            })
            .collect(),
        body: Vec::new(),
    };
    Ok(Some((request, len)))
}

/// The size on a chunk-size line (extensions after `;` ignored).
fn chunk_size(line: &[u8]) -> io::Result<usize> {
    let text = std::str::from_utf8(line).map_err(|_| invalid("bad chunk size"))?;
    let hex = text.split(';').next().unwrap_or_default().trim();
    usize::from_str_radix(hex, 16).map_err(|_| invalid("bad chunk size"))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// Writes `response`; an SSE body goes out as one chunk per frame, with the
/// body's gap before each frame.
async fn write_response<W: AsyncWrite + Unpin>(
    out: &mut W,
    response: &Response,
    head_only: bool,
    close: bool,
) -> io::Result<()> {
    let connection = if close { "close" } else { "keep-alive" };
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nConnection: {connection}\r\n",
        response.status,
        reason(response.status)
    );
    match &response.body {
        Body::Empty => {
            head.push_str("Content-Length: 0\r\n\r\n");
            out.write_all(head.as_bytes()).await?;
        }
        Body::Json { value, delay } => {
            pause(*delay).await;
            let bytes = serde_json::to_vec(value).map_err(io::Error::other)?;
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                bytes.len()
            ));
            out.write_all(head.as_bytes()).await?;
            if !head_only {
                out.write_all(&bytes).await?;
            }
        }
        Body::Sse { frames, gap } => {
            head.push_str(
                "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
                 Transfer-Encoding: chunked\r\n\r\n",
            );
            out.write_all(head.as_bytes()).await?;
            out.flush().await?;
            for frame in frames {
                pause(*gap).await;
                let chunk = format!("{:x}\r\n{frame}\r\n", frame.len());
                out.write_all(chunk.as_bytes()).await?;
                out.flush().await?;
            }
            out.write_all(b"0\r\n\r\n").await?;
        }
    }
    out.flush().await
}

async fn pause(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
