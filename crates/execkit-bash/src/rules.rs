//! Optional command rules (B12, B41): regexes that block a call with a message.

use std::path::Path;

use regex::Regex;
use serde::Deserialize;

/// One rule as written in a rules file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSource {
    id: String,
    pattern: String,
    #[serde(default)]
    unless: Option<String>,
    message: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub id: String,
    pattern: Regex,
    unless: Option<Regex>,
    pub message: String,
}

impl Rule {
    fn matches(&self, command: &str) -> bool {
        self.pattern.is_match(command) && !self.unless.as_ref().is_some_and(|u| u.is_match(command))
    }
}

/// The active rules and the configuration errors found while loading them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    rules: Vec<Rule>,
    pub errors: Vec<String>,
}

const LONG_RUNNING_MESSAGE: &str = "this starts a server or watcher that does not exit; run it \
     with \"async\": true and check it with the job tool.";

/// Built-in sets, by name (`EXECKIT_BASH_RULES=long-running,debugger,polling`).
fn builtin(name: &str) -> Option<Vec<RuleSource>> {
    let rule = |id: &str, pattern: &str, unless: Option<&str>, message: &str| RuleSource {
        id: id.to_string(),
        pattern: pattern.to_string(),
        unless: unless.map(str::to_string),
        message: message.to_string(),
    };
    match name {
        "long-running" => Some(vec![rule(
            "long-running",
            r"(?x)
              \b(npm|pnpm|yarn|bun)\s+(run\s+)?(dev|start|serve|watch)\b
            | (^|[\s;&|])(npx\s+)?vite(\s|$)
            | \bnext\s+dev\b
            | \bnodemon\b
            | \bflask\s+run\b
            | \buvicorn\b
            | \bpython3?\s+-m\s+http\.server\b
            | \s--watch\b
            | \btail\s+(-[a-zA-Z]*f|--follow)
            | \bdocker[\s-]compose\s+up\b
            | \bdocker\s+compose\s+up\b",
            Some(
                r"\bdocker[\s-](compose\s+)?up\b.*\s(-d|--detach)\b|\bcompose\s+up\b.*\s(-d|--detach)\b",
            ),
            LONG_RUNNING_MESSAGE,
        )]),
        "debugger" => Some(vec![rule(
            "debugger",
            r"(^|[\s;&|])(gdb|lldb|pdb|python3?\s+-m\s+pdb)(\s|$)",
            None,
            "interactive debuggers cannot be driven through bash; use the debug tool instead.",
        )]),
        "polling" => Some(vec![rule(
            "polling",
            r"^\s*sleep\s+([2-9]|[1-9][0-9]+)(\.[0-9]+)?[smhd]?\s*$",
            None,
            "do not poll with sleep; start the work with \"async\": true and wait with job \
             {\"poll\": [\"bg_N\"]}.",
        )]),
        _ => None,
    }
}

impl Rules {
    /// Loads built-in sets named in `sets` (comma-separated) and the rule files that exist.
    pub fn load(sets: &str, files: &[&Path]) -> Rules {
        let mut out = Rules::default();
        for name in sets.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()) {
            match builtin(name) {
                Some(sources) => out.add_all(sources, &format!("built-in set {name}")),
                None => out.errors.push(format!(
                    "EXECKIT_BASH_RULES: unknown rule set \"{name}\" (known: long-running, debugger, polling)"
                )),
            }
        }
        for file in files {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            match serde_json::from_str::<Vec<RuleSource>>(&text) {
                Ok(sources) => out.add_all(sources, &file.display().to_string()),
                Err(err) => {
                    out.errors.push(format!("{}: {err}; its rules are skipped", file.display()))
                }
            }
        }
        out
    }

    fn add_all(&mut self, sources: Vec<RuleSource>, origin: &str) {
        for source in sources {
            let pattern = Regex::new(&source.pattern);
            let unless = source.unless.as_deref().map(Regex::new).transpose();
            match (pattern, unless) {
                (Ok(pattern), Ok(unless)) => self.rules.push(Rule {
                    id: source.id,
                    pattern,
                    unless,
                    message: source.message,
                }),
                (Err(err), _) | (_, Err(err)) => self.errors.push(format!(
                    "{origin}: rule \"{}\" has an invalid pattern and is skipped: {err}",
                    source.id
                )),
            }
        }
    }

    /// The first rule that blocks `normalized` or `original`.
    pub fn check(&self, normalized: &str, original: &str) -> Option<&Rule> {
        let normalized = normalized.trim();
        self.rules.iter().find(|r| r.matches(normalized) || r.matches(original))
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The text of a call a rule blocked (B12): the rule's id and message.
pub(crate) fn blocked_text(rule: &Rule, command: &str) -> String {
    format!("Blocked by rule \"{}\": {}\nCommand: {command}", rule.id, rule.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_running_set() {
        let rules = Rules::load("long-running", &[]);
        assert!(rules.errors.is_empty(), "{:?}", rules.errors);
        let blocked = rules.check("npm run dev", "npm run dev").unwrap();
        assert_eq!(
            blocked_text(blocked, "npm run dev"),
            "Blocked by rule \"long-running\": this starts a server or watcher that does not \
             exit; run it with \"async\": true and check it with the job tool.\nCommand: npm run dev"
        );
        assert!(rules.check("docker compose up -d", "docker compose up -d").is_none());
        assert!(rules.check("docker compose up", "docker compose up").is_some());
        assert!(rules.check("tail -f log", "tail -f log").is_some());
        assert!(rules.check("npm test", "npm test").is_none());
    }

    #[test]
    fn polling_and_errors() {
        let rules = Rules::load("polling, nope", &[]);
        assert!(rules.check("sleep 5", "sleep 5").is_some());
        assert!(rules.check("sleep 1", "sleep 1").is_none());
        assert_eq!(rules.errors.len(), 1);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bash-rules.json");
        std::fs::write(&file, r#"[{"id":"bad","pattern":"(","message":"m"}]"#).unwrap();
        let rules = Rules::load("", &[file.as_path()]);
        assert!(rules.is_empty());
        assert!(rules.errors[0].contains("invalid pattern"), "{:?}", rules.errors);
    }
}
