//! Reading the Toolkit's own knobs: the process limits of the supervisor and the artifact store.

use std::path::PathBuf;
use std::time::Duration;

use execkit_output::artifact::{ArtifactStore, StoreLimits};
use execkit_output::clamp::Limits;
use execkit_process::SupervisorConfig;
use execkit_tool::{Knob, KnobError, Lookup, Notes};

/// Processes one command may have (the cgroup's `pids.max`, spec-output O35).
const PIDS_MAX: Knob = Knob { name: "EXECKIT_PIDS_MAX", default: 4096, min: 16, max: 4_194_304 };

/// What `EXECKIT_MEMORY_MAX` accepts.
const MEMORY_MAX_ACCEPTS: &str = "a size (e.g. 2G, 512M)";

/// The Toolkit's one lookup: the saved process environment (the current one for a library
/// host that saved none), then the builder's overrides on top.
pub(crate) fn toolkit_lookup<'a>(
    overrides: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Lookup {
    let mut lookup = Lookup::from_vars(execkit_process::env::inherited_vars());
    for (name, value) in overrides {
        lookup.set(name, value);
    }
    lookup
}

/// The supervisor's settings: kill grace and drain windows from the limits, containment and
/// PTY switches and the per-command caps from the lookup.
pub(crate) fn supervisor_config(
    limits: &Limits,
    lookup: &Lookup,
    subreaper: bool,
    notes: &mut Notes,
) -> Result<SupervisorConfig, KnobError> {
    Ok(SupervisorConfig {
        kill_grace: Duration::from_millis(limits.kill_grace_ms),
        drain_idle: Duration::from_millis(limits.drain_idle_ms),
        drain_max: Duration::from_millis(limits.drain_max_ms),
        subreaper,
        use_cgroup: !lookup.is_on("EXECKIT_NO_CGROUP"),
        spawn_into_leaf: true,
        memory_max: memory_max(lookup)?,
        no_pty: lookup.is_on("EXECKIT_NO_PTY"),
        pids_max: PIDS_MAX.read(lookup, notes)?,
        runtime_dir: lookup.non_empty("XDG_RUNTIME_DIR").map(PathBuf::from),
        temp_dir: lookup.non_empty("TMPDIR").map(PathBuf::from),
        // The Toolkit resolves the sandbox policy from its own sources after this.
        sandbox: Default::default(),
    })
}

/// The artifact store's directory (`EXECKIT_ARTIFACT_DIR`, else under `HOME`) and limits.
pub(crate) fn artifact_store(lookup: &Lookup, limits: &Limits) -> Result<ArtifactStore, String> {
    let dir: PathBuf = ArtifactStore::default_dir(lookup);
    ArtifactStore::open(&dir, StoreLimits::from_limits(limits)).map_err(|e| e.to_string())
}

/// `EXECKIT_MEMORY_MAX` in bytes (a plain number, or with a K/M/G suffix); unset or empty is
/// no cap.
fn memory_max(lookup: &Lookup) -> Result<Option<u64>, KnobError> {
    let Some(raw) = lookup.non_empty("EXECKIT_MEMORY_MAX") else {
        return Ok(None);
    };
    let bad = || KnobError::new("EXECKIT_MEMORY_MAX", &raw, MEMORY_MAX_ACCEPTS);
    let text = raw.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(bad()),
    };
    digits.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << shift)).map(Some).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(value: &str) -> Result<Option<u64>, String> {
        memory_max(&Lookup::from_vars([("EXECKIT_MEMORY_MAX", value)])).map_err(|e| e.to_string())
    }

    #[test]
    fn memory_max_takes_a_size_and_names_what_it_accepts() {
        assert_eq!(memory("2G"), Ok(Some(2 << 30)));
        assert_eq!(memory("512MiB"), Ok(Some(512 << 20)));
        assert_eq!(memory(" "), Ok(None));
        assert_eq!(
            memory("lots"),
            Err(r#"EXECKIT_MEMORY_MAX="lots" is not a size (e.g. 2G, 512M)"#.to_string())
        );
    }

    #[test]
    fn the_switches_and_the_pids_cap_come_from_the_lookup() {
        let lookup = Lookup::from_vars([
            ("EXECKIT_NO_CGROUP", "1"),
            ("EXECKIT_NO_PTY", "1"),
            ("EXECKIT_PIDS_MAX", "3"),
        ]);
        let mut notes = Notes::default();
        let config = supervisor_config(&Limits::default(), &lookup, false, &mut notes).unwrap();
        assert!(!config.use_cgroup && config.no_pty);
        assert_eq!(config.pids_max, 16);
        assert_eq!(notes.lines(), ["EXECKIT_PIDS_MAX=3 is outside 16..4194304; using 16"]);
    }

    #[test]
    fn overrides_win_over_the_process_environment() {
        let overrides = [("PATH".to_string(), "/nowhere".to_string())];
        let lookup = toolkit_lookup(overrides.iter().map(|(k, v)| (k, v)));
        assert_eq!(lookup.get("PATH"), Some("/nowhere"));
    }
}
