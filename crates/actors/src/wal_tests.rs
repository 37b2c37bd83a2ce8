//! The log file alone: what survives a torn tail, a flipped byte, a
//! foreign header and a clear.

use std::os::unix::fs::PermissionsExt;

use super::*;

const ID: u64 = 0x5eed;

fn appended(path: &Path, records: &[(u64, &[u8])]) -> WalFile {
    let mut wal = WalFile::open(path, ID).expect("open").wal;
    for (seq, payload) in records {
        wal.append(*seq, payload).expect("append");
    }
    wal.sync().expect("sync");
    wal
}

fn seqs(opened: &Opened) -> Vec<u64> {
    opened.records.iter().map(|r| r.seq).collect()
}

#[test]
fn records_come_back_in_order_and_the_file_is_private() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    drop(appended(&path, &[(7, b"a"), (8, b""), (9, &[0u8; 5000])]));
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let opened = WalFile::open(&path, ID).expect("reopen");
    assert_eq!(seqs(&opened), [7, 8, 9]);
    assert_eq!(opened.records[0].payload, b"a");
    assert_eq!(opened.records[2].payload.len(), 5000);
    assert_eq!((opened.cut, opened.set_aside.is_none()), (0, true));
}

#[test]
fn a_torn_tail_is_cut_off_and_appending_goes_on_after_the_last_good_record() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    drop(appended(&path, &[(1, b"one"), (2, b"two")]));
    let full = std::fs::metadata(&path).expect("meta").len();
    for cut in 1..=(RECORD_HEAD as u64 + 3) {
        let f = OpenOptions::new().write(true).open(&path).expect("f");
        f.set_len(full - cut).expect("cut");
        let opened = WalFile::open(&path, ID).expect("reopen");
        assert_eq!(seqs(&opened), [1], "cut {cut}");
        assert_eq!(opened.cut, full - cut - opened.wal.len());
        let mut wal = opened.wal;
        wal.append(2, b"two").expect("append");
        wal.sync().expect("sync");
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), full);
    }
    assert_eq!(seqs(&WalFile::open(&path, ID).expect("reopen")), [1, 2]);
}

#[test]
fn a_flipped_byte_or_a_gap_in_the_numbers_ends_the_log_there() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    drop(appended(&path, &[(1, b"one"), (2, b"two"), (3, b"three")]));
    let mut bytes = std::fs::read(&path).expect("read");
    let second_payload = HEADER as usize + RECORD_HEAD + 3 + RECORD_HEAD;
    bytes[second_payload] ^= 1;
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(seqs(&WalFile::open(&path, ID).expect("reopen")), [1]);

    let gap = dir.path().join("gap.wal");
    drop(appended(&gap, &[(1, b"one"), (3, b"three")]));
    assert_eq!(seqs(&WalFile::open(&gap, ID).expect("reopen")), [1]);
}

#[test]
fn a_log_of_another_store_is_set_aside_never_read() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    drop(appended(&path, &[(1, b"theirs")]));
    let opened = WalFile::open(&path, ID + 1).expect("open");
    assert!(opened.records.is_empty());
    let aside = opened.set_aside.expect("set aside");
    assert_eq!(
        std::fs::read(&aside).expect("kept").len() as u64,
        opened.wal.len() + RECORD_HEAD as u64 + 6
    );
    assert!(opened.wal.is_empty());
}

#[test]
fn a_cleared_log_reads_empty_and_an_old_record_left_behind_is_not_read_after_a_new_one() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    let mut wal = appended(&path, &[(1, b"one"), (2, b"two"), (3, b"three")]);
    let old = std::fs::read(&path).expect("read");
    wal.clear().expect("clear");
    assert!(wal.is_empty());
    wal.append(4, b"four").expect("append");
    wal.sync().expect("sync");
    // A crash that kept the new record but not the shortening: the old
    // records' bytes after it are stale and must not be read.
    let mut torn = std::fs::read(&path).expect("read");
    torn.extend_from_slice(&old[torn.len()..]);
    std::fs::write(&path, &torn).expect("write");
    assert_eq!(seqs(&WalFile::open(&path, ID).expect("reopen")), [4]);
}
