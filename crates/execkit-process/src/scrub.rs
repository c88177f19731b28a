//! The credential scrub (O47): which variables never reach a child.

use crate::gated_regex::GatedRegex;
use crate::glob::glob_match;

/// Stands in, in the saved copy, for a value the scrub removes and no setting passes on: no
/// copy of the secret is kept. Builders drop such variables and list them as scrubbed.
pub const WITHHELD: &str = "\u{1}execkit: value withheld\u{1}";

/// Which names and values the scrub removes and keeps (O47).
#[derive(Debug, Clone, Default)]
pub struct ScrubRules {
    /// Names or globs from `EXECKIT_ENV_KEEP` (comma- or whitespace-separated).
    pub keep: Vec<String>,
    /// Extra name patterns from `EXECKIT_ENV_SCRUB_EXTRA`.
    pub extra: Vec<String>,
}

impl ScrubRules {
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> ScrubRules {
        let list = |name: &str| lookup(name).map(|v| split_list(&v)).unwrap_or_default();
        ScrubRules { keep: list("EXECKIT_ENV_KEEP"), extra: list("EXECKIT_ENV_SCRUB_EXTRA") }
    }
}

/// True when the scrub would remove `name=value` under `rules` (O47).
pub fn is_credential(name: &str, value: &str, rules: &ScrubRules) -> bool {
    if value == WITHHELD || ALWAYS_REMOVED.contains(&name) {
        return true;
    }
    if kept(name, &rules.keep) {
        return false;
    }
    name_matches(name, &rules.extra) || value_matches(value)
}

/// Name fragments that mark a credential, matched case-insensitively. `PASS` covers
/// `PASSWORD`, `PASSWD`, `PASSPHRASE` and abbreviations such as `SMTP_PASS`.
const NAME_FRAGMENTS: &[&str] =
    &["KEY", "SECRET", "TOKEN", "PASS", "CREDENTIAL", "PRIVATE", "AUTHORIZATION"];
/// Name endings that mark a credential: `GITLAB_PAT`, `ADMIN_PW`, `DB_PWD`, `NPM_AUTH`.
const NAME_SUFFIXES: &[&str] = &["_PAT", "_PW", "_PWD", "_AUTH"];

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

/// Credential-shaped values, each behind the literals any of its matches contains.
static VALUE_PATTERNS: [GatedRegex; 9] = [
    // A URL with a password in its userinfo: `user:password@`, or `:password@` (Redis).
    GatedRegex::new(&["://"], r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:[^/\s@]+@"),
    GatedRegex::new(&["-----BEGIN"], r"-----BEGIN[^\n]*PRIVATE KEY-----"),
    // A JSON Web Token: base64url header and payload, both JSON objects (`eyJ` is `{"`).
    GatedRegex::new(&["eyJ"], r"eyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\."),
    // An HTTP Authorization header value.
    GatedRegex::new(&["Bearer ", "Basic "], r"^(?:Bearer|Basic) \S"),
    // Webhook URLs carry their secret in the path.
    GatedRegex::new(&["hooks.slack.com"], r"https://hooks\.slack\.com/services/"),
    GatedRegex::new(&["discord"], r"https://(?:discord|discordapp)\.com/api/webhooks/"),
    GatedRegex::new(
        &["sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "hf_"],
        r"^(?:sk-|sk-ant-|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xoxa-|xoxb-|xoxp-|hf_)[A-Za-z0-9_\-]{20,}",
    ),
    GatedRegex::new(&["AKIA", "ASIA"], r"(?:^|[^A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?:$|[^A-Z0-9])"),
    GatedRegex::new(&["AIza"], r"AIza.{35}"),
];

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
        || NAME_SUFFIXES.iter().any(|s| upper.ends_with(s))
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
    VALUE_PATTERNS.iter().any(|pattern| pattern.is_match(value))
}

pub(crate) fn kept(name: &str, keep: &[String]) -> bool {
    KEPT.contains(&name) || keep.iter().any(|pattern| glob_match(pattern, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_pattern_compiles() {
        for (index, pattern) in VALUE_PATTERNS.iter().enumerate() {
            assert!(pattern.compiles(), "value pattern {index}");
        }
    }

    fn removed(name: &str, value: &str) -> bool {
        name_matches(name, &[]) || value_matches(value)
    }

    #[test]
    fn names_the_fragments_missed_before() {
        for name in ["ADMIN_PW", "SMTP_PASS", "MY_DB_PASS", "DB_PWD", "NPM_AUTH", "SSH_PRIVATE"] {
            assert!(removed(name, "plain"), "{name}");
        }
        assert!(removed("Authorization", "x"));
        for name in ["PWD", "OLDPWD", "PATH", "HOME", "AUTHOR", "LANG"] {
            assert!(!removed(name, "plain"), "{name}");
        }
    }

    #[test]
    fn a_url_with_a_password_only_is_a_secret() {
        assert!(value_matches("redis://:pw@host:6379"));
        assert!(value_matches("postgres://user:hunter2@db/app"));
        assert!(!value_matches("redis://host:6379"));
        assert!(!value_matches("https://user@example.com/x"));
    }

    #[test]
    fn tokens_in_values() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl";
        assert!(value_matches(jwt));
        assert!(value_matches("Bearer abc.def"));
        assert!(value_matches("Basic dXNlcjpwdw=="));
        assert!(value_matches("https://hooks.slack.com/services/T000/B000/XXXX"));
        assert!(value_matches("https://discord.com/api/webhooks/1/abc"));
        assert!(!value_matches("Bearerish"));
        assert!(!value_matches("eyJ alone"));
        assert!(!value_matches("https://slack.com/"));
    }

    /// One value of every pattern's shape: each passes its literal check and then its regex.
    #[test]
    fn every_pattern_still_finds_its_shape() {
        for value in [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "sk-ant-api03-abcdefghijklmnopqrstuvwx",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "github_pat_abcdefghijklmnopqrstuvwx",
            "glpat-abcdefghijklmnopqrstu",
            "xoxb-abcdefghijklmnopqrstu",
            "hf_abcdefghijklmnopqrstuvwx",
            "id=AKIAABCDEFGHIJKLMNOP",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
        ] {
            assert!(value_matches(value), "{value}");
        }
        for value in ["/usr/bin:/bin", "C.UTF-8", "42", "sk-short", "xterm-256color"] {
            assert!(!value_matches(value), "{value}");
        }
    }

    #[test]
    fn lists_split_on_commas_and_spaces() {
        assert_eq!(split_list("A, B  C,,"), vec!["A", "B", "C"]);
    }
}
