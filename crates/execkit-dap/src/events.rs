//! The bounded event queue of one connection.
//!
//! Each event gets an arrival number from the same counter as responses, so a caller can ask
//! for "the first `stopped` that arrived after my request" and find a stop that came early
//! (delve stops before it answers `configurationDone`). The queue never blocks the reader:
//! when full, the oldest `output` event goes first (output is also the flood case), else the
//! oldest event; every drop is counted.

use std::collections::VecDeque;

use crate::wire::{Event, EventKind, KnownEvent};

/// Enough for a chatty startup (debugpy sends ~40 events before the first stop) with room for
/// a burst of output between two calls.
pub const DEFAULT_EVENT_CAPACITY: usize = 4096;

/// One queued event and its arrival number.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    pub arrival: u64,
    pub event: Event,
}

impl EventRecord {
    pub fn name(&self) -> &str {
        self.event.kind.name()
    }

    pub fn known(&self) -> Option<&KnownEvent> {
        match &self.event.kind {
            EventKind::Known(known) => Some(known),
            EventKind::Other { .. } => None,
        }
    }

    /// `stopped`, `exited` or `terminated`: what ends a wait for the program to stop.
    pub fn is_stop_or_end(&self) -> bool {
        matches!(
            self.known(),
            Some(KnownEvent::Stopped(_) | KnownEvent::Exited(_) | KnownEvent::Terminated(_))
        )
    }
}

#[derive(Debug)]
pub(crate) struct EventQueue {
    items: VecDeque<EventRecord>,
    capacity: usize,
    pub(crate) dropped: u64,
}

impl EventQueue {
    pub(crate) fn new(capacity: usize) -> EventQueue {
        EventQueue { items: VecDeque::new(), capacity: capacity.max(1), dropped: 0 }
    }

    pub(crate) fn push(&mut self, record: EventRecord) {
        if self.items.len() >= self.capacity {
            let is_output = |r: &EventRecord| matches!(r.known(), Some(KnownEvent::Output(_)));
            let victim = self.items.iter().position(is_output).unwrap_or(0);
            self.items.remove(victim);
            self.dropped += 1;
        }
        self.items.push_back(record);
    }

    /// Removes and returns the first event matching `pred`.
    pub(crate) fn take_first(
        &mut self,
        pred: &dyn Fn(&EventRecord) -> bool,
    ) -> Option<EventRecord> {
        let at = self.items.iter().position(pred)?;
        self.items.remove(at)
    }

    pub(crate) fn drain(&mut self) -> Vec<EventRecord> {
        self.items.drain(..).collect()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::OutputBody;

    fn record(arrival: u64, kind: KnownEvent) -> EventRecord {
        EventRecord { arrival, event: Event { seq: arrival as i64, kind: EventKind::Known(kind) } }
    }

    #[test]
    fn overflow_drops_output_before_stops() {
        let mut queue = EventQueue::new(2);
        queue.push(record(1, KnownEvent::Stopped(Default::default())));
        queue.push(record(2, KnownEvent::Output(OutputBody::default())));
        queue.push(record(3, KnownEvent::Initialized));
        assert_eq!(queue.dropped, 1);
        let names: Vec<_> = queue.drain().iter().map(|r| r.name().to_string()).collect();
        assert_eq!(names, ["stopped", "initialized"]);
    }

    #[test]
    fn take_first_leaves_the_rest() {
        let mut queue = EventQueue::new(8);
        queue.push(record(1, KnownEvent::Initialized));
        queue.push(record(2, KnownEvent::Stopped(Default::default())));
        let stop = queue.take_first(&|r| r.is_stop_or_end());
        assert_eq!(stop.map(|r| r.arrival), Some(2));
        assert_eq!(queue.len(), 1);
    }
}
