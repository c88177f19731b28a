//! `execkit mcp`: the MCP server on stdio.
//!
//! The handler ([`server::ExecServer`]) maps MCP requests onto the Toolkit. This module owns
//! the process lifetime: it serves until stdin ends or SIGTERM, SIGINT or SIGHUP arrives, then
//! closes the Toolkit, which kills every process tree and job it started (O41).
//!
//! stdin EOF is watched at the byte stream ([`EofSignal`]) rather than through the service
//! loop: on EOF the SDK keeps serving in-flight requests for up to 5 s, while a client that
//! closed our stdin waits only a short grace before it kills us, and processes in their own
//! sessions would not die with us. Closing at once makes their end deterministic.

mod resources;
mod server;

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use anyhow::Context as _;
use rmcp::ServiceExt as _;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::run::{self, EXIT_OK, ShutdownSignals};

pub async fn run(cwd: Option<&Path>) -> anyhow::Result<i32> {
    let mut signals = ShutdownSignals::install()?;
    let toolkit = run::toolkit(cwd)?;
    let eof = CancellationToken::new();
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let stdin = EofSignal { inner: stdin, eof: eof.clone() };
    let handler = server::ExecServer::new(toolkit.clone());
    let serve = async move {
        let service =
            handler.serve((stdin, stdout)).await.context("MCP session failed to start")?;
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

/// The server's stdin; cancels `eof` when the stream ends or fails.
struct EofSignal<R> {
    inner: R,
    eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let had_room = buf.remaining() > 0;
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(result) = &poll
            && (result.is_err() || (had_room && buf.filled().len() == before))
        {
            self.eof.cancel();
        }
        poll
    }
}
