//! The ssh tool's runner: resolves a call, runs it on one host or a group through the
//! [`SshClient`], streaming each host's output into its own OutputSink, and renders the
//! typed outcome.

use std::path::PathBuf;
use std::sync::Arc;

use execkit_output::artifact::ArtifactStore;
use execkit_output::clamp::Limits;
use execkit_output::sink::{OutputSink, SinkConfig, SinkSummary, Spill};
use execkit_process::Supervisor;
use execkit_protocol::ssh::SshParams;
use execkit_protocol::{ProgressFn, ToolResult};
use execkit_runkit::Observer;
use execkit_tool::{CallContext, Lookup};

use super::config::SshToolConfig;
use super::request::{SshRequest, Target, resolve};
use super::result::{HostRun, SshOutcome};
use crate::client::{SshClient, SshOptions};
use crate::collect::Collector;
use crate::environment::Environment;
use crate::group::GroupRequest;
use crate::run::RunRequest;

/// A group shares the inline window equally, but no host gets less than this.
const MIN_SHARE_BYTES: u64 = 2048;
/// Nor fewer lines than this at either end.
const MIN_SHARE_LINES: u64 = 10;
/// Artifact labels are cut to this many characters.
const LABEL_CHARS: usize = 120;

/// What the Toolkit hands the ssh tool.
#[derive(Debug, Clone)]
pub struct SshDeps {
    pub supervisor: Supervisor,
    pub artifacts: Result<ArtifactStore, String>,
    pub limits: Limits,
    /// The saved environment plus overrides: what configuration expands with, and what ssh
    /// inherits.
    pub lookup: Lookup,
    /// The Toolkit's directory: the project root is found from here.
    pub cwd: PathBuf,
}

/// The ssh tool. Cheap to clone; clones share masters and host state.
#[derive(Debug, Clone)]
pub struct SshRunner {
    client: SshClient,
    deps: SshDeps,
}

impl SshRunner {
    /// Reads the host configuration; nothing is spawned until the first call.
    pub fn new(config: SshToolConfig, deps: SshDeps) -> SshRunner {
        let vars = deps.lookup.vars().filter_map(|(k, v)| Some((k.to_str()?, v.to_str()?)));
        let env = Environment::from_vars(vars);
        let options = SshOptions { mux: config.mux, ..SshOptions::default() };
        let client = SshClient::new(&deps.cwd, env, deps.supervisor.clone(), options);
        SshRunner { client, deps }
    }

    pub fn client(&self) -> &SshClient {
        &self.client
    }

    /// The tool's description with the configured hosts, or `None` while there is none (the
    /// tool is then left out of the tool list).
    pub fn tool_description(&self) -> Option<String> {
        self.client.tool_description()
    }

    /// Runs one call. Never panics; every failure is an `isError` result.
    pub async fn call(&self, params: SshParams, ctx: &CallContext) -> ToolResult {
        let request = match resolve(params, self.deps.limits.max_timeout_s) {
            Ok(request) => request,
            Err(err) => return ToolResult::error(err.to_string()),
        };
        let outcome = match request.target.clone() {
            Target::One(host) => self.one(host, request, ctx).await,
            Target::Many { names, parallel } => self.group(names, parallel, request, ctx).await,
        };
        outcome.into_result()
    }

    async fn one(&self, host: String, request: SshRequest, ctx: &CallContext) -> SshOutcome {
        let timeout_s = request.timeout.as_secs();
        let outputs = Outputs {
            config: SinkConfig::from_limits(&self.deps.limits),
            artifacts: self.deps.artifacts.clone(),
            command: request.command.clone(),
            progress: ctx.progress.clone(),
            timeout_s,
        };
        let mut out = outputs.collector(&host, false);
        let run = RunRequest {
            host: host.clone(),
            command: request.command,
            cwd: request.cwd,
            timeout: request.timeout,
            cancel: ctx.cancel.clone(),
        };
        let result = self.client.run_into(&run, &mut out).await;
        let summary = outputs.finish(out);
        SshOutcome::One {
            run: Box::new(HostRun { host, result, summary, timeout_s }),
            notices: request.notices,
        }
    }

