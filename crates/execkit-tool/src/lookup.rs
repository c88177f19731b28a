//! The configuration lookup: the process environment saved once at start, plus overrides.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Every variable execkit reads, captured once.
///
/// The binary saves its environment before anything else runs (the credential scrub later
/// overwrites the original block, so it cannot be read again), embedders and tests add
/// overrides without touching the process environment, and every knob and every child's
/// inherited environment is read from here. Variables whose name or value is not UTF-8 are
/// kept for children but are not knobs.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    vars: BTreeMap<OsString, OsString>,
}

impl Lookup {
    /// A lookup over the given variables (later duplicates win, as in `env`).
    pub fn from_vars<I, K, V>(vars: I) -> Lookup
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Lookup { vars: vars.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }

    /// Sets (or replaces) one variable.
    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) {
        self.vars.insert(name.into(), value.into());
    }

    /// A variable's value, when it is set and valid UTF-8.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(std::ffi::OsStr::new(name)).and_then(|v| v.to_str())
    }

    /// A variable's value, owned; empty values count as unset.
    pub fn non_empty(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.trim().is_empty()).map(str::to_string)
    }

    /// Whether the variable is set to exactly `1` (the convention of execkit's switches).
    pub fn is_on(&self, name: &str) -> bool {
        self.get(name) == Some("1")
    }

    /// Every variable, for building a child's inherited environment.
    pub fn vars(&self) -> impl Iterator<Item = (&OsString, &OsString)> {
        self.vars.iter()
    }

    /// The lookup as the closure shape older readers take.
    pub fn as_fn(&self) -> impl Fn(&str) -> Option<String> + '_ {
        |name| self.get(name).map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_values_win_and_empty_counts_as_unset() {
        let mut lookup = Lookup::from_vars([("A", "1"), ("A", "2"), ("E", " ")]);
        lookup.set("B", "x");
        assert_eq!(lookup.get("A"), Some("2"));
        assert_eq!(lookup.get("B"), Some("x"));
        assert_eq!(lookup.non_empty("E"), None);
        assert_eq!(lookup.get("missing"), None);
        assert!(!lookup.is_on("A"));
    }

    #[test]
    fn non_utf8_values_are_kept_for_children_but_are_not_knobs() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![0xff, 0xfe]);
        let lookup = Lookup::from_vars([(OsString::from("X"), bad.clone())]);
        assert_eq!(lookup.get("X"), None);
        assert_eq!(lookup.vars().next(), Some((&OsString::from("X"), &bad)));
    }
}
