//! Where a run's events go: any number of sinks (a trace file, the CLI's progress
//! line, the eval runner), each told every event in order.

use crate::event::RunEvent;

/// Receives a run's events as they happen.
pub trait EventSink: Send {
    /// One event.
    fn emit(&mut self, event: &RunEvent);

    /// The file that records the run, if this sink writes one (a trace).
    fn record_path(&self) -> Option<String> {
        None
    }
}

impl<F: FnMut(&RunEvent) + Send> EventSink for F {
    fn emit(&mut self, event: &RunEvent) {
        self(event);
    }
}

/// A sink that keeps nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSink;

impl EventSink for NoSink {
    fn emit(&mut self, _event: &RunEvent) {}
}

/// Every event to each of several sinks, in order.
#[derive(Default)]
pub struct Sinks<'a> {
    sinks: Vec<&'a mut dyn EventSink>,
}

impl std::fmt::Debug for Sinks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sinks")
            .field("count", &self.sinks.len())
            .finish()
    }
}

impl<'a> Sinks<'a> {
    /// No sinks yet.
    pub fn new() -> Self {
        Self { sinks: Vec::new() }
    }

    /// Adds a sink.
    pub fn with(mut self, sink: &'a mut dyn EventSink) -> Self {
        self.sinks.push(sink);
        self
    }
}

impl EventSink for Sinks<'_> {
    fn emit(&mut self, event: &RunEvent) {
        for sink in &mut self.sinks {
            sink.emit(event);
        }
    }

    fn record_path(&self) -> Option<String> {
        self.sinks.iter().find_map(|s| s.record_path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sink_sees_every_event_in_order() {
        let mut first = Vec::new();
        let mut second = 0usize;
        {
            let mut a = |e: &RunEvent| first.push(e.clone());
            let mut b = |_: &RunEvent| second += 1;
            let mut sinks = Sinks::new().with(&mut a).with(&mut b);
            for turn in 1..=3 {
                sinks.emit(&RunEvent::FormatRepaired {
                    turn,
                    detail: "x".into(),
                });
            }
        }
        assert_eq!(second, 3);
        let turns: Vec<u32> = first
            .iter()
            .map(|e| match e {
                RunEvent::FormatRepaired { turn, .. } => *turn,
                _ => 0,
            })
            .collect();
        assert_eq!(turns, vec![1, 2, 3]);
    }
}
