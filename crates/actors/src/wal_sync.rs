//! A thread that syncs a write-ahead log while its writer goes on: the
//! writer appends a group's record, hands the sync here, applies the same
//! group to its redb transaction meanwhile, and waits for the sync only
//! before it commits. The disk's wait and the writer's CPU overlap instead
//! of adding up. Owns only the thread and the hand-over; what is synced
//! and what a failure means is the writer's.

use std::fs::File;
use std::io;
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
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("flotilla-wal-sync".into())
            .spawn(move || {
                while let Ok((file, reply)) = rx.recv() {
                    let _ = reply.send(file.sync_data());
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
