//! Newline-delimited framing of the server's stdin with a bound on the line length.
//!
//! A line over the limit is never held whole: its first [`KEPT_PREFIX`] bytes are kept (so the
//! error can name the request's id) and the rest is dropped as it arrives.

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

/// The longest request line accepted, without its newline.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// How much of an oversized line is kept to look for its id.
pub const KEPT_PREFIX: usize = 64 * 1024;

/// One step of reading stdin.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A whole line, without its `\n` (or the last bytes before EOF).
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE`]: the start of it. The rest is being discarded.
    Oversized(Vec<u8>),
    /// The stream ended or failed.
    End,
}

pub struct LineReader<R> {
    input: R,
    line: Vec<u8>,
    /// Dropping the remainder of an oversized line until its newline.
    discarding: bool,
    max_line: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(input: R) -> Self {
        LineReader::with_limit(input, MAX_LINE)
    }

    fn with_limit(input: R, max_line: usize) -> Self {
        LineReader { input, line: Vec::new(), discarding: false, max_line }
    }

    pub async fn next(&mut self) -> Frame {
        loop {
            let available = match self.input.fill_buf().await {
                Ok(available) => available,
                Err(_) => return Frame::End,
            };
            if available.is_empty() {
                return match std::mem::take(&mut self.line) {
                    line if line.is_empty() || self.discarding => Frame::End,
                    line => Frame::Line(line),
                };
            }
            let newline = newline_at(available);
            let take = newline.map_or(available.len(), |at| at + 1);
            let body = &available[..newline.unwrap_or(available.len())];
            let mut frame = None;
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.line.len() + body.len() > self.max_line {
                let room = KEPT_PREFIX.saturating_sub(self.line.len()).min(body.len());
                let mut prefix = std::mem::take(&mut self.line);
                prefix.truncate(KEPT_PREFIX);
                prefix.extend_from_slice(&body[..room]);
                self.discarding = newline.is_none();
                frame = Some(Frame::Oversized(prefix));
            } else {
                self.line.extend_from_slice(body);
                if newline.is_some() {
                    frame = Some(Frame::Line(std::mem::take(&mut self.line)));
                }
            }
            self.input.consume(take);
            if let Some(frame) = frame {
                return frame;
            }
        }
    }
}

fn newline_at(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn frames(input: &[u8], max_line: usize) -> Vec<Frame> {
        let reader = BufReader::with_capacity(4, input);
        let mut lines = LineReader::with_limit(reader, max_line);
        let mut out = Vec::new();
        loop {
            match lines.next().await {
                Frame::End => return out,
                frame => out.push(frame),
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_and_drops_the_tail_of_long_ones() {
        let got = frames(b"ab\n0123456789abc\nxyz\nlast", 10).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"ab".to_vec()),
                Frame::Oversized(b"0123456789abc".to_vec()),
                Frame::Line(b"xyz".to_vec()),
                Frame::Line(b"last".to_vec()),
            ]
        );
        let got = frames(b"0123456789abcdef", 10).await;
        assert_eq!(got, vec![Frame::Oversized(b"0123456789ab".to_vec())]);
    }
}
