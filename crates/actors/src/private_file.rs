//! Files only their owner may read, private from the moment they exist: the
//! stores, the daemon's captured stderr, lane output.
//!
//! redb and `File::create` make files with the process's umask (often 0644),
//! so a file that must be private is created here first, mode 0600, and
//! only then handed to whoever writes it: there is no moment when another
//! user could open it. A file that exists with a looser mode (made by an
//! older release) has its group and other bits taken away. A control
//! socket is bound under a temporary name, made private, and only then
//! renamed into place, so no client can connect while it is still open to
//! others.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of a private file.
pub const PRIVATE_MODE: u32 = 0o600;

/// Makes sure `path` is a file only its owner may use: creates it empty,
/// mode 0600, when missing (an existing file's content is never touched),
/// and tightens an existing file that group or others may use.
pub fn ensure(path: &Path) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(PRIVATE_MODE)
        .open(path)?;
    tighten(&file)
}

/// Opens `path` for writing from its start (created or truncated), mode
/// 0600.
pub fn create(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(PRIVATE_MODE)
        .open(path)?;
    tighten(&file)?;
    Ok(file)
}

/// Writes `bytes` to a new or truncated `path`, mode 0600.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    io::Write::write_all(&mut create(path)?, bytes)
}

fn tighten(file: &File) -> io::Result<()> {
    let mode = file.metadata()?.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

/// Binds a Unix socket at `path` that only its owner may connect to,
/// replacing a stale socket left there. Non-blocking, for an async runtime.
pub fn bind_socket(path: &Path) -> io::Result<std::os::unix::net::UnixListener> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let staging = path.with_file_name(format!(".{name}.{}.binding", std::process::id()));
    let _ = fs::remove_file(&staging);
    let listener = std::os::unix::net::UnixListener::bind(&staging)?;
    let placed = fs::set_permissions(&staging, Permissions::from_mode(PRIVATE_MODE))
        .and_then(|()| fs::rename(&staging, path));
    if let Err(e) = placed {
        let _ = fs::remove_file(&staging);
        return Err(e);
    }
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Whether `path` exists and holds at least one byte.
pub fn has_content(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn ensure_creates_0600_and_keeps_content() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("f");
        ensure(&path).expect("ensure");
        assert_eq!(mode(&path), 0o600);
        assert!(!has_content(&path));
        fs::write(&path, "kept").expect("write");
        fs::set_permissions(&path, Permissions::from_mode(0o644)).expect("chmod");
        ensure(&path).expect("ensure again");
        assert_eq!(mode(&path), 0o600, "tightened");
        assert_eq!(fs::read_to_string(&path).expect("read"), "kept");
    }

    #[test]
    fn create_and_write_truncate_and_stay_private() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("f");
        fs::write(&path, "old and long").expect("write");
        fs::set_permissions(&path, Permissions::from_mode(0o664)).expect("chmod");
        write(&path, b"new").expect("write");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn a_socket_is_private_replaces_a_stale_one_and_leaves_no_staging_name() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("d.sock");
        fs::write(&path, "stale").expect("stale");
        let _listener = bind_socket(&path).expect("bind");
        assert_eq!(mode(&path), 0o600);
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("d.sock")]);
        std::os::unix::net::UnixStream::connect(&path).expect("connect");
    }
}
