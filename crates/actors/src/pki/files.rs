//! Key and certificate files: written with the right modes, read back as
//! DER for TLS.
//!
//! Owns the modes: private keys 0600 and never overwritten, certificates
//! 0644, key directories 0700. Touches only the paths it is given; knows
//! nothing of where a home keeps them.

use std::fs::{self, DirBuilder, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::PkiError;

/// Mode of private key files.
pub const KEY_MODE: u32 = 0o600;
/// Mode of certificate files.
pub const CERT_MODE: u32 = 0o644;
/// Mode of directories holding keys.
pub const DIR_MODE: u32 = 0o700;

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> PkiError + use<> {
    let path = path.to_owned();
    move |source| PkiError::Io {
        action,
        path,
        source,
    }
}

/// Creates `dir` (and its parents) if needed and makes it 0700.
pub fn ensure_private_dir(dir: &Path) -> Result<(), PkiError> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(io("could not create the directory", dir))?;
    fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
        .map_err(io("could not restrict the directory", dir))
}

/// Writes a new private key file, mode 0600. An existing file is never
/// replaced.
pub fn write_private_key(path: &Path, pem: &str) -> Result<(), PkiError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(KEY_MODE)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => PkiError::KeyExists(path.to_owned()),
            _ => io("could not create", path)(e),
        })?;
    file.write_all(pem.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io("could not write", path))
}

/// Writes (or replaces) a certificate file, mode 0644.
pub fn write_certificate(path: &Path, pem: &str) -> Result<(), PkiError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(CERT_MODE)
        .open(path)
        .map_err(io("could not create", path))?;
    file.write_all(pem.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io("could not write", path))?;
    fs::set_permissions(path, Permissions::from_mode(CERT_MODE))
        .map_err(io("could not chmod", path))
}

/// Reads a text file (a PEM).
pub fn read_pem(path: &Path) -> Result<String, PkiError> {
    fs::read_to_string(path).map_err(io("could not read", path))
}

/// Reads every certificate of a PEM file, in order (leaf first).
pub fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, PkiError> {
    let pem = read_pem(path)?;
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PkiError::Parse(format!("{}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(PkiError::Parse(format!(
            "{} holds no certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// Reads a private key file.
pub fn read_private_key(path: &Path) -> Result<PrivateKeyDer<'static>, PkiError> {
    let pem = read_pem(path)?;
    PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| PkiError::BadKey {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}
