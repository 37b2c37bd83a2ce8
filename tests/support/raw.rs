//! A raw client for the control socket: sends exact bytes and reads
//! response frames, so tests can speak the protocol as any program would,
//! including badly.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

/// One connection.
#[derive(Debug)]
pub struct RawClient {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next: u64,
}

impl RawClient {
    /// Connects (panics if nothing listens).
    pub fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).expect("connect to the control socket");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        Self {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
            next: 1,
        }
    }

    /// Connects, or `None` if nothing listens.
    pub fn try_connect(socket: &Path) -> Option<Self> {
        UnixStream::connect(socket).ok().map(|stream| {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
            Self {
                reader: BufReader::new(stream.try_clone().expect("clone")),
                writer: stream,
                next: 1,
            }
        })
    }

    /// Writes bytes as they are.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)?;
        self.writer.flush()
    }

    /// Reads one response frame.
    pub fn read_frame(&mut self) -> std::io::Result<Value> {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "closed",
            ));
        }
        serde_json::from_str(&line).map_err(std::io::Error::other)
    }

    /// Sends one well-formed request and returns the response frame.
    pub fn call(&mut self, op: &str, args: Value) -> std::io::Result<Value> {
        let id = self.next;
        self.next += 1;
        let mut line = serde_json::to_vec(&json!({"v": 1, "id": id, "op": op, "args": args}))?;
        line.push(b'\n');
        self.send_bytes(&line)?;
        let frame = self.read_frame()?;
        assert_eq!(
            frame["id"],
            json!(id),
            "response id must echo the request id"
        );
        Ok(frame)
    }
}

/// The error code of a failed frame.
pub fn error_code(frame: &Value) -> &str {
    frame["error"]["code"].as_str().unwrap_or("")
}
