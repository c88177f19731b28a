//! Which adapter debugs a program: by extension, by shebang, by binary magic (a Go binary
//! goes to the `.go` adapters first), or, for a directory, by the root markers of adapters
//! that build packages. Candidates with a root marker in the program's directory or an
//! ancestor up to the project root rank first; otherwise the definitions' order stands (the
//! caller passes them in layer order, built-ins last, native code lldb-dap > gdb > codelldb).

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::adapters::AdapterDef;

/// The marker the Go linker puts in every binary's build info.
const GO_BUILDINFO: &[u8] = b"\xff Go buildinf:";

/// How much of a binary is searched for the Go marker (it sits in the first data sections).
const GO_SCAN_BYTES: u64 = 64 * 1024 * 1024;

/// What the program is, as far as choosing an adapter goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgramKind {
    Directory,
    /// Lower-case, with the dot.
    Extension(String),
    /// The interpreter's basename (`python3` for `#!/usr/bin/env python3`).
    Shebang(String),
    /// ELF, Mach-O or PE; `go` when it carries Go build info.
    Native {
        go: bool,
    },
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DetectError {
    #[error("Program not found: {}{}", .path.display(), whitespace_hint(.path))]
    NotFound { path: PathBuf },
    #[error(
        "{}/ is a directory; pass an executable or source file, or use an adapter that builds packages (dlv).",
        .path.display()
    )]
    Directory { path: PathBuf },
    #[error("No debug adapter handles {}.", .path.display())]
    NoAdapter { path: PathBuf },
}

fn whitespace_hint(path: &Path) -> &'static str {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name.contains(char::is_whitespace) {
        " (\"program\" is a path; put arguments in \"args\")"
    } else {
        ""
    }
}

/// One ranked candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    pub def: &'a AdapterDef,
    /// A root marker of this adapter was found near the program.
    pub root_marker: bool,
    /// A built Go binary: dlv runs it with `mode:"exec"`.
    pub go_binary: bool,
}

/// Looks at the program on disk (an absolute path).
pub fn classify(program: &Path) -> Result<ProgramKind, DetectError> {
    let meta = std::fs::metadata(program)
        .map_err(|_| DetectError::NotFound { path: program.to_path_buf() })?;
    if meta.is_dir() {
        return Ok(ProgramKind::Directory);
    }
    if let Some(ext) = program.extension() {
        return Ok(ProgramKind::Extension(format!(".{}", ext.to_string_lossy().to_lowercase())));
    }
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    let head = &head[..n];
    if let Some(interpreter) = shebang_interpreter(head) {
        return Ok(ProgramKind::Shebang(interpreter));
    }
    if is_native_magic(head) {
        return Ok(ProgramKind::Native { go: has_go_buildinfo(program) });
    }
    Ok(ProgramKind::Unknown)
}

fn shebang_interpreter(head: &[u8]) -> Option<String> {
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    if base(first) == "env" {
        return words.find(|w| !w.starts_with('-')).map(base);
    }
    Some(base(first))
}

fn is_native_magic(head: &[u8]) -> bool {
    const MAGICS: &[&[u8]] = &[
        b"\x7fELF",
        b"\xfe\xed\xfa\xce",
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
        b"MZ",
    ];
    MAGICS.iter().any(|magic| head.starts_with(magic))
}

/// Scans in 1 MiB chunks, keeping the last few bytes of each so a marker split across two
/// chunks is still found, without holding the binary in memory.
fn has_go_buildinfo(program: &Path) -> bool {
    let Ok(file) = std::fs::File::open(program) else { return false };
    let mut file = file.take(GO_SCAN_BYTES);
    let keep = GO_BUILDINFO.len() - 1;
    let mut window = Vec::with_capacity(1 << 20);
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        window.extend_from_slice(&chunk[..n]);
        if window.windows(GO_BUILDINFO.len()).any(|w| w == GO_BUILDINFO) {
            return true;
        }
        window.drain(..window.len().saturating_sub(keep));
    }
}

/// The ranked candidates for `program` (absolute) among `defs`.
pub fn candidates<'a>(
    defs: &'a [AdapterDef],
    program: &Path,
    project_root: &Path,
) -> Result<Vec<Candidate<'a>>, DetectError> {
    let kind = classify(program)?;
    let near = |def: &AdapterDef| marker_near(def, program, project_root);
    let mut found: Vec<Candidate<'a>> = match &kind {
        ProgramKind::Directory => defs
            .iter()
            .filter(|d| d.directory_program && markers_in(d, program))
            .map(|def| Candidate { def, root_marker: true, go_binary: false })
            .collect(),
        ProgramKind::Extension(ext) => pick(defs, |d| d.extensions.contains(ext), near),
        ProgramKind::Shebang(interpreter) => {
            pick(defs, |d| d.shebang.iter().any(|g| glob_match(g, interpreter)), near)
        }
        ProgramKind::Native { go } => {
            let mut list = Vec::new();
            if *go {
                list.extend(
                    defs.iter()
                        .filter(|d| d.extensions.iter().any(|e| e == ".go"))
                        .map(|def| Candidate { def, root_marker: false, go_binary: true }),
                );
            }
            list.extend(pick(defs, |d| d.native, near));
            list
        }
        ProgramKind::Unknown => Vec::new(),
    };
    if found.is_empty() {
        return Err(match kind {
            ProgramKind::Directory => DetectError::Directory { path: program.to_path_buf() },
            _ => DetectError::NoAdapter { path: program.to_path_buf() },
        });
    }
    // Stable: among equals the definitions' own order stands.
    found.sort_by_key(|c| !c.root_marker);
    Ok(found)
}

fn pick<'a>(
    defs: &'a [AdapterDef],
    matches: impl Fn(&AdapterDef) -> bool,
    near: impl Fn(&AdapterDef) -> bool,
) -> Vec<Candidate<'a>> {
    defs.iter()
        .filter(|d| matches(d))
        .map(|def| Candidate { def, root_marker: near(def), go_binary: false })
        .collect()
}

/// A root marker in the program's directory or an ancestor, up to and including the root.
fn marker_near(def: &AdapterDef, program: &Path, project_root: &Path) -> bool {
    let mut dir = program.parent();
    while let Some(current) = dir {
        if markers_in(def, current) {
            return true;
        }
        if current == project_root || !current.starts_with(project_root) {
            return false;
        }
        dir = current.parent();
    }
    false
}

fn markers_in(def: &AdapterDef, dir: &Path) -> bool {
    def.root_markers.iter().any(|marker| {
        if marker.contains('*') {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .any(|entry| glob_match(marker, &entry.file_name().to_string_lossy()))
        } else {
            dir.join(marker).exists()
        }
    })
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((prefix, rest)) => {
            let Some(tail) = name.strip_prefix(prefix) else { return false };
            if rest.is_empty() {
                return true;
            }
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob_match(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod tests;
