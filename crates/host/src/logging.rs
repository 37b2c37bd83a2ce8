//! The daemon's logs: to stderr and to `logs/daemon.log`, never stdout.
//! `FLOTILLA_LOG` (an env-filter directive such as `debug`) sets the level.

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

fn init_file(path: &std::path::Path) -> std::io::Result<()> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let file = Arc::new(Mutex::new(file));
    let filter = EnvFilter::try_from_env("FLOTILLA_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
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
