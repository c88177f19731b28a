//! The run observer: feeds the sink, sends throttled progress, and drives a tool's watcher.

use std::time::Instant;

use execkit_output::sink::OutputSink;
use execkit_process::run::RunObserver;
use execkit_protocol::{Progress, ProgressFn};
use execkit_tool::ProgressThrottle;

/// What a tool plugs into a run: told about output, and ticked every 100 ms with the sink.
pub trait Watcher: Send {
    fn saw_output(&mut self) {}
    fn tick(&mut self, _sink: &OutputSink) {}
}

/// A tool without a watcher.
impl Watcher for () {}

/// Owns the run's sink; sends a progress event when the output grew (at most every 100 ms)
/// or after 5 s of silence: `running 1.2 s, 3 lines` and the sink's tail.
pub struct Observer<W> {
    pub sink: OutputSink,
    pub watcher: Option<W>,
    progress: Option<ProgressFn>,
    started: Instant,
    deadline_ms: Option<u64>,
    throttle: ProgressThrottle,
}

impl<W: Watcher> Observer<W> {
    /// `timeout_s` becomes the events' `total`.
    pub fn new(sink: OutputSink, progress: Option<ProgressFn>, timeout_s: Option<u64>) -> Self {
        let now = Instant::now();
        Observer {
            sink,
            watcher: None,
            progress,
            started: now,
            deadline_ms: timeout_s.map(|s| s * 1000),
            throttle: ProgressThrottle::default(),
        }
    }

    /// Where progress goes from now on (a job's tail once a call moves to the background).
    pub fn set_progress(&mut self, progress: Option<ProgressFn>) {
        self.progress = progress;
    }

    fn send(&mut self) {
        let Some(progress) = &self.progress else { return };
        let elapsed = self.started.elapsed();
        let lines = self.sink.total_lines();
        let tail = self.sink.snapshot();
        let message = format!("running {:.1} s, {lines} lines\n{tail}", elapsed.as_secs_f64());
        progress(Progress {
            progress: elapsed.as_millis() as f64,
            total: self.deadline_ms.map(|ms| ms as f64),
            message,
            elapsed_ms: elapsed.as_millis() as u64,
            total_bytes: self.sink.total_bytes(),
            total_lines: lines,
            tail,
        });
        self.throttle.sent(self.sink.total_bytes());
    }

    fn maybe_send(&mut self) {
        if self.progress.is_none() {
            return;
        }
        if self.throttle.due(self.sink.total_bytes()) {
            self.send();
        }
    }
}

impl<W: Watcher> RunObserver for Observer<W> {
    fn output(&mut self, chunk: &[u8]) {
        self.sink.push(chunk);
        if let Some(watcher) = &mut self.watcher {
            watcher.saw_output();
        }
        self.maybe_send();
    }

    fn tick(&mut self) {
        if let Some(watcher) = &mut self.watcher {
            watcher.tick(&self.sink);
        }
        self.maybe_send();
    }
}
