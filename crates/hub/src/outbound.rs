//! A link's outbound queue: the frames the hub sends one host, bounded in
//! bytes. A frame is encoded when it is queued (so its size is known),
//! counted until the link's writer has handed it to QUIC, and written in
//! order. A host that does not read lets QUIC's window fill and then this
//! queue: the first frame that would pass the bound closes the link ("the
//! host does not read") instead of growing the hub's memory.
//!
//! Owns the queue and its count; must not decide what is sent (the core
//! and the session do) nor read from the host.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use flotilla_actors::federation::{Frame, FramingError, encode_message};
use tokio::sync::mpsc;

use crate::transport::close;

/// The default bound of one link's outbound queue.
pub const DEFAULT_LINK_QUEUE_BYTES: usize = 32 * 1024 * 1024;

/// Why a frame was not queued.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    /// The frame cannot be encoded within the frame limit.
    #[error(transparent)]
    Frame(#[from] FramingError),
    /// The host does not read: the queue passed its bound; the link is closed.
    #[error("the host does not read: {queued} bytes wait for it (bound {bound}); link closed")]
    NotReading {
        /// Bytes waiting, with this frame.
        queued: usize,
        /// The bound.
        bound: usize,
    },
    /// The link has ended.
    #[error("the link has ended")]
    Closed,
}

/// Whether a frame of `size` bytes fits behind `queued` bytes under `bound`.
pub fn fits(queued: usize, size: usize, bound: usize) -> bool {
    queued.saturating_add(size) <= bound
}

/// The sending half, held by the session and the core.
#[derive(Debug, Clone)]
pub struct Outbound {
    tx: mpsc::UnboundedSender<Bytes>,
    queued: Arc<AtomicUsize>,
    bound: usize,
    max_frame: usize,
    connection: quinn::Connection,
}

/// The writing half, run by the link's writer.
#[derive(Debug)]
pub struct OutboundWriter {
    rx: mpsc::UnboundedReceiver<Bytes>,
    queued: Arc<AtomicUsize>,
}

/// A queue for `connection`, bounded at `bound` bytes.
pub fn outbound(
    connection: quinn::Connection,
    bound: usize,
    max_frame: usize,
) -> (Outbound, OutboundWriter) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let sender = Outbound {
        tx,
        queued: queued.clone(),
        bound,
        max_frame,
        connection,
    };
    (sender, OutboundWriter { rx, queued })
}

impl Outbound {
    /// Queues `frame`; over the bound, closes the link.
    pub fn send(&self, frame: &Frame) -> Result<(), OutboundError> {
        self.send_encoded(self.encode(frame)?)
    }

    /// The bytes `frame` takes in the queue; shared, not copied, by every
    /// link it is queued on.
    pub fn encode(&self, frame: &Frame) -> Result<Bytes, OutboundError> {
        Ok(encode_message(frame, self.max_frame)?.into())
    }

    /// Queues a frame made by [`Outbound::encode`]; over the bound, closes
    /// the link.
    pub fn send_encoded(&self, bytes: Bytes) -> Result<(), OutboundError> {
        let size = bytes.len();
        let before = self.queued.fetch_add(size, Ordering::AcqRel);
        if !fits(before, size, self.bound) {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            let error = OutboundError::NotReading {
                queued: before + size,
                bound: self.bound,
            };
            let reason = error.to_string();
            self.connection
                .close(close::SLOW_READER.into(), reason.as_bytes());
            return Err(error);
        }
        self.tx.send(bytes).map_err(|_| {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            OutboundError::Closed
        })
    }

    /// The largest frame this link takes.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// The bound of the queue, in bytes.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// Bytes waiting now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

impl OutboundWriter {
    /// Writes the queued frames in order until the queue closes or the
    /// stream fails.
    pub async fn run(mut self, mut send: quinn::SendStream) {
        while let Some(bytes) = self.rx.recv().await {
            let size = bytes.len();
            let written = send.write_chunk(bytes).await;
            self.queued.fetch_sub(size, Ordering::AcqRel);
            if let Err(e) = written {
                tracing::debug!("writing to a host failed: {e}");
                return;
            }
        }
        let _ = send.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_fits_up_to_the_bound_and_not_past_it() {
        assert!(fits(0, 10, 10));
        assert!(fits(5, 5, 10));
        assert!(!fits(6, 5, 10));
        assert!(!fits(usize::MAX, 1, usize::MAX - 1));
    }
}
