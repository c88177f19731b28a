//! Integration tests: `execkit artifact` reading a capped artifact that real bash output
//! filled (issue 7): reads say which lines were not kept and every `next:` link goes forward.
//! Needs the binary: `cargo build -p execkit-cli`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::cli::execkit_bin;

fn execkit(home: &Path, args: &[&str]) -> Output {
    Command::new(execkit_bin())
        .args(args)
        .env("HOME", home)
        .env("EXECKIT_ARTIFACT_DIR", home.join("artifacts"))
        .env("EXECKIT_ARTIFACT_MAX_BYTES", (2u64 << 20).to_string())
        .current_dir(home)
        .stdin(Stdio::null())
        .output()
        .expect("execkit runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn capped_artifact_reads_name_the_gap_and_point_forward() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let run = execkit(home, &["call", "bash", r#"{"command":"seq 1 600000"}"#]);
    let text = stdout(&run);
    let at = text.find("artifact://").unwrap_or_else(|| panic!("no artifact: {text}"));
    let id = text[at + "artifact://".len()..][..8].to_string();
    let capped = text.find("(capped at 2 MiB: lines ").map(|i| &text[i..]);
    let range = capped.and_then(|c| c.split(' ').nth(5)).unwrap_or_else(|| panic!("{text}"));
    let (first, last) = range.split_once('-').unwrap();
    let (first, last): (u64, u64) = (first.parse().unwrap(), last.parse().unwrap());
    assert!(first < 400_000 && last > 400_000, "{range}");
    let not_kept = format!("lines {first}-{last} were not kept (artifact cap 2 MiB)");

    let grep = execkit(home, &["artifact", &id, "--grep", "^400000$"]);
    assert_eq!(grep.status.code(), Some(0));
    let kept = 600_000 - (last - first + 1);
    assert_eq!(
        stdout(&grep),
        format!("[0 matches in the {kept} kept lines of 600000; {not_kept}]\n")
    );

    let inside = execkit(home, &["artifact", &id, "--lines", "400000-400010"]);
    assert_eq!(inside.status.code(), Some(0), "{inside:?}");
    let next = format!("next: artifact://{id}?lines={}-{}", last + 1, last + 2500);
    assert_eq!(stdout(&inside), format!("{not_kept}\n[{next}]\n"));

    let tail = execkit(home, &["artifact", &id, "--tail", "3000"]);
    let text = stdout(&tail);
    let footer = text.lines().last().unwrap_or_default();
    assert_eq!(
        footer,
        format!(
            "[Showing lines 597501-600000 of 600000; next: artifact://{id}?lines=597001-597500]"
        )
    );
    let whole_tail = execkit(home, &["artifact", &id, "--tail", "10"]);
    assert!(!stdout(&whole_tail).contains("next:"), "{}", stdout(&whole_tail));
}
