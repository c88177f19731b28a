//! The TypeScript hint (spec-eval.md JS11): a cell that fails to parse and looks like
//! TypeScript is told so.

use regex::Regex;
use std::sync::OnceLock;

fn typescript_patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            r"[\w)\]]\s*:\s*(string|number|boolean|any|unknown|void|never|object)\b",
            r"(?m)^\s*(export\s+)?interface\s+[A-Za-z_$][\w$]*",
            r"(?m)^\s*(export\s+)?type\s+[A-Za-z_$][\w$]*\s*(<[^>]*>)?\s*=",
            r"\bas\s+(string|number|boolean|any|unknown|const|[A-Z][\w$]*)\b",
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    })
}

/// Whether `code` shows a TypeScript-only construct.
pub fn looks_like_typescript(code: &str) -> bool {
    typescript_patterns().iter().any(|re| re.is_match(code))
}

#[cfg(test)]
mod tests {
    use super::looks_like_typescript;

    #[test]
    fn typescript_shapes() {
        assert!(looks_like_typescript("let x: string = 'a'"));
        assert!(looks_like_typescript("interface P { x: number }"));
        assert!(looks_like_typescript("type Id = string"));
        assert!(looks_like_typescript("const n = v as Foo"));
        assert!(!looks_like_typescript("let x = {a: 1}; let y = c ? 1 : 2"));
    }
}
