//! The per-line overwrite rule (O13) for readers of stored text: a CR followed by more text
//! restarts the line, a BS erases the previous character. The sink applies the same rule while
//! streaming, so line content agrees between the window and every read.

use std::borrow::Cow;

/// The visible text of one line (without its LF).
pub(crate) fn render_line(line: &str) -> Cow<'_, str> {
    if !line.bytes().any(|b| b == b'\r' || b == 0x08) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut pending_cr = false;
    for c in line.chars() {
        match c {
            '\r' => pending_cr = true,
            '\u{8}' => {
                if !pending_cr {
                    out.pop();
                }
            }
            _ => {
                if pending_cr {
                    out.clear();
                    pending_cr = false;
                }
                out.push(c);
            }
        }
    }
    Cow::Owned(out)
}
