//! Frames on a byte stream: a 4-byte big-endian length, then the frame
//! encoded by [`crate::codec`].
//!
//! Owns the length prefix and the size limit, which is checked before
//! anything is allocated. Works on any tokio stream it is handed (quinn's
//! `RecvStream`/`SendStream`, a `duplex` in tests); never opens, closes or
//! times out one: callers do.

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::frames::{Forward, Frame};
use crate::codec::{self, CodecError};
use crate::model::Message;
use crate::names::PeerId;

/// The largest frame accepted unless a caller says otherwise: 8 MiB.
pub const DEFAULT_MAX_FRAME: usize = 8 * 1024 * 1024;

/// Room a `Deliver` needs beyond the `Forward` of the same message: its
/// sequence number, a varint of at most 10 bytes.
const DELIVER_EXTRA: usize = 10;

/// The largest frame `message` makes on the hub links for its `remote`
/// recipients: its `Forward` to the hub, or a `Deliver` to one recipient's
/// host (fewer recipients, but a sequence number).
pub fn message_frame_size(message: &Message, remote: &[PeerId]) -> Result<usize, CodecError> {
    let forward = Frame::Forward(Forward {
        message: message.clone(),
        to: remote.to_vec(),
    });
    Ok(codec::encode(&forward)?.len() + DELIVER_EXTRA)
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    /// The length prefix announces more than the limit.
    #[error(
        "a frame of {size} bytes is over the limit of {limit} bytes; the peer misbehaves or runs an incompatible flotilla"
    )]
    TooLarge {
        /// The announced (or encoded) size.
        size: u64,
        /// The limit.
        limit: usize,
    },
    /// The stream ended inside a frame.
    #[error("the link closed in the middle of a frame; the peer went away or crashed")]
    Truncated,
    /// The bytes of a frame did not decode.
    #[error("a frame could not be decoded ({0}); the peer runs an incompatible flotilla")]
    Codec(#[from] CodecError),
    /// The stream failed.
    #[error("the link failed: {0}")]
    Io(#[from] std::io::Error),
}

fn eof_is_truncation(e: std::io::Error) -> FramingError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        FramingError::Truncated
    } else {
        FramingError::Io(e)
    }
}

/// Reads one frame of at most `limit` bytes. `Ok(None)` when the stream
/// ended cleanly between frames.
pub async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Frame>, FramingError> {
    read_message(reader, limit).await
}

/// Reads one value of any frame type (the hub link's [`Frame`], the
/// enrollment channel's `EnrollFrame`) of at most `limit` bytes. `Ok(None)`
/// when the stream ended cleanly between frames.
pub async fn read_message<T: DeserializeOwned, R: AsyncRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<T>, FramingError> {
    Ok(read_sized(reader, limit).await?.map(|(value, _)| value))
}

/// Like [`read_message`], with the value's size on the wire (header and
/// body), for budgets.
pub async fn read_sized<T: DeserializeOwned, R: AsyncRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<(T, usize)>, FramingError> {
    let Some(body) = read_body(reader, limit).await? else {
        return Ok(None);
    };
    Ok(Some((codec::decode(&body, limit)?, 4 + body.len())))
}

/// Reads one value's encoded body (at most `limit` bytes) without decoding
/// it, for a reader that decodes only some (decode it with
/// [`codec::decode`]). `Ok(None)` when the stream ended cleanly.
pub async fn read_body<R: AsyncRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Vec<u8>>, FramingError> {
    let mut header = [0u8; 4];
    let first = reader.read(&mut header).await?;
    if first == 0 {
        return Ok(None);
    }
    reader
        .read_exact(&mut header[first..])
        .await
        .map_err(eof_is_truncation)?;
    let size = u32::from_be_bytes(header);
    let limit = limit.min(codec::HARD_LIMIT);
    if u64::from(size) > limit as u64 {
        return Err(FramingError::TooLarge {
            size: size.into(),
            limit,
        });
    }
    let mut body = vec![0u8; size as usize];
    reader
        .read_exact(&mut body)
        .await
        .map_err(eof_is_truncation)?;
    Ok(Some(body))
}

/// Writes one frame, refusing one over `limit` bytes (the peer would refuse
/// it too).
pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    frame: &Frame,
    limit: usize,
) -> Result<(), FramingError> {
    write_message(writer, frame, limit).await
}

/// Writes one value of any frame type, refusing one over `limit` bytes.
pub async fn write_message<T: Serialize, W: AsyncWrite + Unpin>(
    writer: &mut W,
    frame: &T,
    limit: usize,
) -> Result<(), FramingError> {
    let bytes = encode_message(frame, limit)?;
    writer.write_all(&bytes).await?;
    writer.flush().await?;
    Ok(())
}

/// One value as it goes on the wire (length prefix and body), refusing
/// one over `limit` bytes.
pub fn encode_message<T: Serialize>(frame: &T, limit: usize) -> Result<Vec<u8>, FramingError> {
    let body = codec::encode(frame)?;
    let limit = limit.min(codec::HARD_LIMIT);
    if body.len() > limit {
        return Err(FramingError::TooLarge {
            size: body.len() as u64,
            limit,
        });
    }
    let size = u32::try_from(body.len()).map_err(|_| FramingError::TooLarge {
        size: body.len() as u64,
        limit,
    })?;
    let mut bytes = Vec::with_capacity(4 + body.len());
    bytes.extend_from_slice(&size.to_be_bytes());
    bytes.extend_from_slice(&body);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test]
    async fn frames_follow_each_other_and_a_clean_end_is_none() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        for nonce in 0..3 {
            write_frame(&mut a, &Frame::Ping { nonce }, 64)
                .await
                .expect("write");
        }
        drop(a);
        for nonce in 0..3 {
            let frame = read_frame(&mut b, 64).await.expect("read");
            assert_eq!(frame, Some(Frame::Ping { nonce }));
        }
        assert!(read_frame(&mut b, 64).await.expect("end").is_none());
    }

    #[tokio::test]
    async fn an_oversized_length_is_refused_before_allocating() {
        let (mut a, mut b) = tokio::io::duplex(64);
        a.write_all(&u32::MAX.to_be_bytes()).await.expect("write");
        let err = read_frame(&mut b, DEFAULT_MAX_FRAME)
            .await
            .expect_err("too large");
        assert!(
            matches!(err, FramingError::TooLarge { size, limit: DEFAULT_MAX_FRAME } if size == u64::from(u32::MAX)),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_frame_over_the_limit_is_not_written() {
        let (mut a, _b) = tokio::io::duplex(64);
        let err = write_frame(&mut a, &Frame::Ping { nonce: u64::MAX }, 2)
            .await
            .expect_err("too large");
        assert!(
            matches!(err, FramingError::TooLarge { limit: 2, .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_cut_frame_is_truncated() {
        for bytes in [&[0u8, 0][..], &[0, 0, 0, 9, 1, 2][..]] {
            let (mut a, mut b) = tokio::io::duplex(64);
            a.write_all(bytes).await.expect("write");
            drop(a);
            let err = read_frame(&mut b, 64).await.expect_err("truncated");
            assert!(matches!(err, FramingError::Truncated), "{bytes:?}: {err}");
        }
    }

    #[tokio::test]
    async fn garbage_does_not_decode() {
        let (mut a, mut b) = tokio::io::duplex(64);
        a.write_all(&[0, 0, 0, 2, 0xff, 0xff]).await.expect("write");
        let err = read_frame(&mut b, 64).await.expect_err("garbage");
        assert!(matches!(err, FramingError::Codec(_)), "{err}");
    }
}
