//! A regex behind literals that every match contains: a text holding none of them cannot
//! match, so the regex is not run on it, and a regex no text ever needs is never compiled.
//! The credential scrub and the debug tool's redaction keep their patterns this way: every
//! process scrubs its own environment at start, and compiling all their patterns up front
//! cost each start about a millisecond.

use std::sync::OnceLock;

use regex::Regex;

pub struct GatedRegex {
    literals: &'static [&'static str],
    pattern: &'static str,
    compiled: OnceLock<Option<Regex>>,
}

impl GatedRegex {
    /// `pattern` must not match a text that holds none of `literals`.
    pub const fn new(literals: &'static [&'static str], pattern: &'static str) -> GatedRegex {
        GatedRegex { literals, pattern, compiled: OnceLock::new() }
    }

    /// The compiled regex when `text` holds one of the literals; `None` when it holds none (or
    /// the pattern does not compile, which the users' tests rule out).
    pub fn for_text(&self, text: &str) -> Option<&Regex> {
        if !self.literals.iter().any(|literal| text.contains(literal)) {
            return None;
        }
        self.compiled.get_or_init(|| Regex::new(self.pattern).ok()).as_ref()
    }

    /// Whether `text` holds a match.
    pub fn is_match(&self, text: &str) -> bool {
        self.for_text(text).is_some_and(|re| re.is_match(text))
    }

    /// Compiles the pattern whatever the text (tests check every pattern compiles).
    pub fn compiles(&self) -> bool {
        self.compiled.get_or_init(|| Regex::new(self.pattern).ok()).is_some()
    }
}
