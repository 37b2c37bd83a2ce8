//! Headless Chromium (from the system's packages) for the web roster's
//! test: one-shot runs (`--dump-dom`, `--screenshot`), and just enough of
//! the Chrome DevTools Protocol to watch one page live: a debugging port on
//! loopback, the page's websocket, and `Runtime.evaluate`. Every wait is
//! bounded; the browser is killed when the test ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The longest one step may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// Flags every headless Chromium run of these tests gets.
pub(crate) const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// Headless Chromium from the system's packages; `None` (with a notice)
/// outside CI when it is missing. In CI a missing Chromium fails.
pub(crate) fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install Debian's chromium package for the web roster's test"
        );
        eprintln!(
            "SKIPPED: no /usr/bin/chromium (apt-get install chromium); the web roster's browser test did not run"
        );
    }
    found
}

/// Runs headless Chromium on `url` with `args`, bounded in time; its stdout.
pub(crate) fn chromium_run(bin: &Path, profile: &Path, url: &str, args: &[&str]) -> String {
    let out = Command::new("timeout")
        .arg("60")
        .arg(bin)
        .args(HEADLESS)
        .arg("--virtual-time-budget=5000")
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run chromium");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A headless Chromium showing one page, driven over its websocket.
pub(crate) struct Browser {
    child: Child,
    page: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain GET on loopback (the DevTools HTTP endpoint); its body.
fn get(addr: &str, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())
}

impl Browser {
    /// Starts Chromium on `url` and connects to that page.
    pub(crate) fn open(bin: &Path, profile: &Path, url: &str) -> Self {
        let mut child = Command::new(bin)
            .args(HEADLESS)
            .arg("--remote-debugging-address=127.0.0.1")
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--window-size=1280,800")
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        // Reads stderr to its end (so Chromium never blocks on it), passing
        // on the DevTools address.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("DevTools listening on ws://").nth(1) {
                    let addr = rest.split('/').next().unwrap_or_default().to_owned();
                    let _ = tx.send(addr);
                }
            }
        });
        let mut browser_child = Some(child);
        let addr = match rx.recv_timeout(PATIENCE) {
            Ok(addr) => addr,
            Err(_) => {
                if let Some(mut c) = browser_child.take() {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                panic!("chromium never said where DevTools listen");
            }
        };
        let child = browser_child.take().expect("child");
        let deadline = Instant::now() + PATIENCE;
        let ws_url = loop {
            let pages: Value = get(&addr, "/json/list")
                .and_then(|b| serde_json::from_str(&b).ok())
                .unwrap_or(Value::Null);
            let found = pages.as_array().into_iter().flatten().find_map(|p| {
                (p["type"] == "page")
                    .then(|| p["webSocketDebuggerUrl"].as_str().map(str::to_owned))
                    .flatten()
            });
            if let Some(ws) = found {
                break ws;
            }
            assert!(
                Instant::now() < deadline,
                "chromium never listed its page: {pages}"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let (page, _) = tungstenite::connect(ws_url.as_str()).expect("the page's websocket");
        if let MaybeTlsStream::Plain(s) = page.get_ref() {
            s.set_read_timeout(Some(PATIENCE)).expect("read timeout");
        }
        Self {
            child,
            page,
            next_id: 1,
        }
    }

    /// Evaluates `expression` in the page; its value.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let call = json!({
            "id": id,
            "method": "Runtime.evaluate",
            "params": {"expression": expression, "returnByValue": true},
        });
        self.page
            .send(Message::text(call.to_string()))
            .expect("send to the page");
        // Bounded: each read waits at most PATIENCE, and only answers to
        // calls (no domain is enabled, so no events) come back.
        for _ in 0..100 {
            let Message::Text(text) = self.page.read().expect("the page answers") else {
                continue;
            };
            let answer: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
            if answer["id"] == id {
                return answer["result"]["result"]["value"].clone();
            }
        }
        panic!("no answer to {expression}");
    }

    /// Evaluates `expression` until `cond` holds of its value, bounded in
    /// time; that value.
    pub(crate) fn wait(
        &mut self,
        what: &str,
        expression: &str,
        cond: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let value = self.eval(expression);
            if cond(&value) {
                return value;
            }
            assert!(
                Instant::now() < deadline,
                "the page never showed {what}; last: {value}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
