//! A text sink that streams a field trimmed at both ends: leading whitespace is
//! dropped, and a run of trailing whitespace is held until non-whitespace follows it
//! (it is dropped when the field ends), so the streamed text concatenates to exactly
//! `full_text.trim()`.

/// Trims one streamed field (content or reasoning).
#[derive(Debug, Default)]
pub(crate) struct TrimSink {
    started: bool,
    held_ws: String,
    all: String,
}

impl TrimSink {
    /// Takes `text`; returns the part that can be emitted now (empty when none).
    pub(crate) fn push(&mut self, text: &str) -> String {
        let text = if self.started {
            text
        } else {
            text.trim_start()
        };
        if text.is_empty() {
            return String::new();
        }
        self.started = true;
        let body = text.trim_end();
        if body.is_empty() {
            self.held_ws.push_str(text);
            return String::new();
        }
        let mut out = std::mem::take(&mut self.held_ws);
        out.push_str(body);
        self.held_ws.push_str(&text[body.len()..]);
        self.all.push_str(&out);
        out
    }

    /// The whole field as emitted (`None` when empty); held whitespace is dropped.
    pub(crate) fn finish(self) -> Option<String> {
        (!self.all.is_empty()).then_some(self.all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_pieces_concatenate_to_the_trimmed_text() {
        let text = "  \n hello  \n world \n\n";
        let mut sink = TrimSink::default();
        let mut out = String::new();
        for c in text.chars() {
            out.push_str(&sink.push(&c.to_string()));
        }
        assert_eq!(out, text.trim());
        assert_eq!(sink.finish().as_deref(), Some(text.trim()));
        assert_eq!(TrimSink::default().finish(), None);
    }
}
