//! Numeric knobs (`EXECKIT_*` variables) and the one policy for bad values.

use crate::Lookup;

/// One numeric knob with its default and accepted range.
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    /// Full variable name, e.g. `EXECKIT_KILL_GRACE_MS`.
    pub name: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

/// A knob whose value does not parse: the Toolkit does not start, and this says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}={value:?} is not {accepts}")]
pub struct KnobError {
    pub name: String,
    pub value: String,
    /// What the knob accepts, e.g. "a whole number from 1 to 64".
    pub accepts: String,
}

impl KnobError {
    /// A knob value that is not of the accepted form.
    pub fn new(name: &str, value: &str, accepts: impl Into<String>) -> KnobError {
        KnobError { name: name.to_string(), value: value.to_string(), accepts: accepts.into() }
    }
}

/// Lines about configuration that the person should see: values clamped into range, settings
/// that were ignored. `execkit doctor` lists them and the first result of a Toolkit says so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes(Vec<String>);

impl Notes {
    pub fn push(&mut self, line: impl Into<String>) {
        self.0.push(line.into());
    }

    pub fn lines(&self) -> &[String] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn extend(&mut self, other: Notes) {
        self.0.extend(other.0);
    }
}

impl Knob {
    /// Reads the knob: unset → the default; out of range → clamped, with a note; not a whole
    /// number → an error naming the accepted range.
    pub fn read(&self, lookup: &Lookup, notes: &mut Notes) -> Result<u64, KnobError> {
        let Some(raw) = lookup.get(self.name) else {
            return Ok(self.default);
        };
        let text = raw.trim();
        let value: i128 =
            text.parse().map_err(|_| KnobError::new(self.name, raw, self.accepts()))?;
        let used = value.clamp(i128::from(self.min), i128::from(self.max));
        let used = u64::try_from(used).unwrap_or(self.max);
        if i128::from(used) != value {
            notes.push(format!(
                "{}={text} is outside {}..{}; using {used}",
                self.name, self.min, self.max
            ));
        }
        Ok(used)
    }

    /// Reads the knob only when it is set.
    pub fn read_set(&self, lookup: &Lookup, notes: &mut Notes) -> Result<Option<u64>, KnobError> {
        match lookup.get(self.name) {
            Some(_) => self.read(lookup, notes).map(Some),
            None => Ok(None),
        }
    }

    fn accepts(&self) -> String {
        format!("a whole number from {} to {}", self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: Knob = Knob { name: "EXECKIT_K", default: 5, min: 1, max: 10 };

    fn read(value: Option<&str>) -> (Result<u64, KnobError>, Notes) {
        let lookup = Lookup::from_vars(value.map(|v| ("EXECKIT_K", v)));
        let mut notes = Notes::default();
        (K.read(&lookup, &mut notes), notes)
    }

    #[test]
    fn unset_is_the_default_without_a_note() {
        let (value, notes) = read(None);
        assert_eq!(value, Ok(5));
        assert!(notes.is_empty());
    }

    #[test]
    fn out_of_range_is_clamped_with_a_note() {
        let (value, notes) = read(Some("99"));
        assert_eq!(value, Ok(10));
        assert_eq!(notes.lines(), ["EXECKIT_K=99 is outside 1..10; using 10"]);
        assert_eq!(read(Some("-3")).0, Ok(1));
    }

    #[test]
    fn a_value_that_does_not_parse_names_the_knob_and_the_range() {
        let (value, _) = read(Some("ten"));
        let err = value.unwrap_err();
        assert_eq!(err.to_string(), "EXECKIT_K=\"ten\" is not a whole number from 1 to 10");
    }
}
