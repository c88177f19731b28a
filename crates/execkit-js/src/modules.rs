//! The module loader (spec-eval.md JS9): local files only, cached by path, and evicted with
//! every module that imports them when the file changed between cells.

use boa_engine::module::{ModuleLoader, Referrer};
use boa_engine::{Context, JsNativeError, JsResult, JsString, Module, Source};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

struct Entry {
    module: Module,
    stamp: Option<(SystemTime, u64)>,
}

/// Loads `./`, `../`, absolute and `file://` specifiers; refuses everything else.
#[derive(Default)]
pub struct FileLoader {
    cache: RefCell<HashMap<PathBuf, Entry>>,
    /// dependency → the cached modules that import it
    importers: RefCell<HashMap<PathBuf, HashSet<PathBuf>>>,
}

impl std::fmt::Debug for FileLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileLoader").field("cached", &self.cache.borrow().len()).finish()
    }
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The JS9 message for anything that is not a file path.
pub fn bare_specifier_message(spec: &str) -> String {
    format!(
        "Cannot import \"{spec}\": only file paths are supported (no Node.js, no npm packages); use tool.bash for anything that needs the OS"
    )
}

impl FileLoader {
    /// Before a cell: drops modules whose file changed, with everything that imports them.
    pub fn refresh(&self) {
        let changed: Vec<PathBuf> = self
            .cache
            .borrow()
            .iter()
            .filter(|(path, entry)| stamp(path) != entry.stamp)
            .map(|(path, _)| path.clone())
            .collect();
        let mut todo = changed;
        let mut seen = HashSet::new();
        while let Some(path) = todo.pop() {
            if !seen.insert(path.clone()) {
                continue;
            }
            self.cache.borrow_mut().remove(&path);
            if let Some(users) = self.importers.borrow_mut().remove(&path) {
                todo.extend(users);
            }
        }
    }

    fn resolve(spec: &str, referrer: Option<&Path>) -> JsResult<PathBuf> {
        let spec_path = spec.strip_prefix("file://").unwrap_or(spec);
        let relative = spec_path.starts_with("./") || spec_path.starts_with("../");
        let base = if spec_path.starts_with('/') {
            PathBuf::new()
        } else if relative {
            match referrer.and_then(Path::parent) {
                Some(dir) => dir.to_path_buf(),
                None => std::env::current_dir().unwrap_or_default(),
            }
        } else {
            return Err(JsNativeError::error().with_message(bare_specifier_message(spec)).into());
        };
        let joined = base.join(spec_path);
        let name = joined.as_os_str().to_string_lossy().into_owned();
        let candidates = [
            joined.clone(),
            PathBuf::from(format!("{name}.mjs")),
            PathBuf::from(format!("{name}.js")),
            joined.join("index.js"),
        ];
        candidates
            .iter()
            .find(|c| c.is_file())
            .and_then(|c| c.canonicalize().ok())
            .ok_or_else(|| {
                JsNativeError::error()
                    .with_message(format!(
                        "Cannot find module \"{spec}\" (looked for {name}, then .mjs, .js and /index.js)"
                    ))
                    .into()
            })
    }

    fn load(&self, path: &Path, context: &mut Context) -> JsResult<Module> {
        if let Some(entry) = self.cache.borrow().get(path) {
            return Ok(entry.module.clone());
        }
        let stamp = stamp(path);
        let text = std::fs::read_to_string(path).map_err(|e| {
            JsNativeError::error().with_message(format!("Cannot import {}: {e}", path.display()))
        })?;
        let module = if path.extension().is_some_and(|e| e == "json") {
            Module::parse_json(JsString::from(text.as_str()), context)?
        } else {
            Module::parse(Source::from_bytes(text.as_bytes()).with_path(path), None, context)?
        };
        self.cache.borrow_mut().insert(path.to_path_buf(), Entry { module: module.clone(), stamp });
        Ok(module)
    }
}

impl ModuleLoader for FileLoader {
    fn load_imported_module(
        self: Rc<Self>,
        referrer: Referrer,
        request: boa_engine::module::ModuleRequest,
        context: &RefCell<&mut Context>,
    ) -> impl Future<Output = JsResult<Module>> {
        let spec = request.specifier().to_std_string_lossy();
        let from_module = match &referrer {
            Referrer::Module(m) => m.path().map(Path::to_path_buf),
            _ => None,
        };
        let result = Self::resolve(&spec, from_module.as_deref()).and_then(|path| {
            if let Some(importer) = &from_module {
                self.importers
                    .borrow_mut()
                    .entry(path.clone())
                    .or_default()
                    .insert(importer.clone());
            }
            self.load(&path, &mut context.borrow_mut())
        });
        std::future::ready(result)
    }
}
