//! `${NAME}` expansion in configuration strings, done once at load (spec-ssh S9).

use crate::environment::Environment;

/// Expands `${NAME}` and `${NAME:-default}`; `$${` is a literal `${`; a bare `$NAME` and an
/// unclosed `${` stay as written. Fails with the name of an unset variable that has no default.
pub fn expand(text: &str, env: &Environment) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(body) = tail.strip_prefix("${") else {
            out.push('$');
            rest = &tail[1..];
            continue;
        };
        let Some(end) = body.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        out.push_str(&substitute(&body[..end], env)?);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of one `${…}` body: `NAME` or `NAME:-default`.
fn substitute(body: &str, env: &Environment) -> Result<String, String> {
    match body.split_once(":-") {
        Some((name, default)) => Ok(env.non_empty(name).unwrap_or(default).to_string()),
        None => env.get(body).map(str::to_string).ok_or_else(|| body.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment {
        Environment::from_vars([("PORT", "2222"), ("EMPTY", "")])
    }

    #[test]
    fn expands_set_variables_and_defaults() {
        assert_eq!(expand("${PORT}", &env()).unwrap(), "2222");
        assert_eq!(expand("a${PORT}b${PORT}", &env()).unwrap(), "a2222b2222");
        assert_eq!(expand("${EMPTY:-22}", &env()).unwrap(), "22");
        assert_eq!(expand("${NOPE:-x}", &env()).unwrap(), "x");
        assert_eq!(expand("${EMPTY}", &env()).unwrap(), "");
    }

    #[test]
    fn literals_stay_literal() {
        assert_eq!(expand("$${PORT}", &env()).unwrap(), "${PORT}");
        assert_eq!(expand("$PORT", &env()).unwrap(), "$PORT");
        assert_eq!(expand("cost $5", &env()).unwrap(), "cost $5");
        assert_eq!(expand("${open", &env()).unwrap(), "${open");
    }

    #[test]
    fn unset_without_default_names_the_variable() {
        assert_eq!(expand("x${PROD_HOST}", &env()).unwrap_err(), "PROD_HOST");
    }
}