    async fn group(
        &self,
        names: Vec<String>,
        parallel: usize,
        request: SshRequest,
        ctx: &CallContext,
    ) -> SshOutcome {
        let hosts = match self.client.resolve_hosts(&names) {
            Ok(hosts) => hosts,
            Err(err) => return SshOutcome::Refused(err.to_string()),
        };
        let timeout_s = request.timeout.as_secs();
        let outputs = Arc::new(Outputs {
            config: share(&self.deps.limits, hosts.len()),
            artifacts: self.deps.artifacts.clone(),
            command: request.command.clone(),
            progress: ctx.progress.clone(),
            timeout_s,
        });
        let group = GroupRequest {
            hosts: names,
            command: request.command,
            cwd: request.cwd,
            timeout: request.timeout,
            parallel,
            cancel: ctx.cancel.clone(),
        };
        let make = outputs.clone();
        let ran = self.client.run_group_into(&group, Arc::new(move |h| make.collector(h, true)));
        let ran = match ran.await {
            Ok(ran) => ran,
            Err(err) => return SshOutcome::Refused(err.to_string()),
        };
        let runs = ran
            .into_iter()
            .map(|(one, out)| HostRun {
                summary: outputs.finish(out),
                host: one.host,
                result: one.result,
                timeout_s,
            })
            .collect();
        SshOutcome::Group { runs, notices: request.notices }
    }

    /// Configuration problems, the hosts, the control directory and masters that did not
    /// answer.
    pub fn doctor(&self) -> Vec<String> {
        let mut lines = self.client.doctor_lines();
        lines.extend(self.client.doctor());
        lines
    }

    /// Nothing to release: masters outlive the Toolkit on purpose (another process may use
    /// them), and every ssh process this tool starts is the Supervisor's.
    pub async fn close(&self) {}
}

/// How each host's output is collected: its sink's window, its artifact, its progress.
struct Outputs {
    config: SinkConfig,
    artifacts: Result<ArtifactStore, String>,
    command: String,
    progress: Option<ProgressFn>,
    timeout_s: u64,
}

impl Outputs {
    /// A streaming collector for `host`; in a group, progress messages name the host.
    fn collector(&self, host: &str, in_group: bool) -> Collector {
        let label: String = format!("{host}: {}", self.command).chars().take(LABEL_CHARS).collect();
        let progress = match (&self.progress, in_group) {
            (Some(send), true) => Some(named_progress(send.clone(), host.to_string())),
            (progress, _) => progress.clone(),
        };
        let sink = make_sink(&self.artifacts, self.config.clone(), label.clone());
        let observer = Observer::<()>::new(sink, progress, Some(self.timeout_s));
        let (artifacts, config) = (self.artifacts.clone(), self.config.clone());
        let fresh = move || make_sink(&artifacts, config.clone(), label.clone());
        Collector::streaming(observer, Box::new(fresh))
    }

    fn finish(&self, out: Collector) -> SinkSummary {
        let sink = match out.into_observer() {
            Some(observer) => observer.sink,
            None => OutputSink::new(self.config.clone(), None, None),
        };
        sink.finish()
    }
}

fn named_progress(send: ProgressFn, host: String) -> ProgressFn {
    Arc::new(move |mut event| {
        event.message = format!("{host}: {}", event.message);
        send(event)
    })
}

fn make_sink(
    artifacts: &Result<ArtifactStore, String>,
    config: SinkConfig,
    label: String,
) -> OutputSink {
    match artifacts {
        Ok(store) => {
            let spill = Spill { store: store.clone(), tool: "ssh".to_string(), label };
            OutputSink::new(config, Some(spill), None)
        }
        Err(reason) => OutputSink::new(config, None, Some(reason.clone())),
    }
}

/// Each of `hosts` gets an equal share of the inline window, at least 2 KiB.
fn share(limits: &Limits, hosts: usize) -> SinkConfig {
    let base = SinkConfig::from_limits(limits);
    let n = hosts.max(1) as u64;
    let window = (base.head_bytes + base.tail_bytes).max(1);
    let share = (window / n).max(MIN_SHARE_BYTES);
    let head_bytes = share * base.head_bytes / window;
    SinkConfig {
        head_bytes,
        tail_bytes: share - head_bytes,
        head_lines: (base.head_lines / n).max(MIN_SHARE_LINES),
        tail_lines: (base.tail_lines / n).max(MIN_SHARE_LINES),
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_shares_the_window_with_a_floor() {
        let limits = Limits::default();
        let one = share(&limits, 1);
        assert_eq!(one.head_bytes + one.tail_bytes, limits.head_bytes + limits.tail_bytes);
        let many = share(&limits, 64);
        assert_eq!(many.head_bytes + many.tail_bytes, MIN_SHARE_BYTES);
        assert_eq!(many.head_lines, MIN_SHARE_LINES);
    }
}
