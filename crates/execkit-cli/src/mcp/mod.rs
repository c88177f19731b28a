//! `execkit mcp`: the MCP server on stdio.
//!
//! The handler ([`server::ExecServer`]) maps MCP requests onto the Toolkit. This module owns
//! the process lifetime: it serves until stdin ends or SIGTERM, SIGINT or SIGHUP arrives, then
//! closes the Toolkit, which kills every process tree and job it started (O41).
//!
//! stdin goes through our own transport ([`transport::StdioTransport`]): it answers lines that
//! are not servable JSON-RPC itself (parse errors, oversized lines, bad params, duplicate ids)
//! and watches for stdin EOF. EOF is watched at the byte stream rather than through the service
//! loop: on EOF the SDK keeps serving in-flight requests for up to 5 s, while a client that
//! closed our stdin waits only a short grace before it kills us, and processes in their own
//! sessions would not die with us. Closing at once makes their end deterministic.

mod classify;
mod elicit;
mod frame;
mod owned;
mod resources;
mod scan;
mod server;
mod transport;

use std::path::Path;

use anyhow::Context as _;
use rmcp::ServiceExt as _;
use tokio_util::sync::CancellationToken;

use crate::common::{self, EXIT_OK, ShutdownSignals};

pub async fn run(cwd: Option<&Path>) -> anyhow::Result<i32> {
    let mut signals = ShutdownSignals::install()?;
    let toolkit = common::toolkit(cwd)?;
    let eof = CancellationToken::new();
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let transport = transport::StdioTransport::start(stdin, stdout, eof.clone());
    let handler = server::ExecServer::new(toolkit.clone());
    let serve = async move {
        let service = handler.serve(transport).await.context("MCP session failed to start")?;
        service.waiting().await.context("the MCP service task failed")?;
        anyhow::Ok(())
    };
    // Dropping `serve` on EOF or a signal cancels every in-flight request.
    let outcome = tokio::select! {
        result = serve => result.map(|()| EXIT_OK),
        () = eof.cancelled() => Ok(EXIT_OK),
        _signo = signals.recv() => Ok(EXIT_OK),
    };
    toolkit.close().await;
    outcome
}
