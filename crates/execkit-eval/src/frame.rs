//! The kernel protocol (spec-eval.md E28–E31) on the host side: the frame types come from
//! `execkit_protocol::kernel` (shared with the JavaScript kernel), re-exported here; this
//! module reads them from the event pipe.
//!
//! Frames from a kernel are untrusted input. They are parsed by serde into [`KernelFrame`], a
//! tagged enum whose catch-all variant absorbs unknown types; a line that does not parse is
//! counted, never acted on. Lines are read with a hard length bound so a kernel cannot make
//! the host buffer more than [`MAX_LINE`] bytes.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

pub use execkit_protocol::kernel::*;

/// One line read from the event pipe.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A parsed frame.
    Frame(KernelFrame),
    /// A line that is not a valid frame (bad JSON, missing field, …): dropped and counted.
    Bad(String),
    /// A line over [`MAX_LINE`]: a protocol violation.
    TooLong,
    Eof,
}

/// Parses one line as an untrusted frame.
pub fn parse_line(bytes: &[u8]) -> Line {
    match serde_json::from_slice::<KernelFrame>(bytes) {
        Ok(frame) => Line::Frame(frame),
        Err(err) => Line::Bad(err.to_string()),
    }
}

/// Reads the next line, holding at most `max` bytes of it in memory.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() { Line::Eof } else { parse_line(buf) });
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                if buf.len() + pos > max {
                    return Ok(Line::TooLong);
                }
                buf.extend_from_slice(&available[..pos]);
                reader.consume(pos + 1);
                let line = buf.strip_suffix(b"\r").unwrap_or(buf);
                if line.iter().all(u8::is_ascii_whitespace) {
                    buf.clear();
                    continue;
                }
                return Ok(parse_line(line));
            }
            None => {
                let n = available.len();
                if buf.len() + n > max {
                    return Ok(Line::TooLong);
                }
                buf.extend_from_slice(available);
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_unknown_and_bad_frames() {
        let line = br#"{"type":"started","id":3,"execution_count":1}"#;
        assert_eq!(
            parse_line(line),
            Line::Frame(KernelFrame::Started { id: 3, execution_count: 1 })
        );
        assert_eq!(parse_line(br#"{"type":"weird","x":1}"#), Line::Frame(KernelFrame::Unknown));
        assert!(matches!(parse_line(b"not json"), Line::Bad(_)));
        assert!(matches!(parse_line(br#"{"type":"done","id":"x"}"#), Line::Bad(_)));
        assert!(matches!(parse_line(b"[1,2]"), Line::Bad(_)));
    }

    #[tokio::test]
    async fn bounded_lines() {
        let data = b"{\"type\":\"ready\",\"protocol\":1,\"language\":\"python\",\"pid\":1}\n\nxxxxxxxxxxxxxxxxxxxx\n";
        let mut reader = tokio::io::BufReader::with_capacity(8, &data[..]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut buf, 100).await.unwrap(),
            Line::Frame(KernelFrame::Ready { .. })
        ));
        assert_eq!(read_line(&mut reader, &mut buf, 10).await.unwrap(), Line::TooLong);
    }
}
