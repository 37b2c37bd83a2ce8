//! The daemon's logs: to stderr and to `logs/daemon.log`, never stdout.
//! `FLOTILLA_LOG` (an env-filter directive such as `debug`), else
//! `RUST_LOG`, sets the level (default `info`). A log file that has grown
//! past [`ROTATE_AT`] is rotated when the daemon starts: `daemon.log`
//! becomes `daemon.log.1` (and so on, [`KEEP`] files kept).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::{Arc, Mutex};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::home::Home;

/// Installs the global subscriber. Calling it twice is harmless.
pub(crate) fn init(home: &Home) -> std::io::Result<()> {
    init_file(&home.log_file())
}

/// Like [`init`], logging to `logs/NAME` instead of `daemon.log`.
pub(crate) fn init_named(home: &Home, name: &str) -> std::io::Result<()> {
    init_file(&home.logs_dir.join(name))
}

/// Size past which a log file is rotated at start.
pub(crate) const ROTATE_AT: u64 = 10 * 1024 * 1024;
/// Rotated files kept (`NAME.1` … `NAME.KEEP`).
pub(crate) const KEEP: u32 = 3;

/// Moves `path` to `path.1` (and older ones one further, dropping the
/// oldest) when it is larger than `limit` bytes.
pub(crate) fn rotate(path: &std::path::Path, limit: u64) -> std::io::Result<()> {
    let big = std::fs::metadata(path).is_ok_and(|m| m.len() > limit);
    if !big {
        return Ok(());
    }
    let numbered = |n: u32| {
        let mut p = path.as_os_str().to_owned();
        p.push(format!(".{n}"));
        std::path::PathBuf::from(p)
    };
    for n in (1..KEEP).rev() {
        if numbered(n).exists() {
            std::fs::rename(numbered(n), numbered(n + 1))?;
        }
    }
    std::fs::rename(path, numbered(1))
}

/// The filter: `FLOTILLA_LOG`, else `RUST_LOG`, else `info`.
fn filter() -> EnvFilter {
    EnvFilter::try_from_env("FLOTILLA_LOG")
        .or_else(|_| EnvFilter::try_from_env("RUST_LOG"))
        .unwrap_or_else(|_| EnvFilter::new("info"))
}

fn init_file(path: &std::path::Path) -> std::io::Result<()> {
    rotate(path, ROTATE_AT)?;
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let file = Arc::new(Mutex::new(file));
    let filter = filter();
    let writer = std::io::stderr.and(move || SharedFile(file.clone()));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer)
        .try_init();
    Ok(())
}

struct SharedFile(Arc<Mutex<std::fs::File>>);

impl std::io::Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut f) => f.write(buf),
            Err(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.lock() {
            Ok(mut f) => f.flush(),
            Err(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_log_is_rotated_keeping_the_newest_files() {
        let dir = tempfile::tempdir().expect("tmp");
        let log = dir.path().join("daemon.log");
        for round in 1..=5 {
            std::fs::write(&log, format!("round {round} {}", "x".repeat(20))).expect("write");
            rotate(&log, 10).expect("rotate");
            assert!(!log.exists(), "moved aside");
        }
        let read = |n: u32| std::fs::read_to_string(dir.path().join(format!("daemon.log.{n}")));
        assert!(read(1).expect("1").starts_with("round 5"));
        assert!(read(3).expect("3").starts_with("round 3"));
        assert!(read(4).is_err(), "at most {KEEP} kept");
        std::fs::write(&log, "small").expect("write");
        rotate(&log, 10).expect("rotate");
        assert!(log.exists(), "a small log stays");
    }
}
