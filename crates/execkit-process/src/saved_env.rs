//! The environment this process started with, saved once, and the `execkit` binary's start-up
//! hook that wipes credentials from the process's own environment block.
//!
//! A child can read its parent's `/proc/<pid>/environ`, which shows the environment execkit
//! was started with, scrubbed values included. So the binary, before any thread or child
//! exists, saves its environment, overwrites the value bytes of every variable the scrub would
//! remove in the memory `/proc/self/environ` shows, and makes itself non-dumpable so a
//! non-root child cannot read `/proc/<pid>/mem` either (spec-output O47). Libraries never call
//! the hook: their host process's memory is the embedder's.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

use crate::scrub::{ScrubRules, WITHHELD, is_credential};

static SAVED: OnceLock<SavedEnvironment> = OnceLock::new();

/// The one place execkit reads its process environment; everything else reads the saved copy
/// through the Toolkit's lookup, which clippy.toml enforces for every other call site.
#[allow(clippy::disallowed_methods)]
fn read_process_environment() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

/// The process environment as it was when first captured, for knob reads and for what children
/// inherit. Captured once; later changes to the process environment do not show here.
#[derive(Debug, Clone, Default)]
pub struct SavedEnvironment {
    vars: Vec<(OsString, OsString)>,
}

impl SavedEnvironment {
    /// The saved environment, captured from the process environment on the first call.
    pub fn capture() -> &'static SavedEnvironment {
        SAVED.get_or_init(|| SavedEnvironment { vars: read_process_environment() })
    }

    /// The saved environment if one was captured.
    pub fn saved() -> Option<&'static SavedEnvironment> {
        SAVED.get()
    }

    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }

    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_os_str())
    }

    /// A knob's value as text (`None` when unset or not UTF-8), like `std::env::var(..).ok()`.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.var_os(name).and_then(|v| v.to_str()).map(str::to_string)
    }
}

/// What children inherit: the saved environment when one was captured, else the current
/// process environment (a library host's, read fresh each time).
pub fn inherited_vars() -> Vec<(OsString, OsString)> {
    match SavedEnvironment::saved() {
        Some(saved) => saved.vars.clone(),
        None => read_process_environment(),
    }
}

/// The `execkit` binary's first act: save the environment (withholding every credential no
/// setting passes on), wipe the credentials' values in the process's own environment block,
/// and set `PR_SET_DUMPABLE 0`. Must run before any thread exists. Idempotent.
pub fn protect_own_environment() -> Result<(), String> {
    if SAVED.get().is_some() {
        return Ok(());
    }
    let vars = read_process_environment();
    let knob = |name: &str| {
        vars.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.to_str()).map(str::to_string)
    };
    let rules = ScrubRules::from_lookup(&knob);
    // The bash scrub turned off, or an exact eval allowlist entry, hands the value to children.
    let bash_unscrubbed = knob("EXECKIT_BASH_ENV_SCRUB").as_deref() == Some("0");
    let eval_allowed: Vec<String> = knob("EXECKIT_EVAL_ENV_ALLOW")
        .map(|v| v.split([',', ' ']).map(str::to_string).collect())
        .unwrap_or_default();
    let mut wiped = HashSet::new();
    let saved = vars
        .iter()
        .map(|(name, value)| {
            let credential =
                is_credential(&name.to_string_lossy(), &value.to_string_lossy(), &rules);
            if !credential {
                return (name.clone(), value.clone());
            }
            wiped.insert(name.as_bytes().to_vec());
            let passed_on = bash_unscrubbed || eval_allowed.iter().any(|a| a.as_str() == name);
            let kept = if passed_on { value.clone() } else { OsString::from(WITHHELD) };
            (name.clone(), kept)
        })
        .collect();
    let _ = SAVED.set(SavedEnvironment { vars: saved });
    let wipe = crate::environ_block::wipe_values(&wiped);
    // SAFETY: prctl with integer arguments only.
    let dumpable = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    wipe.map_err(|e| format!("cannot wipe credentials from the process environment: {e}"))?;
    if dumpable != 0 {
        let err = std::io::Error::last_os_error();
        return Err(format!("cannot make the process non-dumpable: {err}"));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // re-runs this test binary as the protected process
mod tests {
    use super::*;

    const CHILD: &str = "EXECKIT_TEST_PROTECT_CHILD";
    const SECRET: &str = "ghp_protectcheckAAAAAAAAAAAAAAAAAAAAAA";

    /// In a fresh process (this test binary re-run on this test alone): protects, then reports
    /// what the block, std's view, the saved copy and prctl show.
    #[test]
    fn protect_wipes_the_block_saves_a_copy_and_clears_dumpable() {
        if std::env::var_os(CHILD).is_some() {
            protect_own_environment().unwrap();
            let block = std::fs::read("/proc/self/environ").unwrap();
            let leaked = block.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
            let saved = SavedEnvironment::saved().unwrap();
            // SAFETY: prctl with integer arguments only.
            let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
            println!(
                "REPORT leaked={leaked} std={:?} token={:?} mirror={:?} home={:?} dumpable={dumpable}",
                std::env::var("GITHUB_TOKEN").unwrap_or_default(),
                saved.lookup("GITHUB_TOKEN").map(|v| v == WITHHELD),
                saved.lookup("MIRROR_VALUE").map(|v| v == WITHHELD),
                saved.lookup("HOME_LIKE"),
            );
            return;
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "saved_env::tests::protect_wipes_the_block_saves_a_copy_and_clears_dumpable",
            ])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("GITHUB_TOKEN", SECRET)
            .env("MIRROR_VALUE", SECRET)
            .env("HOME_LIKE", "/home/x")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&output.stdout);
        let report = out
            .lines()
            .find_map(|l| l.find("REPORT").map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("{out}"));
        assert_eq!(
            report,
            "REPORT leaked=false std=\"\" token=Some(true) mirror=Some(true) \
             home=Some(\"/home/x\") dumpable=0"
        );
    }
}
