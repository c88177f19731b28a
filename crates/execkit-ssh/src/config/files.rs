//! Which files are read, in which order, and reading one of them (spec-ssh S6, S10, S11).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// The Toolkit cwd or its nearest ancestor holding `.execkit/` or `.git`; the cwd itself
/// when no ancestor does.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".execkit").is_dir() || dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The configuration files in priority order: the project's `.execkit/ssh.json`, the user's
/// `~/.execkit/ssh.json`, then the project's `ssh.json` and `.ssh.json`.
pub fn candidate_files(root: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut files = vec![root.join(".execkit/ssh.json")];
    if let Some(home) = home {
        files.push(home.join(".execkit/ssh.json"));
    }
    files.push(root.join("ssh.json"));
    files.push(root.join(".ssh.json"));
    files
}

/// What a file looked like at load: a change of size or mtime (or its appearance or
/// disappearance) means it is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub path: PathBuf,
    pub size: Option<u64>,
    pub mtime: Option<SystemTime>,
}

impl FileStamp {
    pub fn of(path: &Path) -> FileStamp {
        let meta = std::fs::metadata(path).ok();
        FileStamp {
            path: path.to_path_buf(),
            size: meta.as_ref().map(std::fs::Metadata::len),
            mtime: meta.and_then(|m| m.modified().ok()),
        }
    }
}

/// The parsed document, or `None` (with a warning unless the file does not exist).
pub fn read_document(file: &Path, max_bytes: u64, warnings: &mut Vec<String>) -> Option<Value> {
    let f = file.display();
    let meta = match std::fs::metadata(file) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            warnings.push(format!("{f}: cannot be read ({err}); file ignored"));
            return None;
        }
    };
    if !meta.is_file() {
        warnings.push(format!("{f}: not a regular file; file ignored"));
        return None;
    }
    if meta.len() > max_bytes {
        warnings.push(format!("{f}: larger than 1 MiB; file ignored"));
        return None;
    }
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) => {
            warnings.push(format!("{f}: cannot be read ({err}); file ignored"));
            return None;
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Some(Value::Object(map)),
        Ok(_) => {
            warnings.push(format!("{f}: the top level must be an object; file ignored"));
            None
        }
        Err(err) => {
            let message = json_message(&err);
            let (line, column) = (err.line(), err.column());
            warnings
                .push(format!("{f}: not valid JSON ({line}:{column}: {message}); file ignored"));
            None
        }
    }
}

/// serde_json's message without its trailing ` at line N column M`.
fn json_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
