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
    assert!(opened.set_aside.is_none());
    assert!(
        std::fs::metadata(&path).expect("meta").len() >= PREALLOC,
        "the file keeps its room written"
    );
}

#[test]
fn a_torn_tail_is_written_over_by_the_next_record() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    drop(appended(&path, &[(1, b"one"), (2, b"two")]));
    let second = HEADER + RECORD_HEAD as u64 + 3;
    for kept in 1..(RECORD_HEAD as u64 + 3) {
        // A crash that wrote only the first `kept` bytes of record 2.
        let f = OpenOptions::new().write(true).open(&path).expect("f");
        let tail = vec![0u8; (RECORD_HEAD as u64 + 3 - kept) as usize];
        f.write_all_at(&tail, second + kept).expect("tear");
        let opened = WalFile::open(&path, ID).expect("reopen");
        assert_eq!(seqs(&opened), [1], "kept {kept}");
        assert_eq!(opened.wal.len(), second);
        let mut wal = opened.wal;
        wal.append(2, b"two").expect("append");
        wal.sync().expect("sync");
        assert_eq!(seqs(&WalFile::open(&path, ID).expect("reopen")), [1, 2]);
    }
}

#[test]
fn a_record_taken_back_is_not_read() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    let mut wal = appended(&path, &[(1, b"one")]);
    let start = wal.append(2, b"refused").expect("append");
    wal.truncate(start).expect("take back");
    assert_eq!(seqs(&WalFile::open(&path, ID).expect("reopen")), [1]);
    wal.append(2, b"two").expect("again");
    wal.sync().expect("sync");
    let opened = WalFile::open(&path, ID).expect("reopen");
    assert_eq!(opened.records[1].payload, b"two");
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
    let kept = WalFile::open(&aside, ID).expect("the aside log is kept whole");
    assert_eq!(seqs(&kept), [1]);
    assert!(opened.wal.is_empty());
}

#[test]
fn a_cleared_log_reads_empty_and_an_older_record_after_a_new_one_is_not_read() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.wal");
    let mut wal = appended(&path, &[(1, b"one!"), (2, b"two"), (3, b"three")]);
    wal.clear();
    assert!(wal.is_empty());
    // Record 4 is written over record 1, exactly as long: record 2 and 3
    // follow it intact in the file, but are older and never read.
    wal.append(4, b"four").expect("append");
    wal.sync().expect("sync");
    assert_eq!(seqs(&WalFile::open(&path, ID).expect("reopen")), [4]);
    wal.release().expect("release");
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), HEADER);
}
