//! When a long call sends its next progress event.

use std::time::{Duration, Instant};

/// Events go out at most this often, and only when the output grew.
const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// A heartbeat after this much silence, so a client knows the call is alive.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// Every tool's progress throttle: an event is due when the output grew and at least 100 ms
/// passed since the last one, or after 5 s without one.
#[derive(Debug, Clone)]
pub struct ProgressThrottle {
    last_sent: Instant,
    sent_bytes: u64,
}

impl Default for ProgressThrottle {
    fn default() -> Self {
        ProgressThrottle { last_sent: Instant::now(), sent_bytes: 0 }
    }
}

impl ProgressThrottle {
    /// Whether an event is due now, with `total_bytes` of output so far.
    pub fn due(&self, total_bytes: u64) -> bool {
        let since = self.last_sent.elapsed();
        (total_bytes != self.sent_bytes && since >= MIN_INTERVAL) || since >= HEARTBEAT
    }

    /// Records that an event went out with `total_bytes` of output.
    pub fn sent(&mut self, total_bytes: u64) {
        self.last_sent = Instant::now();
        self.sent_bytes = total_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_only_after_growth_and_the_interval() {
        let mut throttle = ProgressThrottle::default();
        assert!(!throttle.due(10), "too soon after the start");
        throttle.last_sent -= MIN_INTERVAL;
        assert!(throttle.due(10));
        assert!(!throttle.due(0), "no growth, no heartbeat yet");
        throttle.sent(10);
        assert!(!throttle.due(20));
        throttle.last_sent -= HEARTBEAT;
        assert!(throttle.due(10), "the heartbeat");
    }
}
