//! An adopted job: following processes a run left behind until they are gone.

use std::time::{Duration, Instant};

use execkit_jobs::{JobEnd, JobSlot, JobState};
use execkit_output::sink::OutputSink;
use execkit_process::run::sleep_until_opt;
use execkit_process::{OutputPipe, ProcessTree};

use crate::text::summary_text;

/// How often an adopted job checks whether its processes are gone.
const ADOPTED_POLL: Duration = Duration::from_millis(250);

/// Processes a run left behind, and what follows them.
pub(crate) struct Adopted {
    pub tree: ProcessTree,
    pub pipe: Option<OutputPipe>,
    pub sink: OutputSink,
    pub slot: JobSlot,
    pub grace: Duration,
    pub deadline: Option<Instant>,
}

/// Follows adopted processes until they are gone, the deadline passes, or the job is cancelled.
pub(crate) async fn follow_adopted(adopted: Adopted) {
    let Adopted { tree, mut pipe, mut sink, slot, grace, deadline } = adopted;
    let cancel = slot.cancel_token();
    let tail = slot.tail_handle();
    let mut buf = vec![0u8; 64 << 10];
    let mut ticker = tokio::time::interval(ADOPTED_POLL);
    let state = loop {
        let read = async {
            match pipe.as_mut() {
                Some(p) => p.read(&mut buf).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = read => match result {
                Ok(0) | Err(_) => pipe = None,
                Ok(n) => sink.push(&buf[..n]),
            },
            _ = ticker.tick() => {
                tail.set(sink.snapshot());
                if pipe.is_none() && tree.members().is_empty() {
                    break JobState::Completed;
                }
            }
            _ = cancel.cancelled() => {
                tree.kill(grace).await;
                break JobState::Cancelled;
            }
            _ = sleep_until_opt(deadline) => {
                tree.kill(grace).await;
                break JobState::TimedOut;
            }
        }
    };
    slot.finish(JobEnd { state, exit_code: None, signal: None, text: end_text(sink, state) });
}

fn end_text(sink: OutputSink, state: JobState) -> String {
    let mut text = summary_text(&sink.finish());
    text.push_str(match state {
        JobState::Cancelled => "\n[Command cancelled]",
        JobState::TimedOut => "\n[The adopted processes were stopped at the call's deadline]",
        _ => "\n[The adopted processes exited]",
    });
    text
}
