//! Masking credential-looking values before a result is rendered.
//!
//! It runs over whole strings at render time (so a token split across two output events is
//! still caught), never over what is sent to the adapter. By name: a variable whose name, split
//! at `_`, `-`, `.` and camelCase, has a secret-like segment. By value, whatever the name:
//! private keys, cloud and chat tokens, JWTs and the password of a `scheme://user:pw@` URL.

use execkit_process::gated_regex::GatedRegex;
use regex::Regex;

/// Name segments that mark a secret.
const SECRET_SEGMENTS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "cookie",
    "bearer",
    "authorization",
];

/// Adjacent segment pairs that mark a secret.
const SECRET_PAIRS: &[(&str, &str)] = &[("api", "key"), ("private", "key"), ("access", "key")];

/// A value pattern: what it masks, the capture group that is replaced (0: the whole match),
/// and its regex behind the literals any match contains. Most texts (every bash command the
/// audit log summarises) contain none, so no regex runs or is compiled for them.
struct ValuePattern {
    kind: &'static str,
    group: usize,
    regex: GatedRegex,
}

impl ValuePattern {
    const fn new(
        kind: &'static str,
        group: usize,
        literals: &'static [&'static str],
        pattern: &'static str,
    ) -> ValuePattern {
        ValuePattern { kind, group, regex: GatedRegex::new(literals, pattern) }
    }
}

static VALUE_PATTERNS: [ValuePattern; 9] = [
    ValuePattern::new(
        "private-key",
        0,
        &["-----BEGIN "],
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    ),
    ValuePattern::new("aws-key", 0, &["AKIA", "ASIA"], r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    ValuePattern::new(
        "github-token",
        0,
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\bgh[pousr]_[A-Za-z0-9]{36,}",
    ),
    ValuePattern::new("github-token", 0, &["github_pat_"], r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    ValuePattern::new("slack-token", 0, &["xox"], r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ValuePattern::new("api-key", 0, &["sk-"], r"\bsk-[A-Za-z0-9_-]{20,}"),
    ValuePattern::new("google-key", 0, &["AIza"], r"\bAIza[A-Za-z0-9_-]{35}"),
    ValuePattern::new(
        "jwt",
        0,
        &["eyJ"],
        r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
    ),
    ValuePattern::new(
        "url-password",
        1,
        &["://"],
        r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@",
    ),
];

/// Counts what was masked while rendering one result.
#[derive(Debug, Clone, Copy, Default)]
pub struct Redactor {
    pub on: bool,
    pub count: u64,
}

impl Redactor {
    pub fn new(on: bool) -> Redactor {
        Redactor { on, count: 0 }
    }

    /// A variable's value: masked whole when the name looks secret, else by value patterns.
    pub fn named(&mut self, name: &str, value: &str) -> String {
        if self.on && name_is_secret(name) && !value.is_empty() {
            self.count += 1;
            return "[redacted:name]".to_string();
        }
        self.text(value)
    }

    /// Free text (output, evaluate results, response bodies): value patterns only.
    pub fn text(&mut self, text: &str) -> String {
        if !self.on {
            return text.to_string();
        }
        let mut out = text.to_string();
        for pattern in &VALUE_PATTERNS {
            if let Some(regex) = pattern.regex.for_text(&out) {
                out = self.replace(&out, pattern, regex);
            }
        }
        out
    }

    fn replace(&mut self, text: &str, pattern: &ValuePattern, regex: &Regex) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for caps in regex.captures_iter(text) {
            let Some(m) = caps.get(pattern.group) else { continue };
            out.push_str(&text[last..m.start()]);
            out.push_str(&format!("[redacted:{}]", pattern.kind));
            last = m.end();
            self.count += 1;
        }
        out.push_str(&text[last..]);
        out
    }
}

/// `db_password`, `apiKey`, `X-Auth-Token`: split at `_ - .` and camelCase, then matched.
pub fn name_is_secret(name: &str) -> bool {
    let segments = segments(name);
    segments.iter().any(|s| SECRET_SEGMENTS.contains(&s.as_str()))
        || segments.windows(2).any(|w| SECRET_PAIRS.contains(&(w[0].as_str(), w[1].as_str())))
}

fn segments(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ' ' | '[' | ']' | '\'' | '"') {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_segments() {
        for name in ["db_password", "apiKey", "API_KEY", "X-Auth-Token", "self.secret", "pwd"] {
            assert!(name_is_secret(name), "{name}");
        }
        for name in ["keyboard", "passing", "tokenizer_count", "monkey", "author"] {
            assert!(!name_is_secret(name), "{name}");
        }
    }

    #[test]
    fn values_are_masked_by_kind() {
        let mut r = Redactor::new(true);
        let token = format!("token=ghp_{}", "a".repeat(36));
        assert_eq!(r.text(&token), "token=[redacted:github-token]");
        assert_eq!(r.text("AKIAABCDEFGHIJKLMNOP"), "[redacted:aws-key]");
        assert_eq!(
            r.text("postgres://bob:hunter2@db/x"),
            "postgres://bob:[redacted:url-password]@db/x"
        );
        assert_eq!(r.named("db_password", "'hunter2'"), "[redacted:name]");
        assert_eq!(r.count, 4);
        let mut off = Redactor::new(false);
        assert_eq!(off.named("password", "x"), "x");
        assert_eq!(off.count, 0);
    }

    /// Every pattern, behind its literal check, still finds its shape.
    #[test]
    fn every_kind_is_found() {
        let mut r = Redactor::new(true);
        for (text, kind) in [
            ("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----", "private-key"),
            (&format!("github_pat_{}", "b".repeat(22)), "github-token"),
            ("xoxb-1234567890-abc", "slack-token"),
            (&format!("sk-{}", "c".repeat(24)), "api-key"),
            (&format!("AIza{}", "d".repeat(35)), "google-key"),
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "jwt"),
        ] {
            assert_eq!(r.text(text), format!("[redacted:{kind}]"), "{text}");
        }
        assert_eq!(r.text("cargo build --release"), "cargo build --release");
    }
}
