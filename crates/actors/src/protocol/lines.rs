//! JSON-lines framing over any async byte stream, with a hard line limit
//! checked while reading, so an oversized or endless line never grows memory
//! past the limit.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Why a line could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The line grew past the limit; the rest of it was skipped.
    #[error("request line is longer than the limit of {limit} bytes")]
    TooLong {
        /// The limit.
        limit: usize,
    },
    /// The stream ended in the middle of a line.
    #[error("the stream ended in the middle of a line")]
    Truncated,
    /// The stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Reads one `\n`-terminated line (without its terminator). `Ok(None)` is a
/// clean end of stream. A line longer than `limit` is consumed up to its end
/// and reported as [`LineError::TooLong`], so the stream stays usable.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Vec<u8>>, LineError> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return match (line.is_empty() && !too_long, too_long) {
                (true, _) => Ok(None),
                (_, true) => Err(LineError::TooLong { limit }),
                _ => Err(LineError::Truncated),
            };
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() <= limit {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line = Vec::new();
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return if too_long {
                Err(LineError::TooLong { limit })
            } else {
                Ok(Some(line))
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_lines_and_skips_oversized_ones() {
        let data = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxx\n{}\npartial".to_vec();
        let mut r = tokio::io::BufReader::with_capacity(4, data.as_slice());
        assert_eq!(
            read_line(&mut r, 10).await.expect("1").as_deref(),
            Some(&b"{\"a\":1}"[..])
        );
        assert!(matches!(
            read_line(&mut r, 10).await,
            Err(LineError::TooLong { limit: 10 })
        ));
        assert_eq!(
            read_line(&mut r, 10).await.expect("3").as_deref(),
            Some(&b"{}"[..])
        );
        assert!(matches!(
            read_line(&mut r, 10).await,
            Err(LineError::Truncated)
        ));
        assert!(read_line(&mut r, 10).await.expect("eof").is_none());
    }
}
