//! The run observer: feeds the sink and sends progress events (B36).

use std::time::{Duration, Instant};

use execkit_output::sink::OutputSink;
use execkit_process::run::RunObserver;
use execkit_protocol::{Progress, ProgressFn};

use crate::input_wait::{Detector, last_line};

/// Events go out at most this often, and only when the output grew.
const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// A heartbeat after this much silence, so a client knows the call is alive.
const HEARTBEAT: Duration = Duration::from_secs(5);

pub(crate) struct Observer {
    pub sink: OutputSink,
    /// Set for PTY runs: watches for a command blocked on terminal input.
    pub detector: Option<Detector>,
    progress: Option<ProgressFn>,
    started: Instant,
    deadline_ms: Option<u64>,
    last_sent: Instant,
    sent_bytes: u64,
}

impl Observer {
    pub fn new(sink: OutputSink, progress: Option<ProgressFn>, timeout_s: Option<u64>) -> Self {
        let now = Instant::now();
        Observer {
            sink,
            detector: None,
            progress,
            started: now,
            deadline_ms: timeout_s.map(|s| s * 1000),
            last_sent: now,
            sent_bytes: 0,
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
        self.last_sent = Instant::now();
        self.sent_bytes = self.sink.total_bytes();
    }

    fn maybe_send(&mut self) {
        if self.progress.is_none() {
            return;
        }
        let since = self.last_sent.elapsed();
        let grew = self.sink.total_bytes() != self.sent_bytes;
        if (grew && since >= MIN_INTERVAL) || since >= HEARTBEAT {
            self.send();
        }
    }
}

impl RunObserver for Observer {
    fn output(&mut self, chunk: &[u8]) {
        self.sink.push(chunk);
        if let Some(detector) = &mut self.detector {
            detector.saw_output();
        }
        self.maybe_send();
    }

    fn tick(&mut self) {
        if let Some(detector) = &mut self.detector {
            let sink = &self.sink;
            detector.tick(|| last_line(&sink.snapshot()));
        }
        self.maybe_send();
    }
}
