//! The Python kernel backend: interpreter resolution (spec P1, cached per P2), the embedded
//! kernel files (P3) and the kernel's filtered environment (P4).

mod cache;
pub mod discover;
pub mod env;
pub mod files;
pub mod interpreter;

use std::path::PathBuf;

use execkit_protocol::eval::Language;
use tokio::sync::OnceCell;

use crate::backend::{BackendEnv, BoxFuture, KernelBackend};
use crate::error::StartError;
use crate::kernel::KernelSpawn;
use crate::pool::KernelKey;

pub use discover::{candidates, resolve};
pub use env::kernel_env;
pub use files::{KERNEL_FILES, kernel_files};
pub use interpreter::{Interpreter, Resolution};

/// Python kernels: `python -I -B -X utf8 start.py` (which runs `runner.py` from a bytecode
/// cache) with the resolved interpreter.
#[derive(Debug, Default)]
pub struct PythonBackend {
    resolution: OnceCell<Resolution>,
}

impl PythonBackend {
    async fn resolution(&self, env: BackendEnv<'_>) -> &Resolution {
        self.resolution
            .get_or_init(|| async {
                let cfg = env.config;
                let found = candidates(env.cwd, cfg.python.as_deref(), &env.lookup.as_fn());
                resolve(env.supervisor, env.cwd, found, &cfg.cache_dir, env.lookup).await
            })
            .await
    }

    fn chosen(&self) -> Result<Interpreter, StartError> {
        let res = self.resolution.get();
        res.and_then(|r| r.chosen.clone()).ok_or_else(|| {
            StartError::NoInterpreter(res.map(Resolution::missing_message).unwrap_or_default())
        })
    }
}

impl KernelBackend for PythonBackend {
    fn language(&self) -> Language {
        Language::Py
    }

    fn executable<'a>(&'a self, env: BackendEnv<'a>) -> BoxFuture<'a, Result<PathBuf, String>> {
        Box::pin(async move {
            let res = self.resolution(env).await;
            match &res.chosen {
                Some(interp) => Ok(interp.executable.clone()),
                None => Err(res.missing_message()),
            }
        })
    }

    fn spawn(&self, key: &KernelKey, env: BackendEnv<'_>) -> Result<KernelSpawn, StartError> {
        let cfg = env.config;
        let interp = self.chosen()?;
        let runner = match &cfg.kernel_script {
            Some(script) => script.clone(),
            None => kernel_files(&cfg.cache_dir)?,
        };
        let base = env.lookup.vars().map(|(k, v)| (k.clone(), v.clone()));
        let vars = kernel_env(base, &cfg.env_allow, &interp, &key.session);
        Ok(KernelSpawn {
            language: Language::Py,
            program: interp.executable,
            args: vec![
                "-I".into(),
                "-B".into(),
                "-X".into(),
                "utf8".into(),
                runner.into_os_string(),
            ],
            cwd: key.cwd.clone(),
            env: vars,
            ready_timeout: cfg.ready_timeout,
            trace: cfg.trace,
        })
    }

    fn doctor(&self) -> Vec<String> {
        let Some(res) = self.resolution.get() else {
            return vec!["python: not resolved yet (resolved on first use or pre-warm)".into()];
        };
        let mut lines = Vec::new();
        match &res.chosen {
            Some(i) => lines.extend(chosen_lines(i)),
            None => lines.push(res.missing_message()),
        }
        for (path, why) in &res.rejected {
            lines.push(format!("python: rejected {} ({why})", path.display()));
        }
        lines
    }

    fn interrupt_name(&self) -> &'static str {
        "KeyboardInterrupt"
    }
}

/// The chosen interpreter, and when it was found through a shim, what kernels start instead.
fn chosen_lines(i: &Interpreter) -> Vec<String> {
    let (a, b, c) = i.version;
    let mut lines = vec![format!(
        "python: {} (Python {a}.{b}.{c}, from {}; found as {})",
        i.executable.display(),
        i.source,
        i.candidate.display()
    )];
    if i.candidate != i.executable
        && std::fs::canonicalize(&i.candidate).ok().as_ref() != Some(&i.executable)
    {
        lines.push(format!(
            "python: {} is a shim; kernels start {} directly",
            i.candidate.display(),
            i.executable.display()
        ));
    }
    lines
}
