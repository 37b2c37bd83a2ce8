//! A thread that syncs a write-ahead log while its writer goes on: the
//! writer appends a group's record, hands the sync here, applies the same
//! group to its redb transaction meanwhile, and waits for the sync only
//! before it commits. The disk's wait and the writer's CPU overlap instead
//! of adding up. Owns only the thread and the hand-over; what is synced
//! and what a failure means is the writer's.
//!
//! Test hook (with `FLOTILLA_TEST_HOOKS=1`): while the file that
//! `FLOTILLA_TEST_SYNC_FAIL` names exists, every sync fails as a disk's
//! would, so the tests can attack what a failed sync must do.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;

type Request = (Arc<File>, mpsc::SyncSender<io::Result<()>>);

/// The handle on the syncing thread; it ends when this is dropped.
#[derive(Debug)]
pub struct WalSyncer {
    tx: mpsc::Sender<Request>,
}

/// A sync under way.
#[derive(Debug)]
pub enum SyncWait {
    /// On the thread.
    Handed(mpsc::Receiver<io::Result<()>>),
    /// The thread is gone: synced when waited for.
    Inline(Arc<File>),
}

impl WalSyncer {
    /// Starts the thread.
    pub fn start() -> io::Result<Self> {
        let fail_while = crate::test_hook::path("FLOTILLA_TEST_SYNC_FAIL");
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("flotilla-wal-sync".into())
            .spawn(move || {
                while let Ok((file, reply)) = rx.recv() {
                    let _ = reply.send(sync(&file, fail_while.as_deref()));
                }
            })?;
        Ok(Self { tx })
    }

    /// Starts syncing `file`.
    pub fn sync(&self, file: Arc<File>) -> SyncWait {
        let (reply, done) = mpsc::sync_channel(1);
        match self.tx.send((file, reply)) {
            Ok(()) => SyncWait::Handed(done),
            Err(mpsc::SendError((file, _))) => SyncWait::Inline(file),
        }
    }
}

/// Syncs `file`, or fails while the test hook's file exists.
fn sync(file: &File, fail_while: Option<&Path>) -> io::Result<()> {
    if fail_while.is_some_and(Path::exists) {
        return Err(io::Error::other(
            "the sync was failed by the test hook FLOTILLA_TEST_SYNC_FAIL",
        ));
    }
    file.sync_data()
}

impl SyncWait {
    /// Waits until the file is synced.
    pub fn wait(self) -> io::Result<()> {
        match self {
            Self::Handed(done) => done
                .recv()
                .unwrap_or_else(|_| Err(io::Error::other("the log's sync thread stopped"))),
            Self::Inline(file) => file.sync_data(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_fails_syncs_only_while_its_file_exists() {
        let dir = tempfile::tempdir().expect("dir");
        let file = File::create(dir.path().join("f")).expect("file");
        let hook = dir.path().join("fail");
        sync(&file, Some(&hook)).expect("no file yet: synced");
        std::fs::write(&hook, "").expect("hook");
        assert!(sync(&file, Some(&hook)).is_err(), "failed while it exists");
        sync(&file, None).expect("no hook: synced");
        std::fs::remove_file(&hook).expect("rm");
        sync(&file, Some(&hook)).expect("gone again: synced");
    }

    #[test]
    fn a_sync_is_answered_by_the_thread_and_inline_once_it_is_gone() {
        let dir = tempfile::tempdir().expect("dir");
        let file = Arc::new(File::create(dir.path().join("f")).expect("file"));
        let syncer = WalSyncer::start().expect("start");
        let wait = syncer.sync(file.clone());
        assert!(matches!(wait, SyncWait::Handed(_)));
        wait.wait().expect("synced");
        let (tx, rx) = mpsc::channel::<Request>();
        drop(rx);
        let gone = WalSyncer { tx };
        let wait = gone.sync(file);
        assert!(matches!(wait, SyncWait::Inline(_)));
        wait.wait().expect("synced inline");
    }
}
