//! The per-line overwrite rule (O13), as a terminal shows a line: a CR followed by more text
//! returns to the start of the line and the text overwrites in place (`abcdef\rXY` shows
//! `XYcdef`); a BS at the end of the line erases the previous character, inside the line it
//! moves back one. The sink applies the same rule while streaming, so line content agrees
//! between the window and every read.

use std::borrow::Cow;

/// Writes `c` at `cursor` (`None`: at the end of the line). Overwriting moves the cursor on;
/// it becomes `None` once it passes the last character.
pub(crate) fn put_char(line: &mut String, cursor: &mut Option<usize>, c: char) {
    let Some(at) = *cursor else {
        line.push(c);
        return;
    };
    let Some(old) = line[at..].chars().next() else {
        *cursor = None;
        line.push(c);
        return;
    };
    let mut buf = [0u8; 4];
    line.replace_range(at..at + old.len_utf8(), c.encode_utf8(&mut buf));
    let next = at + c.len_utf8();
    *cursor = (next < line.len()).then_some(next);
}

/// BS: erases the last character at the end of the line, moves back one inside it.
pub(crate) fn back(line: &mut String, cursor: &mut Option<usize>) {
    match *cursor {
        None => {
            line.pop();
        }
        Some(at) => {
            *cursor = Some(line[..at].char_indices().next_back().map_or(0, |(i, _)| i));
        }
    }
}

/// The visible text of one line (without its LF).
pub(crate) fn render_line(line: &str) -> Cow<'_, str> {
    if !line.bytes().any(|b| b == b'\r' || b == 0x08) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut cursor = None;
    let mut pending_cr = false;
    for c in line.chars() {
        match c {
            '\r' => pending_cr = true,
            '\u{8}' => {
                if !pending_cr {
                    back(&mut out, &mut cursor);
                }
            }
            _ => {
                if std::mem::take(&mut pending_cr) && !out.is_empty() {
                    cursor = Some(0);
                }
                put_char(&mut out, &mut cursor, c);
            }
        }
    }
    Cow::Owned(out)
}

/// One stored line as shown: the overwrite rule, then the per-line cut to the default line
/// cap; the line feed, when there was one, is kept. Returns the text and the bytes cut off.
pub(crate) fn display_line(raw: &str) -> (String, u64) {
    let (content, lf) = match raw.strip_suffix('\n') {
        Some(content) => (content, "\n"),
        None => (raw, ""),
    };
    let rendered = render_line(content);
    let (mut text, cut) =
        crate::truncate::cut_line(&rendered, crate::clamp::LINE_BYTES.default as usize);
    text.push_str(lf);
    (text, cut)
}

#[cfg(test)]
mod tests {
    use super::render_line;

    #[test]
    fn carriage_return_overwrites_in_place() {
        assert_eq!(render_line("keep me\rERASED"), "ERASEDe");
        assert_eq!(render_line("abcdef\rXY"), "XYcdef");
        assert_eq!(render_line(" 10%\r 50%\r100%"), "100%");
        assert_eq!(render_line("abc\r"), "abc");
        assert_eq!(render_line("äöü\rab"), "abü");
        assert_eq!(render_line("abc\rx\x08y"), "ybc");
        assert_eq!(render_line("N\x08NA\x08A"), "NA");
    }
}
