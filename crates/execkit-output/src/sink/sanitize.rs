//! Stream sanitising (O12): raw bytes in, clean UTF-8 out, with state carried across chunks so
//! the result never depends on where the producer's writes were split.
//!
//! The output keeps TAB, LF, CR and BS: the window applies CR and BS per line (O13), and the
//! artifact keeps them so readers can apply the same rule.

/// An escape sequence longer than this is not one: release it as text rather than hide an
/// unbounded amount of output (O12 b).
const ESCAPE_HOLD: usize = 4096;

/// Spans up to this long are copied with one fixed-size move (see [`copy_span`]).
const SHORT_SPAN: usize = 16;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
/// NUL is shown, not removed, so `find -print0` output stays readable (O12 d).
const NUL_SHOWN: &str = "\u{2400}";

/// Bytes copied as they are: printable ASCII, TAB and LF.
const fn plain_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        table[b] = true;
        b += 1;
    }
    table[b'\t' as usize] = true;
    table[b'\n' as usize] = true;
    table
}
static PLAIN: [bool; 256] = plain_table();

/// Length of the leading run of [`PLAIN`] bytes. Whole blocks are tested without an early
/// exit so the compiler can vectorise the common all-plain case; the block that ends the run
/// is searched a word at a time.
fn plain_run(input: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let is_plain = |b: u8| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t';
    // Runs between escapes are short: one word usually settles it.
    if let Some(Ok(word)) = input.get(..8).map(<[u8; 8]>::try_from) {
        let special = not_plain(u64::from_le_bytes(word));
        if special != 0 {
            return (special.trailing_zeros() / 8) as usize;
        }
    }
    let mut done = 0;
    for block in input.chunks_exact(BLOCK) {
        if !block.iter().fold(true, |all, &b| all & is_plain(b)) {
            break;
        }
        done += BLOCK;
    }
    for word in input[done..].chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else { break };
        let special = not_plain(u64::from_le_bytes(word));
        if special != 0 {
            return done + (special.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    done + input[done..].iter().position(|&b| !PLAIN[b as usize]).unwrap_or(input.len() - done)
}

/// The high bit of each byte of `word` that is not [`PLAIN`]. Exact per byte: every step
/// works on 7-bit values, so no carry crosses into the next byte.
fn not_plain(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let low = word & !HIGH;
    let below_space = !(low + ONES * 0x60) & HIGH;
    let del = (low + ONES) & HIGH;
    let is = |byte: u64| {
        let diff = low ^ (ONES * byte);
        !((diff + ONES * 0x7f) | diff) & HIGH
    };
    (word & HIGH) | del | (below_space & !is(u64::from(b'\t')) & !is(u64::from(b'\n')))
}

/// Length of a complete CSI sequence (`ESC [` params final) at the start of `input`: the
/// colour codes that dominate escape-heavy output, removed without the state machine.
fn whole_csi(input: &[u8]) -> Option<usize> {
    if input.len() < 3 || input[0] != ESC || input[1] != b'[' {
        return None;
    }
    let params = input[2..].iter().position(|b| !(0x20..=0x3f).contains(b))?;
    let end = 2 + params;
    // Same limit as the state machine: a longer sequence is released as text there.
    ((0x40..=0x7e).contains(&input[end]) && end < ESCAPE_HOLD + 1).then_some(end + 1)
}

/// Appends `input[from..to]`. A short span copies a fixed [`SHORT_SPAN`] bytes and trims
/// them, one vector move instead of a `memcpy` call per span between escapes.
fn copy_span(out: &mut Vec<u8>, input: &[u8], from: usize, to: usize) {
    match input.get(from..from + SHORT_SPAN) {
        Some(block) if to - from <= SHORT_SPAN => {
            let len = out.len() + (to - from);
            out.extend_from_slice(block);
            out.truncate(len);
        }
        _ => out.extend_from_slice(&input[from..to]),
    }
}

/// Length of a complete, valid multi-byte character at the start of `input`, and whether it
/// is a C1 control (removed). `None` for an invalid or incomplete one: the state machine
/// decides those.
fn whole_char(input: &[u8]) -> Option<(usize, bool)> {
    let len = match input[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let text = std::str::from_utf8(input.get(..len)?).ok()?;
    Some((len, text.chars().next().is_some_and(|c| ('\u{80}'..='\u{9f}').contains(&c))))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// After ESC: an intermediate (0x20–0x2F) keeps it open, a final byte ends it.
    Start,
    Csi,
    /// OSC ends at BEL or `ESC \`; DCS/SOS/PM/APC only at `ESC \`.
    Text {
        bel_ends: bool,
    },
    /// ESC seen inside a text-type sequence.
    TextEsc {
        bel_ends: bool,
    },
    /// The first byte of a two-byte C1 control seen inside a text-type sequence.
    TextC1 {
        bel_ends: bool,
    },
}

/// First byte of every C1 control in UTF-8 (U+0080–U+009F are `C2 80`–`C2 9F`).
const C1_LEAD: u8 = 0xc2;

/// The sequence a C1 control opens, by its second UTF-8 byte: CSI (U+009B), OSC (U+009D,
/// ends at BEL or ST), DCS, SOS, PM and APC (end at ST only).
fn c1_opener(second: u8) -> Option<Escape> {
    match second {
        0x9b => Some(Escape::Csi),
        0x9d => Some(Escape::Text { bel_ends: true }),
        0x90 | 0x98 | 0x9e | 0x9f => Some(Escape::Text { bel_ends: false }),
        _ => None,
    }
}

#[derive(Debug, Default)]
pub(crate) struct Sanitizer {
    utf8: Vec<u8>,
    escape: Option<Escape>,
    held: Vec<u8>,
    /// Bytes of `held` that opened the sequence: 1 for ESC, 2 for a C1 control.
    opener: usize,
    cr: bool,
    pub(crate) stripped: u64,
}

impl Sanitizer {
    /// Appends the clean form of `input` to `out`.
    pub(crate) fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.reserve(input.len() + SHORT_SPAN);
        let mut i = 0;
        while i < input.len() {
            if self.escape.is_none() && self.utf8.is_empty() && !self.cr {
                i += self.stateless(&input[i..], out);
                if i == input.len() {
                    break;
                }
            }
            i += self.step(&input[i..], out);
        }
    }

    /// Copies the leading part of `input` that needs no state carried across bytes: plain
    /// runs, whole CSI sequences, CRLF, a CR with its next byte, BS, lone controls and whole
    /// characters. Kept bytes are copied in spans, not one by one. Returns the bytes consumed;
    /// the byte after them (if any) goes through [`Sanitizer::step`].
    fn stateless(&mut self, input: &[u8], out: &mut Vec<u8>) -> usize {
        let mut i = 0;
        // Start of the span of kept bytes not yet copied.
        let mut from = 0;
        loop {
            i += plain_run(&input[i..]);
            let Some(&b) = input.get(i) else { break };
            let drop = match b {
                ESC => match whole_csi(&input[i..]) {
                    Some(len) => len,
                    None => break,
                },
                // CRLF → LF; a CR before anything else stays, and that byte is handled next.
                b'\r' => match input.get(i + 1) {
                    Some(b'\n') => 1,
                    Some(_) => {
                        i += 1;
                        continue;
                    }
                    None => break,
                },
                0x08 => {
                    i += 1;
                    continue;
                }
                0 => {
                    copy_span(out, input, from, i);
                    out.extend_from_slice(NUL_SHOWN.as_bytes());
                    i += 1;
                    from = i;
                    continue;
                }
                0x80.. => match whole_char(&input[i..]) {
                    Some((len, false)) => {
                        i += len;
                        continue;
                    }
                    // A C1 control that opens a sequence needs the state machine.
                    Some((len, true)) if c1_opener(input[i + 1]).is_none() => len,
                    _ => break,
                },
                _ => 1,
            };
            copy_span(out, input, from, i);
            self.stripped += drop as u64;
            i += drop;
            from = i;
        }
        copy_span(out, input, from, i);
        i
    }

    /// Flushes held state at the end of the stream: a partial UTF-8 sequence becomes U+FFFD,
    /// an unfinished escape is released as text, a pending CR is kept.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if self.escape.is_some() {
            self.release(out);
        }
        if !self.utf8.is_empty() {
            self.utf8.clear();
            out.extend_from_slice("\u{FFFD}".as_bytes());
        }
        if std::mem::take(&mut self.cr) {
            out.push(b'\r');
        }
    }

    /// Handles the byte(s) at the start of `input` that need state; returns bytes consumed.
    fn step(&mut self, input: &[u8], out: &mut Vec<u8>) -> usize {
        let b = input[0];
        if !self.utf8.is_empty() {
            return self.continue_utf8(b, out);
        }
        if let Some(state) = self.escape {
            self.escape_byte(state, b, out);
            return 1;
        }
        if std::mem::take(&mut self.cr) {
            if b == b'\n' {
                self.stripped += 1;
                out.push(b'\n');
                return 1;
            }
            out.push(b'\r');
        }
        match b {
            b'\r' => self.cr = true,
            0x08 => out.push(b),
            ESC => {
                self.escape = Some(Escape::Start);
                self.opener = 1;
                self.held.push(b);
            }
            0x80.. => return self.start_utf8(input, out),
            0 => out.extend_from_slice(NUL_SHOWN.as_bytes()),
            _ if PLAIN[b as usize] => out.push(b),
            _ => self.stripped += 1,
        }
        1
    }

    fn start_utf8(&mut self, input: &[u8], out: &mut Vec<u8>) -> usize {
        let want = match input[0] {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 1,
        };
        let avail = &input[..want.min(input.len())];
        match std::str::from_utf8(avail) {
            Ok(text) => {
                self.emit_char(text, out);
                avail.len()
            }
            Err(err) => match err.error_len() {
                Some(bad) => {
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                    bad
                }
                None => {
                    self.utf8.extend_from_slice(avail);
                    avail.len()
                }
            },
        }
    }

    fn continue_utf8(&mut self, b: u8, out: &mut Vec<u8>) -> usize {
        self.utf8.push(b);
        match std::str::from_utf8(&self.utf8) {
            Ok(_) => {
                let bytes = std::mem::take(&mut self.utf8);
                if let Ok(text) = std::str::from_utf8(&bytes) {
                    self.emit_char(text, out);
                }
            }
            Err(err) => {
                if let Some(bad) = err.error_len() {
                    let bytes = std::mem::take(&mut self.utf8);
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                    self.push(&bytes[bad..], out);
                }
            }
        }
        1
    }

    /// One complete non-ASCII character: C1 controls are removed (CSI, OSC, DCS, SOS, PM and
    /// APC together with the sequence they open), the rest copied.
    fn emit_char(&mut self, text: &str, out: &mut Vec<u8>) {
        let bytes = text.as_bytes();
        if !text.chars().next().is_some_and(|c| ('\u{80}'..='\u{9f}').contains(&c)) {
            out.extend_from_slice(bytes);
            return;
        }
        match bytes.get(1).and_then(|&b| c1_opener(b)) {
            Some(state) => {
                self.held.extend_from_slice(bytes);
                self.opener = bytes.len();
                self.escape = Some(state);
            }
            None => self.stripped += bytes.len() as u64,
        }
    }

    fn escape_byte(&mut self, state: Escape, b: u8, out: &mut Vec<u8>) {
        // Real titles and hyperlinks never hold a LF: one ends an unfinished sequence, whose
        // bytes are text after all, so a stray `ESC ]` cannot hide the lines after it.
        if b == b'\n' {
            self.release(out);
            // Through the state machine: a CR released just before it is a CRLF.
            self.push(b"\n", out);
            return;
        }
        self.held.push(b);
        let next = match state {
            Escape::Start => match b {
                b'[' => Some(Escape::Csi),
                b']' => Some(Escape::Text { bel_ends: true }),
                b'P' | b'X' | b'^' | b'_' => Some(Escape::Text { bel_ends: false }),
                0x20..=0x2f => Some(Escape::Start),
                0x30..=0x7e => None,
                _ => return self.abort(out),
            },
            Escape::Csi => match b {
                0x20..=0x3f => Some(Escape::Csi),
                0x40..=0x7e => None,
                _ => return self.abort(out),
            },
            Escape::Text { bel_ends } => match b {
                BEL if bel_ends => None,
                ESC => Some(Escape::TextEsc { bel_ends }),
                C1_LEAD => Some(Escape::TextC1 { bel_ends }),
                _ => Some(Escape::Text { bel_ends }),
            },
            Escape::TextC1 { bel_ends } => match b {
                // U+009C, the 8-bit string terminator.
                0x9c => None,
                _ => {
                    self.held.pop();
                    self.escape = Some(Escape::Text { bel_ends });
                    return self.escape_byte(Escape::Text { bel_ends }, b, out);
                }
            },
            Escape::TextEsc { .. } => match b {
                b'\\' => None,
                // ESC followed by anything else ends the string and starts a new escape.
                _ => {
                    self.held.pop();
                    self.stripped += self.held.len() as u64 - 1;
                    self.held.clear();
                    self.held.push(ESC);
                    self.opener = 1;
                    self.escape = Some(Escape::Start);
                    return self.escape_byte(Escape::Start, b, out);
                }
            },
        };
        match next {
            None => {
                self.stripped += self.held.len() as u64;
                self.held.clear();
                self.escape = None;
            }
            Some(_) if self.held.len() > ESCAPE_HOLD => self.release(out),
            Some(state) => self.escape = Some(state),
        }
    }

    /// The byte that broke a sequence is handled on its own after the sequence is dropped.
    fn abort(&mut self, out: &mut Vec<u8>) {
        let last = self.held.pop();
        self.stripped += self.held.len() as u64;
        self.held.clear();
        self.escape = None;
        if let Some(b) = last {
            self.push(&[b], out);
        }
    }

    /// Gives up on a sequence: the ESC (or C1 control) that opened it is dropped as a control,
    /// the rest is text again.
    fn release(&mut self, out: &mut Vec<u8>) {
        let held = std::mem::take(&mut self.held);
        let opener = std::mem::replace(&mut self.opener, 1).min(held.len());
        self.escape = None;
        self.stripped += opener as u64;
        self.push(&held[opener..], out);
    }
}
