//! `execkit doctor`: what this machine offers, and the reason for anything missing.

use std::path::Path;

use crate::common::{self, EXIT_OK};

pub async fn run(cwd: Option<&Path>) -> anyhow::Result<i32> {
    let toolkit = common::cli_toolkit(cwd)?;
    let doctor = toolkit.doctor_probed().await;
    toolkit.close().await;
    let mut out = String::new();
    for (index, section) in doctor.sections.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&section.title);
        out.push('\n');
        for line in &section.lines {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    common::write_stdout(out.as_bytes())?;
    Ok(EXIT_OK)
}
