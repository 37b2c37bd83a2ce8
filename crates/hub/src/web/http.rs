//! The web roster's HTTP/1.1, the part without IO: parsing a request head
//! (with `httparse`), deciding what answers it, and writing a response head
//! with the security headers every answer carries.
//!
//! Owns routing and headers; must not do IO or hold state (the server
//! shell in `server.rs` does both).

use super::token::Token;

/// Largest request head read; past it the request is refused.
pub(super) const MAX_HEAD: usize = 8 * 1024;

/// Headers on every answer: nothing loads from elsewhere, nothing is
/// sniffed, nothing is cached.
pub const SECURITY_HEADERS: &str = "Content-Security-Policy: default-src 'self'; connect-src 'self'; frame-ancestors 'none'\r\n\
X-Content-Type-Options: nosniff\r\n\
Cache-Control: no-store\r\n\
Referrer-Policy: no-referrer\r\n\
X-Frame-Options: DENY\r\n";

/// The page, its script and its style, shipped inside the binary.
pub(super) const INDEX_HTML: &str = include_str!("assets/index.html");
/// The page's script.
pub(super) const APP_JS: &str = include_str!("assets/app.js");
/// The page's style.
pub(super) const APP_CSS: &str = include_str!("assets/app.css");

/// A request head, as far as the roster cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    /// `GET`, ...
    pub(super) method: String,
    /// The path, without the query.
    pub(super) path: String,
    /// The `Authorization` header's value.
    pub(super) authorization: Option<Vec<u8>>,
}

/// Why a request head could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadError {
    /// Not HTTP/1.x.
    #[error("malformed request: {0}")]
    Malformed(String),
    /// Longer than [`MAX_HEAD`].
    #[error("request head over {MAX_HEAD} bytes")]
    TooLong,
}

/// Parses a request head from the bytes read so far: `None` while it is
/// incomplete.
pub(super) fn parse(buf: &[u8]) -> Result<Option<Request>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {
            let path = req.path.unwrap_or("/");
            let path = path.split(['?', '#']).next().unwrap_or("/").to_owned();
            Ok(Some(Request {
                method: req.method.unwrap_or("").to_owned(),
                path,
                authorization: req
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                    .map(|h| h.value.to_vec()),
            }))
        }
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => Err(HeadError::TooLong),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(HeadError::Malformed(e.to_string())),
    }
}

/// What answers a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Route {
    /// A file shipped in the binary: its type and body.
    Asset(&'static str, &'static str),
    /// `GET /api/roster`, authorized.
    Roster,
    /// `GET /api/events`, authorized.
    Events,
    /// An API path without the right token.
    Unauthorized,
    /// Not GET.
    MethodNotAllowed,
    /// Nothing there.
    NotFound,
}

/// Routes a request. The page and its files need no token (they hold no
/// data); every `/api/` path does.
pub(super) fn route(req: &Request, token: &Token) -> Route {
    if req.method != "GET" {
        return Route::MethodNotAllowed;
    }
    match req.path.as_str() {
        "/" | "/index.html" => Route::Asset("text/html; charset=utf-8", INDEX_HTML),
        "/app.js" => Route::Asset("text/javascript; charset=utf-8", APP_JS),
        "/app.css" => Route::Asset("text/css; charset=utf-8", APP_CSS),
        path if path.starts_with("/api/") => {
            if !token.admits(req.authorization.as_deref()) {
                return Route::Unauthorized;
            }
            match path {
                "/api/roster" => Route::Roster,
                "/api/events" => Route::Events,
                _ => Route::NotFound,
            }
        }
        _ => Route::NotFound,
    }
}

/// A whole answer with a body; the connection closes after it.
pub(super) fn response(status: &str, content_type: &str, extra: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{SECURITY_HEADERS}{extra}Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// The head of the event stream (no length: it runs until either side
/// closes).
pub(super) fn events_head() -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{SECURITY_HEADERS}Connection: close\r\n\r\n"
    )
    .into_bytes()
}

/// One `roster` event carrying `json` (which holds no newline).
pub(super) fn roster_event(json: &str) -> Vec<u8> {
    format!("event: roster\ndata: {json}\n\n").into_bytes()
}

/// An error answer in plain text.
pub(super) fn plain(status: &str, extra: &str, text: &str) -> Vec<u8> {
    response(status, "text/plain; charset=utf-8", extra, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, path: &str, auth: Option<&str>) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            authorization: auth.map(|a| a.as_bytes().to_vec()),
        }
    }

    #[test]
    fn parses_heads_in_pieces_and_refuses_oversized_or_malformed_ones() {
        let head = b"GET /api/roster?x=1 HTTP/1.1\r\nHost: h\r\nauthorization: Bearer t\r\n\r\n";
        assert_eq!(parse(&head[..20]), Ok(None));
        let r = parse(head)
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("parsed"));
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/api/roster"));
        assert_eq!(r.authorization.as_deref(), Some(&b"Bearer t"[..]));
        let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
        long.resize(MAX_HEAD + 1, b'a');
        assert_eq!(parse(&long), Err(HeadError::TooLong));
        assert!(matches!(
            parse(b"\x01\x02 nonsense\r\n\r\n"),
            Err(HeadError::Malformed(_))
        ));
    }

    #[test]
    fn the_api_needs_the_token_the_page_does_not_and_only_get_is_served() {
        let t = Token::fixed("secret");
        assert!(
            matches!(route(&req("GET", "/", None), &t), Route::Asset(ty, _) if ty.starts_with("text/html"))
        );
        assert!(matches!(
            route(&req("GET", "/app.js", None), &t),
            Route::Asset(..)
        ));
        assert_eq!(
            route(&req("GET", "/api/roster", None), &t),
            Route::Unauthorized
        );
        assert_eq!(
            route(&req("GET", "/api/events", Some("Bearer nope")), &t),
            Route::Unauthorized
        );
        assert_eq!(
            route(&req("GET", "/api/nothing", None), &t),
            Route::Unauthorized
        );
        assert_eq!(
            route(&req("GET", "/api/roster", Some("Bearer secret")), &t),
            Route::Roster
        );
        assert_eq!(
            route(&req("GET", "/api/events", Some("Bearer secret")), &t),
            Route::Events
        );
        assert_eq!(
            route(&req("POST", "/api/roster", Some("Bearer secret")), &t),
            Route::MethodNotAllowed
        );
        assert_eq!(route(&req("GET", "/etc/passwd", None), &t), Route::NotFound);
    }

    #[test]
    fn the_assets_load_nothing_from_elsewhere() {
        for (name, text) in [
            ("index.html", INDEX_HTML),
            ("app.js", APP_JS),
            ("app.css", APP_CSS),
        ] {
            for bad in [
                "http://", "https://", "//cdn", "<script>", "style=\"", "@import",
            ] {
                assert!(!text.contains(bad), "{name} holds {bad:?}");
            }
        }
        let r = String::from_utf8_lossy(&plain("404 Not Found", "", "no")).into_owned();
        assert!(r.contains("Content-Security-Policy: default-src 'self'; connect-src 'self'"));
        assert!(
            r.contains("X-Content-Type-Options: nosniff") && r.contains("Cache-Control: no-store")
        );
    }
}
