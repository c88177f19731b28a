//! `execkit ssh close|probe`: the two things about ssh masters and probes that a person does
//! by hand. The ssh tool never stops a master on its own (another process may share it).

use std::path::Path;
use std::time::Duration;

use clap::{Args, Subcommand};
use execkit_ssh::{RunRequest, SshClient};

use crate::common::{self, EXIT_FAILURE, EXIT_OK};

/// A probe gets this long, connecting included.
const PROBE_BUDGET: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct SshArgs {
    #[command(subcommand)]
    action: SshAction,
}

#[derive(Debug, Subcommand)]
enum SshAction {
    /// Stop a host's master connection (`ssh -O exit`), or every configured host's.
    Close {
        /// The configured host name.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Every configured host.
        #[arg(long)]
        all: bool,
    },
    /// Probe a host's OS and login shell again, replacing the cached answer.
    Probe {
        /// The configured host name.
        name: String,
    },
}

pub async fn run(cwd: Option<&Path>, args: SshArgs) -> anyhow::Result<i32> {
    let toolkit = common::toolkit(cwd)?;
    let client = toolkit.ssh_client().clone();
    let code = match args.action {
        SshAction::Close { name, all } => close(&client, name, all).await,
        SshAction::Probe { name } => probe(&client, &name).await,
    };
    toolkit.close().await;
    code
}

async fn close(client: &SshClient, name: Option<String>, all: bool) -> anyhow::Result<i32> {
    let names: Vec<String> = match name {
        Some(name) => vec![name],
        None if all => client.config().hosts.keys().cloned().collect(),
        None => return common::usage("name a host or pass --all"),
    };
    let mut out = String::new();
    let mut code = EXIT_OK;
    for name in names {
        if let Err(text) = known(client, &name) {
            out.push_str(&format!("{text}\n"));
            code = EXIT_FAILURE;
            continue;
        }
        let line = match client.close_master(&name).await {
            Ok(true) => format!("{name}: master closed"),
            Ok(false) => format!("{name}: no master running"),
            Err(err) => {
                code = EXIT_FAILURE;
                format!("{name}: {err}")
            }
        };
        out.push_str(&format!("{line}\n"));
    }
    common::write_stdout(out.as_bytes())?;
    Ok(code)
}

async fn probe(client: &SshClient, name: &str) -> anyhow::Result<i32> {
    if let Err(text) = known(client, name) {
        common::write_stdout(format!("{text}\n").as_bytes())?;
        return Ok(EXIT_FAILURE);
    }
    client.forget_probe(name);
    let (line, code) = match client.run(&RunRequest::new(name, "true", None, PROBE_BUDGET)).await {
        Ok(out) => (
            format!("{name}: {}/{} ({})", out.info.os, out.info.shell, out.info.source.as_str()),
            EXIT_OK,
        ),
        Err(err) => (format!("{name}: {err}"), EXIT_FAILURE),
    };
    common::write_stdout(format!("{line}\n").as_bytes())?;
    Ok(code)
}

/// The unknown-host text of the ssh tool when `name` is not configured.
fn known(client: &SshClient, name: &str) -> Result<(), String> {
    let config = client.config();
    if config.hosts.contains_key(name) {
        return Ok(());
    }
    let configured: Vec<String> = config.hosts.keys().cloned().collect();
    Err(execkit_ssh::SshError::UnknownHost { name: name.to_string(), configured }.to_string())
}
