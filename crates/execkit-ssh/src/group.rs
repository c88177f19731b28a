//! Host groups (spec-ssh S37): one command on many hosts, with bounded parallelism and one
//! outcome per host, in configuration order.

use std::sync::Arc;
use std::time::Duration;

use execkit_process::CancellationToken;
use indexmap::IndexSet;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::checks::check_request;
use crate::client::SshClient;
use crate::collect::Collector;
use crate::error::SshError;
use crate::run::{RunEnd, RunOutcome, RunRequest};

/// A group call fans out to at most this many hosts: more is a fleet tool's job.
pub const MAX_GROUP_HOSTS: usize = 64;
/// `parallel` range and default.
pub const PARALLEL_MAX: usize = 16;
pub const PARALLEL_DEFAULT: usize = 4;

/// Makes the collector of one host of a group call.
pub type OutputFor = Arc<dyn Fn(&str) -> Collector + Send + Sync>;

/// One command on hosts and groups; each host gets the full timeout.
#[derive(Debug, Clone)]
pub struct GroupRequest {
    /// Host or group names.
    pub hosts: Vec<String>,
    pub command: String,
    pub cwd: Option<String>,
    pub timeout: Duration,
    /// Hosts run at once, 1..=16; each host's `max_sessions` still applies.
    pub parallel: usize,
    pub cancel: CancellationToken,
}

/// What happened on one host of a group.
#[derive(Debug, Clone)]
pub struct HostResult {
    pub host: String,
    pub result: Result<RunOutcome, SshError>,
}

impl HostResult {
    pub fn success(&self) -> bool {
        self.result.as_ref().is_ok_and(RunOutcome::success)
    }

    /// `=== <name>: exit <n>, <ms> ms ===`, or `timed out` / `could not connect` / `failed`.
    pub fn section_header(&self) -> String {
        let what = match &self.result {
            Ok(out) => match out.end {
                RunEnd::Exited(code) => format!("exit {code}, {} ms", out.wall.as_millis()),
                RunEnd::NoStatus => format!("no exit status, {} ms", out.wall.as_millis()),
                RunEnd::TimedOut => "timed out".to_string(),
                RunEnd::Cancelled => "cancelled".to_string(),
            },
            Err(err) if err.is_connect_failure() => "could not connect".to_string(),
            Err(_) => "failed".to_string(),
        };
        format!("=== {}: {what} ===", self.host)
    }
}

/// `<k> of <n> hosts succeeded; failed: <names>` (without the failed part when none did).
pub fn group_summary(results: &[HostResult]) -> String {
    let failed: Vec<&str> =
        results.iter().filter(|r| !r.success()).map(|r| r.host.as_str()).collect();
    let ok = results.len() - failed.len();
    let mut line = format!("{ok} of {} hosts succeeded", results.len());
    if !failed.is_empty() {
        line.push_str(&format!("; failed: {}", failed.join(", ")));
    }
    line
}

impl SshClient {
    /// The host names a group call reaches, in configuration order; unknown names fail the
    /// whole call before anything runs.
    pub fn resolve_hosts(&self, names: &[String]) -> Result<Vec<String>, SshError> {
        let config = self.config();
        let mut wanted = IndexSet::new();
        for name in names {
            if config.hosts.contains_key(name) {
                wanted.insert(name.clone());
            } else if let Some(members) = config.groups.get(name) {
                wanted.extend(members.iter().cloned());
            } else {
                let mut configured: Vec<String> = config.hosts.keys().cloned().collect();
                configured.extend(config.groups.keys().cloned());
                return Err(SshError::UnknownHost { name: name.clone(), configured });
            }
        }
        let ordered: Vec<String> =
            config.hosts.keys().filter(|h| wanted.contains(*h)).cloned().collect();
        if ordered.is_empty() {
            return Err(SshError::Argument("hosts: must name at least one host or group".into()));
        }
        if ordered.len() > MAX_GROUP_HOSTS {
            return Err(SshError::Argument(format!(
                "hosts: {} hosts named; at most {MAX_GROUP_HOSTS} per call",
                ordered.len()
            )));
        }
        Ok(ordered)
    }

    /// Runs the command on every host, at most `parallel` at once; one result per host.
    pub async fn run_group(&self, request: &GroupRequest) -> Result<Vec<HostResult>, SshError> {
        let cap = self.inner.options.max_output_bytes;
        let ran =
            self.run_group_into(request, Arc::new(move |_| Collector::new(cap, false))).await?;
        Ok(ran
            .into_iter()
            .map(|(mut one, out)| {
                if let Ok(outcome) = &mut one.result {
                    outcome.output = out.finish().0;
                }
                one
            })
            .collect())
    }

    /// [`SshClient::run_group`] with each host's output going into the collector
    /// `output_for(host)` makes (its own sink and artifact).
    pub async fn run_group_into(
        &self,
        request: &GroupRequest,
        output_for: OutputFor,
    ) -> Result<Vec<(HostResult, Collector)>, SshError> {
        if !(1..=PARALLEL_MAX).contains(&request.parallel) {
            return Err(SshError::Argument(format!(
                "parallel: must be 1..{PARALLEL_MAX} (got {})",
                request.parallel
            )));
        }
        let hosts = self.resolve_hosts(&request.hosts)?;
        let config = self.config();
        let first = RunRequest {
            host: hosts[0].clone(),
            command: request.command.clone(),
            cwd: request.cwd.clone(),
            timeout: request.timeout,
            cancel: request.cancel.clone(),
        };
        // Argument errors are the same on every host: report them once, before fanning out.
        if let Err(err) = check_request(&config, &first)
            && matches!(err, SshError::Argument(_))
        {
            return Err(err);
        }
        let slots = Arc::new(Semaphore::new(request.parallel));
        let mut tasks = JoinSet::new();
        for (index, host) in hosts.iter().enumerate() {
            let client = self.clone();
            let slots = slots.clone();
            let one = RunRequest { host: host.clone(), ..first.clone() };
            let mut out = output_for(host);
            tasks.spawn(async move {
                let _slot = slots.acquire_owned().await;
                let result = client.run_into(&one, &mut out).await;
                (index, result, out)
            });
        }
        let mut done: Vec<Option<(Result<RunOutcome, SshError>, Collector)>> =
            (0..hosts.len()).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            if let Ok((index, result, out)) = joined {
                done[index] = Some((result, out));
            }
        }
        Ok(hosts
            .into_iter()
            .zip(done)
            .map(|(host, done)| {
                let (result, out) = done.unwrap_or_else(|| {
                    let failed = SshError::Local(format!("the call on {host} did not finish"));
                    (Err(failed), output_for(&host))
                });
                (HostResult { host, result }, out)
            })
            .collect())
    }
}
