//! Texts every process tool shares.

use execkit_output::sink::SinkSummary;

/// Job labels are a command's first non-empty line, cut at this many characters.
const LABEL_CHARS: usize = 80;

/// The text of a finished sink alone: body (or `(no output)`) and footer.
pub fn summary_text(summary: &SinkSummary) -> String {
    let body = summary.body.strip_suffix('\n').unwrap_or(&summary.body);
    let mut text =
        if body.trim().is_empty() { "(no output)".to_string() } else { body.to_string() };
    if let Some(footer) = &summary.footer {
        text.push('\n');
        text.push_str(footer);
    }
    text
}

/// A job's label: the first non-empty line of `command`, at most 80 characters (the last one
/// `…` when cut).
pub fn job_label(command: &str) -> String {
    let first = command.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    if first.chars().count() > LABEL_CHARS {
        let cut: String = first.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        first.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_first_line_cut_at_80_characters() {
        assert_eq!(job_label("\n  make test \nmore"), "make test");
        let long = "x".repeat(100);
        let label = job_label(&long);
        assert_eq!(label.chars().count(), 80);
        assert!(label.ends_with('…'));
    }
}
