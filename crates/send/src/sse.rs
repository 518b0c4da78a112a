//! An incremental parser for server-sent events (the `text/event-stream` format all three
//! providers stream in).
//!
//! Bytes go in as they arrive, in chunks of any size cut anywhere; complete events come out.
//! Lines end in `\n`, `\r\n` or `\r` (a `\r` at the end of one chunk and a `\n` at the start of
//! the next are one line end). Lines are split on bytes and decoded once complete, so a UTF-8
//! character cut between chunks comes out whole; invalid UTF-8 becomes U+FFFD. A line starting
//! with `:` is a comment; `data:` lines of one event are joined with `\n`; `event:` names the
//! event; `id:` is kept; other fields are ignored; a blank line ends the event. An event still
//! open when the stream ends is dropped, as the format says (it may be cut short).
//!
//! Caps, against hostile or broken servers:
//!
//! - one event (its data, and any single line) may be at most [`MAX_EVENT_BYTES`] = 1 MiB;
//! - the whole stream may be at most [`MAX_STREAM_BYTES`] = 16 MiB.
//!
//! Past either, [`SseParser::feed`] returns an error and the reply is abandoned. Real replies are
//! far below both: a streamed event carries a few words, a long reply is a few hundred KB.

/// Largest event (and line) accepted: 1 MiB.
pub const MAX_EVENT_BYTES: usize = 1 << 20;
/// Largest stream accepted: 16 MiB. The sender applies the same cap to a reply that is not
/// streamed.
pub const MAX_STREAM_BYTES: usize = 16 << 20;

/// One complete event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` name, when one was given (readers treat none as `message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` seen, when any.
    pub id: Option<String>,
}

/// What went over a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    EventTooLarge,
    StreamTooLarge,
}

impl SseError {
    /// Which cap, in words, and its value.
    pub fn describe(self) -> (&'static str, usize) {
        match self {
            SseError::EventTooLarge => ("one event", MAX_EVENT_BYTES),
            SseError::StreamTooLarge => ("the whole reply", MAX_STREAM_BYTES),
        }
    }
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The bytes of the line being read.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting this one belongs to that line end.
    after_cr: bool,
    /// The first line has not begun yet (a byte order mark there is skipped).
    at_start: bool,
    event: Option<String>,
    data: String,
    /// Whether any `data:` line came in the current event.
    has_data: bool,
    id: Option<String>,
    total: usize,
}

impl SseParser {
    pub fn new() -> Self {
        SseParser {
            at_start: true,
            ..SseParser::default()
        }
    }

    /// Total bytes fed so far.
    pub fn bytes_seen(&self) -> usize {
        self.total
    }

