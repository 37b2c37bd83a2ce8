//! JSON-lines framing over any async byte stream, with a hard line limit
//! checked while reading, so an oversized or endless line never grows memory
//! past the limit.

use std::sync::atomic::{AtomicUsize, Ordering};

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
    /// Every reader sharing the budget together holds its maximum; the rest
    /// of this line was skipped.
    #[error("requests being read take {budget} bytes in all, the most this daemon holds at once")]
    Busy {
        /// The budget.
        budget: usize,
    },
    /// The stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The bytes that many readers may buffer at once, shared between them:
/// a server with many connections holds at most this much in partial
/// lines, however many clients send how much.
#[derive(Debug)]
pub struct LineBudget {
    used: AtomicUsize,
    max: usize,
}

impl LineBudget {
    /// A budget of `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            used: AtomicUsize::new(0),
            max,
        }
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                (u + n <= self.max).then_some(u + n)
            })
            .is_ok()
    }
}

/// What one line holds of a budget, given back when it is dropped.
struct Held<'a> {
    budget: Option<&'a LineBudget>,
    bytes: usize,
}

impl Held<'_> {
    fn take(&mut self, n: usize) -> bool {
        match self.budget {
            None => true,
            Some(b) if b.take(n) => {
                self.bytes += n;
                true
            }
            Some(_) => false,
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(b) = self.budget {
            b.used.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

/// Reads one `\n`-terminated line (without its terminator). `Ok(None)` is a
/// clean end of stream. A line longer than `limit` is consumed up to its end
/// and reported as [`LineError::TooLong`], so the stream stays usable.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Vec<u8>>, LineError> {
    read_line_within(reader, limit, None).await
}

/// [`read_line`], with the line's bytes counted against `budget` while it is
/// read: when the budget is spent, the rest of the line is skipped and
/// reported as [`LineError::Busy`]. The returned line no longer counts.
pub async fn read_line_within<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
    budget: Option<&LineBudget>,
) -> Result<Option<Vec<u8>>, LineError> {
    let mut held = Held { budget, bytes: 0 };
    let mut busy = false;
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return match (line.is_empty() && !too_long && !busy, too_long || busy) {
                (true, _) => Ok(None),
                (_, true) => Err(LineError::TooLong { limit }),
                _ => Err(LineError::Truncated),
            };
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let skipping = too_long || busy;
        if !skipping && line.len() + chunk.len() > limit {
            too_long = true;
            line = Vec::new();
        } else if !skipping && !held.take(chunk.len()) {
            busy = true;
            line = Vec::new();
        } else if !skipping {
            line.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return match (too_long, busy, budget) {
                (true, _, _) => Err(LineError::TooLong { limit }),
                (_, true, Some(b)) => Err(LineError::Busy { budget: b.max }),
                _ => Ok(Some(line)),
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

    #[tokio::test]
    async fn readers_share_one_budget_and_give_it_back() {
        let budget = LineBudget::new(10);
        let mut first: &[u8] = b"12345678\n";
        let line = read_line_within(&mut first, 100, Some(&budget)).await;
        assert_eq!(line.expect("read"), Some(b"12345678".to_vec()));
        assert_eq!(budget.used(), 0, "a returned line no longer counts");
        let mut big: &[u8] = b"0123456789ab\nok\n";
        let over = read_line_within(&mut big, 100, Some(&budget)).await;
        assert!(
            matches!(over, Err(LineError::Busy { budget: 10 })),
            "{over:?}"
        );
        let next = read_line_within(&mut big, 100, Some(&budget)).await;
        assert_eq!(next.expect("the stream stays usable"), Some(b"ok".to_vec()));
        assert_eq!(budget.used(), 0);
    }
}
