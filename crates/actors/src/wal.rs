//! A write-ahead log file: numbered records appended and synced, read back
//! after a crash up to the first torn or foreign one.
//!
//! The file starts with a header (magic and the id of the store it belongs
//! to); each record is `length, crc32, sequence number, payload`, the
//! checksum covering the number and the payload. Reading stops at the
//! first record that is short, fails its checksum or does not follow its
//! predecessor's number: that is where a crash cut the file (or where the
//! zeros of its preallocated room, or records older than the last emptying,
//! begin), and the next record is written there. Owns only the bytes of the file; what a payload means
//! and when the log may be emptied is its user's (the store's) business.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::private_file::PRIVATE_MODE;

const MAGIC: &[u8; 8] = b"FLOTWAL1";
/// Bytes before the first record.
pub const HEADER: u64 = 16;
/// Bytes before a record's payload.
const RECORD_HEAD: usize = 16;
/// Bytes of zeros the file is kept at, at least ([`prefill`]).
pub const PREALLOC: u64 = 1024 * 1024;
/// Largest payload read back: anything larger is a damaged length.
pub const MAX_RECORD: usize = crate::codec::HARD_LIMIT;

/// One record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalRecord {
    /// Its number.
    pub seq: u64,
    /// What was appended.
    pub payload: Vec<u8>,
}

/// What opening a log found.
#[derive(Debug)]
pub struct Opened {
    /// The log, ready to append after its last good record.
    pub wal: WalFile,
    /// Its good records, in order.
    pub records: Vec<WalRecord>,
    /// A log of another store, set aside under this name.
    pub set_aside: Option<PathBuf>,
}

/// An open log.
#[derive(Debug)]
pub struct WalFile {
    file: Arc<File>,
    len: u64,
}

impl WalFile {
    /// Opens the log at `path` for the store `id`, creating it (0600) when
    /// missing. A log whose header names another store is renamed aside
    /// (`*.orphan-<ms>`), never applied; a torn tail is written over.
    pub fn open(path: &Path, id: u64) -> io::Result<Opened> {
        let mut set_aside = None;
        let mut bytes = read_all(path)?;
        if !bytes.is_empty() && !header_matches(&bytes, id) && bytes.len() as u64 >= HEADER {
            let aside = path.with_extension(format!(
                "wal.orphan-{}",
                crate::model::Timestamp::now().millis()
            ));
            std::fs::rename(path, &aside)?;
            set_aside = Some(aside);
            bytes.clear();
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(PRIVATE_MODE)
            .open(path)?;
        crate::private_file::ensure(path)?;
        if !header_matches(&bytes, id) {
            let mut header = MAGIC.to_vec();
            header.extend_from_slice(&id.to_le_bytes());
            file.set_len(0)?;
            file.write_all_at(&header, 0)?;
            file.sync_all()?;
            bytes = header;
        }
        let (records, end) = scan(&bytes);
        prefill(&file, bytes.len() as u64);
        Ok(Opened {
            wal: Self {
                file: Arc::new(file),
                len: end,
            },
            records,
            set_aside,
        })
    }

    /// Appends a record (not yet synced); returns where it starts, for
    /// [`Self::truncate`].
    pub fn append(&mut self, seq: u64, payload: &[u8]) -> io::Result<u64> {
        let start = self.len;
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|n| *n as usize <= MAX_RECORD)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "record too large"))?;
        let mut record = Vec::with_capacity(RECORD_HEAD + payload.len());
        record.extend_from_slice(&len.to_le_bytes());
        record.extend_from_slice(&checksum(seq, payload).to_le_bytes());
        record.extend_from_slice(&seq.to_le_bytes());
        record.extend_from_slice(payload);
        if let Err(e) = self.file.write_all_at(&record, start) {
            // Give back what a partial write took (a full disk).
            let _ = self.file.set_len(start);
            return Err(e);
        }
        self.len = start + record.len() as u64;
        Ok(start)
    }

    /// The file, for a sync on another thread (`wal_sync`).
    pub fn shared(&self) -> Arc<File> {
        self.file.clone()
    }

    /// Makes everything appended so far durable.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Takes back the record at `at` (one that must not count): its head
    /// is zeroed, so reading stops there.
    pub fn truncate(&mut self, at: u64) -> io::Result<()> {
        self.file.write_all_at(&[0u8; RECORD_HEAD], at)?;
        self.len = at;
        self.file.sync_data()
    }

    /// Empties the log once its records are durable elsewhere; the next
    /// record is written over the first. Nothing is written: an old record
    /// left after a newer one is numbered below the store's position, so
    /// it never follows the newer one and is never read.
    pub fn clear(&mut self) {
        self.len = HEADER;
    }

    /// Empties the log and gives its space back to the disk (a full disk).
    pub fn release(&mut self) -> io::Result<()> {
        self.len = HEADER;
        self.file.set_len(HEADER)
    }

    /// Bytes in the log, header included.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the log holds no record.
    pub fn is_empty(&self) -> bool {
        self.len <= HEADER
    }
}

/// Makes the file at least [`PREALLOC`] bytes of written zeros, so that
/// appending overwrites blocks the file already has and a sync writes data
/// alone, not the file's size and extents (about a fifth cheaper on ext4).
/// Best effort: on a disk without room the file stays as it was.
fn prefill(file: &File, from: u64) {
    if from >= PREALLOC {
        return;
    }
    let zeros = vec![0u8; (PREALLOC - from) as usize];
    let done = file
        .write_all_at(&zeros, from)
        .and_then(|()| file.sync_all());
    if done.is_err() {
        let _ = file.set_len(from);
    }
}

fn read_all(path: &Path) -> io::Result<Vec<u8>> {
    match File::open(path) {
        Ok(mut f) => {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)?;
            Ok(bytes)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

fn header_matches(bytes: &[u8], id: u64) -> bool {
    bytes.len() as u64 >= HEADER && &bytes[..8] == MAGIC && bytes[8..16] == id.to_le_bytes()
}

fn checksum(seq: u64, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&seq.to_le_bytes());
    h.update(payload);
    h.finalize()
}

/// The good records after the header, and where they end.
fn scan(bytes: &[u8]) -> (Vec<WalRecord>, u64) {
    let mut records: Vec<WalRecord> = Vec::new();
    let mut at = HEADER as usize;
    while let Some(head) = bytes.get(at..at + RECORD_HEAD) {
        let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let len = word(0) as usize;
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&head[8..16]);
        let seq = u64::from_le_bytes(seq);
        let follows = records
            .last()
            .is_none_or(|last| last.seq.checked_add(1) == Some(seq));
        let body = at + RECORD_HEAD;
        let Some(payload) = bytes.get(body..body.saturating_add(len)) else {
            break;
        };
        if len > MAX_RECORD || !follows || checksum(seq, payload) != word(4) {
            break;
        }
        records.push(WalRecord {
            seq,
            payload: payload.to_vec(),
        });
        at = body + len;
    }
    (records, at as u64)
}

#[cfg(test)]
#[path = "wal_tests.rs"]
mod tests;
