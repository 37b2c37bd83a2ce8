//! The hub's read-only web roster: in headless Chromium (the page shows
//! every host of a three-host federation and a host that leaves), and
//! attacked over raw HTTP (the token, GET only, the security headers, the
//! bound on live pages, loopback only, the token kept out of files).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use flotilla_tests::federation::{PATIENCE, Running, host_home, hub_home, run_hub};
use flotilla_tests::{TestHome, wait_until};
use serde_json::Value;

use crate::federation::start;

mod cdp;

/// A GET on the web roster with an optional Authorization value; the whole
/// answer (the server closes after it), as text.
fn http(base: &str, method: &str, path: &str, auth: Option<&str>) -> String {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("connect to the web roster");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let auth = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    write!(s, "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n").expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// The JSON body of an answer.
fn body_json(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// Splits `http://ADDR/#token=T` into `http://ADDR` and `T`.
fn split_url(url: &str) -> (String, String) {
    let (base, token) = url
        .split_once("/#token=")
        .expect("URL with the token in its fragment");
    (base.to_owned(), token.to_owned())
}

/// The hosts' states in `/api/roster`, by name.
fn states(base: &str, token: &str) -> Vec<(String, String)> {
    let answer = http(base, "GET", "/api/roster", Some(&format!("Bearer {token}")));
    body_json(&answer)["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            let s = |k: &str| h[k].as_str().unwrap_or_default().to_owned();
            (s("host"), s("state"))
        })
        .collect()
}

/// `flotilla hub web --listen 127.0.0.1:0 --json` in `hub`'s home; its URL.
fn hub_web(hub: &TestHome) -> (Running, String) {
    let mut child = hub
        .command(&["hub", "web", "--listen", "127.0.0.1:0", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hub web");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(PATIENCE)
        .expect("hub web prints its start line");
    let start: Value = serde_json::from_str(&line).expect("one JSON line");
    assert_eq!(start["schema"], "flotilla.hub-web.v1");
    assert!(
        start["listen"]
            .as_str()
            .unwrap_or_default()
            .starts_with("127.0.0.1:")
    );
    (running, start["url"].as_str().expect("url").to_owned())
}

/// The page's host rows, `HOST=STATE`, as the page shows them now.
const ROWS: &str = "JSON.stringify([...document.querySelectorAll('tr.host')].map(r => r.dataset.host + '=' + r.dataset.state))";

fn rows_are(value: &Value, want: &str) -> bool {
    value.as_str() == Some(want)
}

#[test]
fn the_web_roster_in_chromium_shows_three_hosts_and_one_that_leaves() {
    let Some(bin) = cdp::chromium() else { return };
    let (hub, addr) = hub_home();
    let mut server = run_hub(&hub);
    let mut hosts = Vec::new();
    for (name, peer) in [("a", "lead"), ("b", "builder"), ("c", "tester")] {
        let mut host = host_home(&hub, name, &addr);
        start(&mut host, name);
        host.ok(&["peer", "join", peer, "-g", "proj"]);
        hosts.push(host);
    }
    let (_web, url) = hub_web(&hub);
    let (base, token) = split_url(&url);
    wait_until(
        "the web roster's data to show three hosts online",
        PATIENCE,
        || {
            let s = states(&base, &token);
            s.len() == 3 && s.iter().all(|(_, state)| state == "online")
        },
    );
    let profiles = tempfile::tempdir().expect("profile dirs");
    let mut page = cdp::Browser::open(&bin, &profiles.path().join("live"), &url);
    page.wait("three hosts online", ROWS, |v| {
        rows_are(v, r#"["a=online","b=online","c=online"]"#)
    });
    let html = page.eval("document.documentElement.outerHTML");
    let html = html.as_str().unwrap_or_default();
    assert!(html.contains("hub.test"), "the hub's name: {html}");
    assert!(
        html.contains("data-group=\"proj\"") && html.contains("c/tester"),
        "peers by group: {html}"
    );
    assert!(
        html.contains("class=\"bar up\""),
        "the link health strip: {html}"
    );
    assert_eq!(
        page.eval("location.hash"),
        "",
        "the token is taken out of the address bar"
    );
    let updates = page
        .eval("Number(document.body.dataset.updates)")
        .as_u64()
        .unwrap_or(0);

    // The same page, not reloaded, follows the host's leaving.
    hosts[2].signal_daemon("TERM");
    page.wait("c offline, live", ROWS, |v| {
        rows_are(v, r#"["a=online","b=online","c=offline"]"#)
    });
    let later = page
        .eval("Number(document.body.dataset.updates)")
        .as_u64()
        .unwrap_or(0);
    assert!(
        later > updates,
        "updated by the event stream ({updates} -> {later})"
    );
    assert!(
        page.eval("document.querySelector('tr[data-host=c] .bar.down') !== null") == true,
        "c's strip shows it left"
    );
    drop(page);

    // A fresh load shows the same; without the token, no data.
    let cli = profiles.path().join("cli");
    let dom = cdp::chromium_run(&bin, &cli, &url, &["--dump-dom"]);
    assert!(
        dom.contains("data-host=\"c\" data-state=\"offline\""),
        "{dom}"
    );
    let bare = cdp::chromium_run(&bin, &cli, &format!("{base}/"), &["--dump-dom"]);
    assert!(
        bare.contains("id=\"status\"") && !bare.contains("data-host="),
        "no data without the token: {bare}"
    );

    let shot = profiles.path().join("web-roster.png");
    let arg = format!("--screenshot={}", shot.display());
    cdp::chromium_run(&bin, &cli, &url, &[&arg, "--window-size=1280,800"]);
    let png = std::fs::read(&shot).expect("the screenshot was written");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let exe = std::env::current_exe().expect("exe");
    // target/<profile>/deps/e2e-HASH -> target/
    if let Some(target) = exe.ancestors().nth(3) {
        let kept = target.join("web-roster.png");
        if std::fs::write(&kept, &png).is_ok() {
            println!("screenshot: {}", kept.display());
        }
    }

    // The hub stops: the page keeps the last roster and says so.
    flotilla_tests::stop_child(&mut server);
    let mut dom = String::new();
    for _ in 0..20 {
        dom = cdp::chromium_run(&bin, &cli, &url, &["--dump-dom"]);
        if dom.contains("the hub does not answer") {
            break;
        }
    }
    assert!(dom.contains("the hub does not answer"), "{dom}");
    assert!(
        dom.contains("data-host=\"a\""),
        "the last roster stays: {dom}"
    );
}

/// `hub run` with `[hub_server] web` on a free loopback port; the URL it
/// printed on stderr.
fn hub_run_with_web() -> (TestHome, Running, String) {
    let (hub, _addr) = hub_home();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free TCP port")
        .port();
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    // [hub_server] is the last table `hub init` writes.
    hub.write_config(&format!("{config}web = \"127.0.0.1:{port}\"\n"));
    let server = run_hub(&hub);
    let stderr = hub.path().join("hub.stderr");
    let mut url = String::new();
    wait_until("hub run to print the web roster's URL", PATIENCE, || {
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        match text.lines().find_map(|l| l.strip_prefix("web roster: ")) {
            Some(u) => {
                url = u.trim().to_owned();
                true
            }
            None => false,
        }
    });
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{port}/#token=")),
        "{url}"
    );
    (hub, server, url)
}

#[test]
fn the_web_api_needs_the_token_is_get_only_sends_security_headers_and_bounds_live_pages() {
    let (hub, _server, url) = hub_run_with_web();
    let (base, token) = split_url(&url);
    let bearer = format!("Bearer {token}");
    for path in ["/api/roster", "/api/events"] {
        for auth in [None, Some("Bearer wrong"), Some(token.as_str())] {
            let answer = http(&base, "GET", path, auth);
            assert!(
                answer.starts_with("HTTP/1.1 401 "),
                "{path} with {auth:?}: {answer}"
            );
        }
    }
    let mut roster = String::new();
    wait_until("the roster to be read", PATIENCE, || {
        roster = http(&base, "GET", "/api/roster", Some(&bearer));
        roster.starts_with("HTTP/1.1 200 ")
    });
    assert_eq!(body_json(&roster)["schema"], "flotilla.hub-web.roster.v1");
    assert_eq!(body_json(&roster)["hub"], "hub.test");
    for method in ["POST", "PUT", "DELETE"] {
        let answer = http(&base, method, "/api/roster", Some(&bearer));
        assert!(answer.starts_with("HTTP/1.1 405 "), "{method}: {answer}");
    }
    for path in ["/", "/app.js", "/app.css", "/api/roster"] {
        let answer = http(&base, "GET", path, Some(&bearer));
        let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
        for header in [
            "Content-Security-Policy: default-src 'self'; connect-src 'self'",
            "X-Content-Type-Options: nosniff",
            "Cache-Control: no-store",
        ] {
            assert!(head.contains(header), "{path} lacks {header}: {head}");
        }
        for external in ["http://", "https://", "//cdn", "<script>"] {
            assert!(!body.contains(external), "{path} holds {external:?}");
        }
    }
    // 32 live pages at once; the 33rd gets 503, and a freed place is reused.
    let open = |n: usize| -> Vec<TcpStream> {
        (0..n)
            .map(|_| {
                let addr = base.trim_start_matches("http://");
                let mut s = TcpStream::connect(addr).expect("connect");
                s.set_read_timeout(Some(Duration::from_secs(10)))
                    .expect("timeout");
                write!(
                    s,
                    "GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: {bearer}\r\n\r\n"
                )
                .expect("write");
                let mut head = [0u8; 15];
                s.read_exact(&mut head).expect("an answer");
                assert_eq!(&head, b"HTTP/1.1 200 OK", "a live page is served");
                s
            })
            .collect()
    };
    let mut pages = open(32);
    let refused = http(&base, "GET", "/api/events", Some(&bearer));
    assert!(
        refused.starts_with("HTTP/1.1 503 "),
        "the 33rd live page: {refused}"
    );
    pages.pop();
    wait_until("a freed place to be taken again", PATIENCE, || {
        let addr = base.trim_start_matches("http://");
        let Ok(mut s) = TcpStream::connect(addr) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = write!(
            s,
            "GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: {bearer}\r\n\r\n"
        );
        let mut head = [0u8; 15];
        s.read_exact(&mut head).is_ok() && &head == b"HTTP/1.1 200 OK"
    });
    drop(pages);
    // The token is in no file of the hub's home (hub.stderr is this test's
    // capture of the terminal, where it was printed once).
    let mut files = vec![hub.path().to_path_buf()];
    while let Some(dir) = files.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.push(path);
            } else if path.file_name().is_some_and(|n| n != "hub.stderr") {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes);
                assert!(
                    !text.contains(&token),
                    "the token is written in {}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_web_roster_refuses_a_non_loopback_address_and_needs_a_running_hub() {
    let (hub, _addr) = hub_home();
    for addr in ["0.0.0.0:7780", "192.0.2.1:7780", "[::]:7780"] {
        let out = hub.run(&["hub", "web", "--listen", addr]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{addr}: {err}");
        assert!(
            err.contains("needs TLS")
                && err.contains("SSH tunnel")
                && err.contains(
                    addr.trim_start_matches('[')
                        .split(']')
                        .next()
                        .unwrap_or(addr)
                ),
            "{addr}: {err}"
        );
    }
    let out = hub.run(&["hub", "web", "--listen", "127.0.0.1:0"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "no hub runs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = std::fs::read_to_string(hub.path().join("config.toml")).expect("config");
    hub.write_config(&format!("{config}web = \"0.0.0.0:7780\"\n"));
    let out = hub.run(&["hub", "run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "hub run refuses a public web address"
    );
    assert!(
        err.contains("[hub_server] web") && err.contains("needs TLS"),
        "{err}"
    );
}
