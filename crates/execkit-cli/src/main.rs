//! The `execkit` binary: the MCP server (`execkit mcp`) and the CLI subcommands.
//!
//! Every subcommand builds one [`execkit::Toolkit`] and goes through it, so the CLI, the MCP
//! server and the library give the same results. The binary makes itself a child subreaper
//! (spec-output O36), so double-forked orphans stay findable and are killed on close.
//!
//! Exit status, for every subcommand: 0 on success, 1 when the tool reported an error or what
//! was asked for was not found, 2 on a usage error. `execkit bash` passes the command's own exit
//! code through (see its `--help`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod artifact;
mod bash;
mod call;
mod common;
mod completions;
mod doctor;
mod eval;
mod live;
mod log;
mod mcp;
mod sandbox_args;
mod ssh;
mod tools;
mod tty_approve;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "execkit",
    version,
    about = "Execution toolkit for AI agents: bash, Python cells, background jobs and artifacts, over MCP or the CLI",
    long_about = "Execution toolkit for AI agents.\n\n\
        `execkit mcp` serves the tools to an agent harness over MCP on stdio. The other \
        subcommands run the same tools from a shell.\n\n\
        Exit status: 0 on success, 1 when the tool reported an error (isError) or the thing \
        asked for was not found, 2 on a usage error.",
    propagate_version = true
)]
struct Cli {
    /// Base working directory for tool calls (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    cwd: Option<PathBuf>,

    #[command(flatten)]
    sandbox: sandbox_args::SandboxArgs,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the tools over MCP on stdin/stdout (what an agent harness starts).
    #[command(long_about = "Serve the tools over MCP on stdin/stdout.\n\n\
        tools/list and tools/call serve every execkit tool; resources/list and resources/read \
        serve the artifacts (artifact://<id>[?lines=a-b|head=n|tail=n|grep=RE&context=n&max=n]). \
        Progress notifications go out when a request carries a progress token; a cancelled \
        request kills what it started and gets no response.\n\n\
        The server closes (killing every process it started) on stdin EOF, SIGTERM, SIGINT and \
        SIGHUP. stdout carries only the protocol; diagnostics go to stderr.")]
    Mcp,
    /// Run one tool call and print its result as JSON.
    Call(call::CallArgs),
    /// Run a bash command and print its output.
    Bash(bash::BashArgs),
    /// Run Python cells and print their output.
    Eval(eval::EvalArgs),
    /// Print the tool list with JSON schemas.
    Tools(tools::ToolsArgs),
    /// Read, list or collect the stored artifacts (full outputs, `artifact://<id>`).
    Artifact(artifact::ArtifactArgs),
    /// Show what this machine offers and why anything is missing.
    Doctor,
    /// Stop ssh master connections, or probe a host's OS and shell again.
    Ssh(ssh::SshArgs),
    /// Print the audit log: one line per tool call, approvals and refusals included.
    Log(log::LogArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
}

fn main() {
    // Before any thread exists: children must not read credentials back from our environment.
    if let Err(err) = execkit::Toolkit::protect_process_environment() {
        eprintln!("execkit: warning: {err}");
    }
    let cli = Cli::parse();
    std::process::exit(run(cli));
}

/// How long runtime shutdown may wait for stray blocking tasks. A blocking read on a terminal
/// stdin cannot be interrupted (tokio's stdin runs on the blocking pool), and must not keep the
/// process alive after the Toolkit has closed.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(1);

/// Runs the parsed command line and returns the process exit status.
fn run(cli: Cli) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("execkit: failed to start the async runtime: {err}");
            return common::EXIT_FAILURE;
        }
    };
    let code = runtime.block_on(dispatch(cli));
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    code
}

async fn dispatch(cli: Cli) -> i32 {
    sandbox_args::set(cli.sandbox);
    let cwd = cli.cwd.as_deref();
    let result = match cli.command {
        Command::Mcp => mcp::run(cwd).await,
        Command::Call(args) => call::run(cwd, args).await,
        Command::Bash(args) => bash::run(cwd, args).await,
        Command::Eval(args) => eval::run(cwd, args).await,
        Command::Tools(args) => tools::run(cwd, args).await,
        Command::Artifact(args) => artifact::run(cwd, args).await,
        Command::Doctor => doctor::run(cwd).await,
        Command::Ssh(args) => ssh::run(cwd, args).await,
        Command::Log(args) => log::run(args),
        Command::Completions(args) => completions::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if let Some(usage) = err.downcast_ref::<common::UsageError>() {
                eprintln!("execkit: {usage}");
                common::EXIT_USAGE
            } else {
                eprintln!("execkit: {err:#}");
                common::EXIT_FAILURE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Command};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("execkit").chain(args.iter().copied()))
    }

    fn bash(args: &[&str]) -> crate::bash::BashArgs {
        match parse(args).map(|cli| cli.command) {
            Ok(Command::Bash(args)) => args,
            other => panic!("expected bash args, got {other:?}"),
        }
    }

    #[test]
    fn bash_options_before_and_after_the_command() {
        let before = bash(&["bash", "--timeout", "5", "--pty", "ls", "/tmp"]);
        let after = bash(&["bash", "ls", "/tmp", "--timeout", "5", "--pty"]);
        for args in [before, after] {
            assert_eq!(args.command, ["ls", "/tmp"]);
            assert_eq!(args.timeout, Some(5.0));
            assert!(args.pty);
            assert!(!args.background);
        }
    }

    #[test]
    fn bash_words_starting_with_a_hyphen_go_after_double_dash() {
        let args = bash(&["bash", "--async", "--", "ls", "-la", "--timeout"]);
        assert_eq!(args.command, ["ls", "-la", "--timeout"]);
        assert!(args.background);
        let err = parse(&["bash", "ls", "-la"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
    }

    #[test]
    fn usage_errors_exit_with_status_2() {
        for args in [
            &["call", "bash"][..],
            &["bash"],
            &["tools", "--format", "xml"],
            &["artifact"],
            &["artifact", "3f9a0c12", "--head", "5", "--tail", "5"],
            &["artifact", "3f9a0c12", "--raw", "--lines", "1-5"],
            &["artifact", "3f9a0c12", "-C", "3"],
            &["artifact", "3f9a0c12", "--grep", "x", "-C", "21"],
            &["artifact", "--list", "3f9a0c12"],
        ] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn completions_take_a_known_shell() {
        assert!(parse(&["completions", "bash"]).is_ok());
        let err = parse(&["completions", "tcsh"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn sandbox_flags_go_before_or_after_the_subcommand() {
        let cli = parse(&["mcp", "--sandbox", "workspace-write", "--network", "off"]).unwrap();
        assert_eq!(cli.sandbox.sandbox.as_deref(), Some("workspace-write"));
        let cli = parse(&["doctor", "--writable", "/a", "--writable", "/b", "--deny-read", "/c"])
            .unwrap();
        assert_eq!(cli.sandbox.writable, [std::path::Path::new("/a"), std::path::Path::new("/b")]);
        assert_eq!(cli.sandbox.deny_read, [std::path::Path::new("/c")]);
    }

    #[test]
    fn global_cwd_after_the_subcommand() {
        let cli = parse(&["doctor", "--cwd", "/tmp"]).unwrap();
        assert_eq!(cli.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
    }
}
