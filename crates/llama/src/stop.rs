//! Stop strings over streamed text: text that might be the start of a stop string is
//! held back until it is known not to be, and a matched stop string is never emitted.

/// Watches generated text for stop strings.
#[derive(Debug)]
pub(crate) struct StopMatcher {
    stops: Vec<String>,
    held: String,
}

/// What the matcher lets through after new text arrives.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StopScan {
    /// Text that can be emitted; generation goes on.
    Continue(String),
    /// Text before the stop string, and the stop string that matched; generation ends.
    Stopped(String, String),
}

impl StopMatcher {
    pub(crate) fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
        }
    }

    /// Adds newly generated text.
    pub(crate) fn push(&mut self, text: &str) -> StopScan {
        self.held.push_str(text);
        let earliest = self
            .stops
            .iter()
            .filter_map(|stop| self.held.find(stop.as_str()).map(|at| (at, stop)))
            .min_by_key(|(at, _)| *at);
        if let Some((at, stop)) = earliest {
            let stop = stop.clone();
            let before = self.held[..at].to_string();
            self.held.clear();
            return StopScan::Stopped(before, stop);
        }
        let keep_from = self
            .held
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &self.held[i..];
                self.stops.iter().any(|stop| stop.starts_with(tail))
            })
            .unwrap_or(self.held.len());
        let emit = self.held[..keep_from].to_string();
        self.held.drain(..keep_from);
        StopScan::Continue(emit)
    }

    /// Releases held text when generation ends for another reason.
    pub(crate) fn flush(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(stops: &[&str]) -> StopMatcher {
        StopMatcher::new(&stops.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn holds_back_a_possible_prefix_and_drops_the_stop() {
        let mut m = matcher(&["</end>"]);
        assert_eq!(m.push("hello </"), StopScan::Continue("hello ".into()));
        assert_eq!(m.push("en"), StopScan::Continue(String::new()));
        assert_eq!(
            m.push("d> tail"),
            StopScan::Stopped(String::new(), "</end>".into())
        );
    }

    #[test]
    fn releases_a_false_alarm() {
        let mut m = matcher(&["STOP"]);
        assert_eq!(m.push("ST"), StopScan::Continue(String::new()));
        assert_eq!(m.push("AR"), StopScan::Continue("STAR".into()));
        assert_eq!(m.push("S"), StopScan::Continue(String::new()));
        assert_eq!(m.flush(), "S");
    }

    #[test]
    fn earliest_stop_wins_and_text_before_is_kept() {
        let mut m = matcher(&["b", "a"]);
        assert_eq!(m.push("xxab"), StopScan::Stopped("xx".into(), "a".into()));
    }

    #[test]
    fn without_stops_everything_passes() {
        let mut m = matcher(&[]);
        assert_eq!(m.push("é all"), StopScan::Continue("é all".into()));
    }
}
