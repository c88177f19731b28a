//! `execkit doctor`'s debug section: every adapter definition, with its resolved command or
//! the reason it cannot run here.

use crate::runner::Inner;

pub(crate) fn lines(inner: &Inner) -> Vec<String> {
    let mut lines = Vec::new();
    for def in &inner.registry.defs {
        lines.push(match inner.registry.cached_line(&def.name) {
            Some(line) => line,
            None => format!("{}: not checked yet", def.name),
        });
    }
    lines.extend(inner.registry.warnings.iter().cloned());
    lines.push(format!("idle limit: {} s", inner.config.idle.as_secs()));
    lines.push(format!("redaction: {}", if inner.config.redact { "on" } else { "off" }));
    lines
}
