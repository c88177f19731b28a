//! The credential scrub (O47): which variables never reach a child.

use std::sync::LazyLock;

use regex::Regex;

/// Name fragments that mark a credential, matched case-insensitively.
const NAME_FRAGMENTS: &[&str] =
    &["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"];

/// Removed whatever the patterns and the keep list say.
pub(crate) const ALWAYS_REMOVED: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "NPM_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "DATABASE_URL",
    "MYSQL_PWD",
    "PGPASSWORD",
    "SENTRY_DSN",
    "SLACK_BOT_TOKEN",
    "STRIPE_SECRET_KEY",
    "DOCKER_AUTH_CONFIG",
    "TWINE_PASSWORD",
];

/// Match a name pattern but are not credentials.
pub(crate) const KEPT: &[&str] = &[
    "TOKENIZERS_PARALLELISM",
    "PYTHON_KEYRING_BACKEND",
    "KEYTIMEOUT",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
];

const VALUE_PATTERNS: &[&str] = &[
    // A URL with user:password@.
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@",
    r"-----BEGIN[^\n]*PRIVATE KEY-----",
    r"^(?:sk-|sk-ant-|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xoxa-|xoxb-|xoxp-|hf_)[A-Za-z0-9_\-]{20,}",
    r"(?:^|[^A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?:$|[^A-Z0-9])",
    r"AIza.{35}",
];

static VALUE_REGEXES: LazyLock<Vec<Regex>> =
    LazyLock::new(|| VALUE_PATTERNS.iter().filter_map(|p| Regex::new(p).ok()).collect());

/// Shell-style glob with `*` and `?`.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Splits a knob value at commas and whitespace.
pub(crate) fn split_list(value: &str) -> Vec<String> {
    value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub(crate) fn name_matches(name: &str, extra: &[String]) -> bool {
    let upper = name.to_ascii_uppercase();
    NAME_FRAGMENTS.iter().any(|f| upper.contains(f))
        || upper.ends_with("_PAT")
        || extra.iter().any(|pattern| {
            let pattern = pattern.to_ascii_uppercase();
            if pattern.contains(['*', '?']) {
                glob_match(&pattern, &upper)
            } else {
                upper.contains(&pattern)
            }
        })
}

pub(crate) fn value_matches(value: &str) -> bool {
    VALUE_REGEXES.iter().any(|re| re.is_match(value))
}

pub(crate) fn kept(name: &str, keep: &[String]) -> bool {
    KEPT.contains(&name) || keep.iter().any(|pattern| glob_match(pattern, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_pattern_compiles() {
        assert_eq!(VALUE_REGEXES.len(), VALUE_PATTERNS.len());
    }

    #[test]
    fn globs() {
        assert!(glob_match("MY_*", "MY_TOKEN"));
        assert!(glob_match("*_KEY", "A_KEY"));
        assert!(glob_match("A?C", "ABC"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("MY_*", "YOUR_TOKEN"));
        assert!(!glob_match("A?C", "AC"));
        assert!(glob_match("*a*b*", "xxaxxbxx"));
    }

    #[test]
    fn lists_split_on_commas_and_spaces() {
        assert_eq!(split_list("A, B  C,,"), vec!["A", "B", "C"]);
    }
}
