//! Running one command over a route, with the retries that are safe: a refused session,
//! and a mux failure before the session opened.

use std::time::{Duration, Instant};

use crate::client::SshClient;
use crate::collect::Collector;
use crate::config::HostEntry;
use crate::error::SshError;
use crate::local::Local;
use crate::master::Route;
use crate::session::{self, NativeFailure, SessionEnd};
use crate::until::Until;
use crate::{MuxClient, wrap};

/// Waits between attempts when the server refuses a session (see `Exec::execute`): about
/// 0.4 s in all, far longer than a channel close takes on loopback, far shorter than a
/// session that really holds the slot.
const REFUSED_RETRY_PAUSES: [Duration; 4] = [
    Duration::from_millis(20),
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(250),
];
/// A timed-out command's kill session gets this long.
pub const KILL_BUDGET: Duration = Duration::from_secs(5);

/// Everything one execution on one host needs.
pub(crate) struct Exec<'a> {
    pub client: &'a SshClient,
    pub local: &'a Local,
    pub entry: &'a HostEntry,
    pub jump: Option<&'a HostEntry>,
}

impl Exec<'_> {
    /// Runs `command` over `route`, retrying a refused session a few times within the
    /// deadline. sshd frees a session slot only after the channel has closed, which comes a
    /// little after the exit status that released our channel permit; so a session opened
    /// right after another one of ours ended can be refused although the client is within
    /// `max_sessions`. A refused session ran nothing, so retrying it is safe; a refusal that
    /// persists (the server's limit is lower than `max_sessions`, or another process shares
    /// the master) is reported.
    pub(crate) async fn execute(
        &self,
        route: Route,
        command: &str,
        until: &Until,
        out: &mut Collector,
    ) -> Result<(SessionEnd, Route), SshError> {
        let mut pauses = REFUSED_RETRY_PAUSES.iter();
        loop {
            match self.execute_once(route.clone(), command, until, out).await {
                Err(SshError::SessionRefused { name }) => {
                    let pause = pauses.next().filter(|p| Instant::now() + **p < until.deadline);
                    let Some(pause) = pause else {
                        return Err(SshError::SessionRefused { name });
                    };
                    out.clear();
                    if let Err(stop) = until.race(tokio::time::sleep(*pause)).await {
                        return Ok((stop.into(), route));
                    }
                }
                other => return other,
            }
        }
    }

    /// One attempt. A native failure before the session opened is retried once after a
    /// fresh check; one after it opened is never retried (the command may have run).
    /// Returns the route actually used.
    async fn execute_once(
        &self,
        route: Route,
        command: &str,
        until: &Until,
        out: &mut Collector,
    ) -> Result<(SessionEnd, Route), SshError> {
        let name = &self.entry.name;
        let Route::Mux { socket, .. } = &route else {
            let end =
                session::direct(self.local, self.entry, self.jump, command, until, out).await?;
            return Ok((end, route));
        };
        if self.client.inner.options.mux == MuxClient::Process {
            return self.process_mux(route.clone(), command, until, out).await;
        }
        match session::native(name, socket, command, until, out).await {
            Ok(end) => Ok((end, route)),
            Err(NativeFailure::Fatal(err)) => Err(err),
            Err(NativeFailure::Protocol) => {
                self.process_mux(route.clone(), command, until, out).await
            }
            Err(NativeFailure::BeforeOpen(_)) => {
                self.client.forget_master(self.entry).await;
                let reached = self.client.reach(self.entry, self.jump, until.deadline).await?;
                let retry = reached.route;
                match &retry {
                    Route::Mux { socket, .. } => {
                        match session::native(name, socket, command, until, out).await {
                            Ok(end) => Ok((end, retry)),
                            Err(NativeFailure::Fatal(err)) => Err(err),
                            Err(NativeFailure::Protocol) => {
                                self.process_mux(retry.clone(), command, until, out).await
                            }
                            Err(NativeFailure::BeforeOpen(why)) => Err(SshError::Local(format!(
                                "cannot open a session on the master for {name}: {why}"
                            ))),
                        }
                    }
                    Route::Direct { .. } => {
                        let end =
                            session::direct(self.local, self.entry, self.jump, command, until, out)
                                .await?;
                        Ok((end, retry))
                    }
                }
            }
        }
    }

    /// Process-mux on `route`. When the client could not reach the socket at all (so no
    /// session opened), the master is checked again and the command retried once.
    async fn process_mux(
        &self,
        route: Route,
        command: &str,
        until: &Until,
        out: &mut Collector,
    ) -> Result<(SessionEnd, Route), SshError> {
        let end = self.process_mux_once(&route, command, until, out).await;
        if !matches!(end, Err(SshError::Lost { .. })) || !out.contains(b"Control socket connect(") {
            return end.map(|end| (end, route));
        }
        out.clear();
        self.client.forget_master(self.entry).await;
        let retry = self.client.reach(self.entry, self.jump, until.deadline).await?.route;
        if let Route::Direct { .. } = retry {
            let end =
                session::direct(self.local, self.entry, self.jump, command, until, out).await?;
            return Ok((end, retry));
        }
        let end = self.process_mux_once(&retry, command, until, out).await?;
        Ok((end, retry))
    }

    async fn process_mux_once(
        &self,
        route: &Route,
        command: &str,
        until: &Until,
        out: &mut Collector,
    ) -> Result<SessionEnd, SshError> {
        let Route::Mux { socket, .. } = route else {
            return Err(SshError::Local("process-mux needs a master socket".into()));
        };
        let name = &self.entry.name;
        let end = session::process_mux(self.local, name, socket, command, until, out).await;
        let failed = matches!(end, Ok(SessionEnd::Exited(255)) | Err(SshError::Lost { .. }));
        if failed && out.contains(b"refused by peer") {
            return Err(SshError::SessionRefused { name: name.clone() });
        }
        end
    }

    /// Sends the kill over a second session; true when it ran.
    pub(crate) async fn kill_remote(
        &self,
        route: &Route,
        wrapper: wrap::Wrapper,
        pid: u32,
    ) -> bool {
        let mut sink = Collector::new(4096, false);
        let until = Until::deadline(Instant::now() + KILL_BUDGET);
        let end =
            self.execute(route.clone(), &wrap::kill_for(wrapper, pid), &until, &mut sink).await;
        matches!(end, Ok((SessionEnd::Exited(0), _)))
    }
}

impl SshClient {
    /// Drops the "verified" mark so the next reach checks the socket again.
    async fn forget_master(&self, entry: &HostEntry) {
        *self.host_state(entry).verified.lock().await = None;
    }
}