    /// Whether part of an event (or of a line) is waiting for more bytes.
    pub fn has_pending(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    /// Feeds one chunk; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        self.total = self.total.saturating_add(chunk.len());
        if self.total > MAX_STREAM_BYTES {
            return Err(SseError::StreamTooLarge);
        }
        let mut rest = chunk;
        // An empty chunk says nothing about whether a `\n` follows the `\r`.
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while !rest.is_empty() {
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.push_line_bytes(rest)?;
                    break;
                }
                Some(at) => {
                    self.push_line_bytes(&rest[..at])?;
                    let cr = rest[at] == b'\r';
                    rest = &rest[at + 1..];
                    if cr {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    self.end_line(&mut out)?;
                }
            }
        }
        Ok(out)
    }

    fn push_line_bytes(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > MAX_EVENT_BYTES {
            return Err(SseError::EventTooLarge);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut bytes = std::mem::take(&mut self.line);
        if self.at_start {
            self.at_start = false;
            if bytes.starts_with("\u{feff}".as_bytes()) {
                bytes.drain(..3);
            }
        }
        let line = String::from_utf8_lossy(&bytes);
        if line.is_empty() {
            self.dispatch(out);
        } else if !line.starts_with(':') {
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (&*line, ""),
            };
            match field {
                "data" => {
                    if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                        return Err(SseError::EventTooLarge);
                    }
                    self.data.push_str(value);
                    self.data.push('\n');
                    self.has_data = true;
                }
                "event" => self.event = Some(value.to_string()),
                "id" if !value.contains('\0') => self.id = Some(value.to_string()),
                _ => {}
            }
        }
        // Keep the line buffer's allocation for the next line.
        bytes.clear();
        self.line = bytes;
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        out.push(SseEvent {
            event,
            data,
            id: self.id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c).unwrap_or_default());
        }
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn fields_comments_and_line_ends() {
        let stream =
            b"\xEF\xBB\xBF: comment\r\nevent: delta\r\ndata: a\r\ndata:b\r\n\r\ndata: c\rdata: d\r\rid: 7\ndata\n\n";
        let events = parse_all(&[stream]);
        assert_eq!(data(&events), ["a\nb", "c\nd", ""]);
        assert_eq!(events[0].event.as_deref(), Some("delta"));
        assert_eq!(events[1].event, None);
        assert_eq!(events[2].id.as_deref(), Some("7"));
    }

    #[test]
    fn blank_lines_without_data_give_nothing_and_reset_the_name() {
        let events = parse_all(&[b"event: x\n\n\n\ndata: y\n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, None);
    }

    #[test]
    fn split_crlf_and_utf8() {
        let text = "data: h\u{e9}\u{1F600}\r\n\r\n".as_bytes();
        // Cut inside the emoji and between \r and \n.
        let events = parse_all(&[
            &text[..10],
            &text[10..text.len() - 3],
            &text[text.len() - 3..],
        ]);
        assert_eq!(data(&events), ["h\u{e9}\u{1F600}"]);
        let events = parse_all(&[b"data: a\r", b"", b"\ndata: b\r", b"\n\r", b"", b"\n"]);
        assert_eq!(data(&events), ["a\nb"]);
    }

    #[test]
    fn an_open_event_at_the_end_is_dropped() {
        let mut p = SseParser::new();
        let events = p.feed(b"data: done\n\ndata: cut").unwrap_or_default();
        assert_eq!(data(&events), ["done"]);
        assert!(p.has_pending());
    }

    #[test]
    fn caps() {
        let mut p = SseParser::new();
        let big = vec![b'x'; MAX_EVENT_BYTES + 1];
        assert_eq!(p.feed(&big), Err(SseError::EventTooLarge));

        // Many short data lines add up to one large event.
        let mut p = SseParser::new();
        let line = format!("data: {}\n", "y".repeat(1000));
        let mut result = Ok(Vec::new());
        for _ in 0..1100 {
            result = p.feed(line.as_bytes());
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SseError::EventTooLarge));

        // Many small events add up to a large stream.
        let mut p = SseParser::new();
        let event = format!("data: {}\n\n", "z".repeat(64 * 1024));
        let mut result = Ok(Vec::new());
        for _ in 0..300 {
            result = p.feed(event.as_bytes());
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SseError::StreamTooLarge));
    }

    fn sample_stream() -> impl Strategy<Value = Vec<u8>> {
        let line_end = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
        let field = prop_oneof![
            "[a-z é😀\\[\\]{}\":,]{0,12}".prop_map(|v| format!("data: {v}")),
            "[a-z_]{1,8}".prop_map(|v| format!("event: {v}")),
            "[a-z ]{0,8}".prop_map(|v| format!(": {v}")),
            Just(String::new()),
            Just("data".to_string()),
        ];
        proptest::collection::vec((field, line_end), 0..40).prop_map(|lines| {
            lines
                .into_iter()
                .flat_map(|(l, e)| format!("{l}{e}").into_bytes())
                .collect()
        })
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_events(
            stream in sample_stream(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let whole = parse_all(&[&stream]);
            let mut points: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
            points.push(0);
            points.push(stream.len());
            points.sort_unstable();
            let chunks: Vec<&[u8]> = points.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
            prop_assert_eq!(&parse_all(&chunks), &whole);
            let bytes: Vec<&[u8]> = stream.chunks(1).collect();
            prop_assert_eq!(&parse_all(&bytes), &whole);
        }
    }
}
