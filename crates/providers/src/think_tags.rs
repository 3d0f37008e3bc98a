//! Reasoning written into the answer's text: DeepSeek-R1, Qwen3, GLM and
//! other open-weight models served by OpenAI-compatible hosts (Groq's
//! `reasoning_format: raw`, Together, Hugging Face, vLLM without a
//! reasoning parser...) begin their answer with `<think>…</think>`. Read
//! here into thinking and text, whole or delta by delta (a tag may be cut
//! anywhere between two deltas), and written back the way those hosts'
//! own clients send it ([`write`]).
//!
//! Only a tag at the start of the answer (after blank space) opens
//! thinking: `<think>` later in a text is the text's.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// A piece of an answer, once told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Reasoning (between the tags).
    Thinking(String),
    /// The answer's text.
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Nothing but blank space yet: a tag may still open.
    #[default]
    Start,
    /// Inside the tags.
    Inside,
    /// After `</think>`: blank space before the answer is dropped.
    Closed,
    /// The answer's text (no tags, or after them).
    Text,
}

/// Splits an answer's text, delta by delta.
#[derive(Debug, Clone, Default)]
pub struct Splitter {
    state: State,
    /// What cannot be told yet: a possible opening tag, or the end of
    /// the thinking (a possible closing tag, blank space before it).
    held: String,
    /// Whether any thinking was given out (its leading blank space is
    /// dropped).
    thought: bool,
    /// Whether the answer opened with the tag.
    opened: bool,
}

impl Splitter {
    /// A splitter at the start of an answer.
    pub fn new() -> Self {
        Splitter::default()
    }

    /// Whether the answer opened with the tag (so far).
    pub fn has_thinking(&self) -> bool {
        self.opened
    }

    /// The next delta of the answer's text → what it can be told to be.
    pub fn push(&mut self, delta: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        let mut rest = delta.to_string();
        loop {
            match self.state {
                State::Start => {
                    self.held.push_str(&rest);
                    let t = self.held.trim_start();
                    if t.is_empty() || (t.len() < OPEN.len() && OPEN.starts_with(t)) {
                        return out;
                    }
                    if let Some(after) = t.strip_prefix(OPEN) {
                        rest = after.to_string();
                        self.held.clear();
                        self.state = State::Inside;
                        self.opened = true;
                        continue;
                    }
                    self.state = State::Text;
                    out.push(Piece::Text(std::mem::take(&mut self.held)));
                    return out;
                }
                State::Inside => {
                    self.held.push_str(&rest);
                    if let Some(i) = self.held.find(CLOSE) {
                        let after = self.held[i + CLOSE.len()..].to_string();
                        self.held.truncate(i);
                        let thinking = self.thinking_text(self.held.trim_end().len());
                        self.held.clear();
                        if !thinking.is_empty() {
                            out.push(Piece::Thinking(thinking));
                        }
                        self.state = State::Closed;
                        rest = after;
                        continue;
                    }
                    // Keep what may be the start of `</think>`, and blank
                    // space that may be the last before it.
                    let mut keep = self.held.len().saturating_sub(CLOSE.len() - 1);
                    // Back to a char boundary (forward would do as well:
                    // the tag is ASCII, so no byte of it is skipped).
                    while !self.held.is_char_boundary(keep) {
                        keep -= 1;
                    }
                    let keep = self.held[..keep].trim_end().len();
                    let thinking = self.thinking_text(keep);
                    if !thinking.is_empty() {
                        out.push(Piece::Thinking(thinking));
                    }
                    return out;
                }
                State::Closed => {
                    let t = rest.trim_start();
                    if !t.is_empty() {
                        self.state = State::Text;
                        out.push(Piece::Text(t.to_string()));
                    }
                    return out;
                }
                State::Text => {
                    if !rest.is_empty() {
                        out.push(Piece::Text(rest));
                    }
                    return out;
                }
            }
        }
    }

    /// Takes `held[..upto]` as thinking (its leading blank space dropped
    /// when it is the first).
    fn thinking_text(&mut self, upto: usize) -> String {
        let mut t: String = self.held.drain(..upto).collect();
        if !self.thought {
            t = t.trim_start().to_string();
        }
        if !t.is_empty() {
            self.thought = true;
        }
        t
    }

    /// The answer ended: what was held. An answer cut off inside the tags
    /// (its token limit) keeps what it thought.
    pub fn finish(&mut self) -> Vec<Piece> {
        let held = std::mem::take(&mut self.held);
        match self.state {
            State::Start if !held.is_empty() => vec![Piece::Text(held)],
            State::Inside => {
                let t = if self.thought {
                    held.trim_end().to_string()
                } else {
                    held.trim().to_string()
                };
                if t.is_empty() {
                    Vec::new()
                } else {
                    vec![Piece::Thinking(t)]
                }
            }
            _ => Vec::new(),
        }
    }
}

/// A whole answer's text → its thinking (None: no tags) and its text.
pub fn split(text: &str) -> (Option<String>, String) {
    let mut s = Splitter::new();
    let mut pieces = s.push(text);
    pieces.extend(s.finish());
    let mut thinking: Option<String> = None;
    let mut answer = String::new();
    for p in pieces {
        match p {
            Piece::Thinking(t) => thinking.get_or_insert_with(String::new).push_str(&t),
            Piece::Text(t) => answer.push_str(&t),
        }
    }
    if s.has_thinking() && thinking.is_none() {
        thinking = Some(String::new());
    }
    (thinking, answer)
}

/// Thinking and text as one answer text, the way the hosts' own clients
/// send reasoning back: `<think>\n…\n</think>\n\n` before the text.
pub fn write(thinking: &str, text: &str) -> String {
    format!("{}\n\n{text}", wrap(thinking))
}

/// Thinking alone in its tags: `<think>\n…\n</think>` (a text block of
/// its own, where the API has blocks).
pub fn wrap(thinking: &str) -> String {
    format!("{OPEN}\n{thinking}\n{CLOSE}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(deltas: &[&str]) -> (String, String) {
        let mut s = Splitter::new();
        let mut all: Vec<Piece> = deltas.iter().flat_map(|d| s.push(d)).collect();
        all.extend(s.finish());
        let (mut t, mut a) = (String::new(), String::new());
        for p in all {
            match p {
                Piece::Thinking(x) => t.push_str(&x),
                Piece::Text(x) => a.push_str(&x),
            }
        }
        (t, a)
    }

    #[test]
    fn a_whole_answer_splits_into_thinking_and_text() {
        let (t, a) = split("<think>\nThe user wants 2+2.\n</think>\n\n4");
        assert_eq!(t.as_deref(), Some("The user wants 2+2."));
        assert_eq!(a, "4");
        assert_eq!(split("Just 4."), (None, "Just 4.".to_string()));
        assert_eq!(split("  <think>x</think>y").0.as_deref(), Some("x"));
        assert_eq!(split("<think></think>y"), (Some(String::new()), "y".into()));
    }

    #[test]
    fn tags_anywhere_but_the_start_are_text() {
        let text = "Use <think> tags like <think>this</think>.";
        assert_eq!(split(text), (None, text.to_string()));
        let (t, a) = split("<think>a</think>b <think>c</think>");
        assert_eq!(t.as_deref(), Some("a"));
        assert_eq!(a, "b <think>c</think>");
    }

    #[test]
    fn every_cut_between_deltas_gives_the_same_split() {
        let text = "\n<think>\nStep one.\nStep two é.\n</think>\n\nThe answer.";
        let whole = pieces(&[text]);
        assert_eq!(
            whole,
            ("Step one.\nStep two é.".into(), "The answer.".into())
        );
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .collect();
        for &i in &bounds {
            for &j in bounds.iter().filter(|j| **j >= i) {
                let got = pieces(&[&text[..i], &text[i..j], &text[j..]]);
                assert_eq!(got, whole, "cut at {i} and {j}");
            }
        }
        // One character at a time.
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(pieces(&refs), whole);
    }

    #[test]
    fn an_answer_cut_off_inside_the_tags_keeps_its_thinking() {
        assert_eq!(
            pieces(&["<think>\nHalf a tho", "ught\n"]),
            ("Half a thought".into(), String::new())
        );
        assert_eq!(pieces(&["<thi"]), (String::new(), "<thi".into()));
        assert_eq!(pieces(&["  "]), (String::new(), "  ".into()));
    }

    /// Nothing is held longer than it takes to tell (found by mutation
    /// testing: the split alone cannot see latency).
    #[test]
    fn deltas_are_given_out_as_soon_as_they_can_be_told() {
        let mut s = Splitter::new();
        assert_eq!(s.push("Hi"), [Piece::Text("Hi".into())]);
        let mut s = Splitter::new();
        assert!(s.push("<think>").is_empty());
        assert!(s.has_thinking(), "the whole tag opens thinking at once");
        // Held back: what may begin `</think>` (its first 7 bytes), no more.
        assert_eq!(s.push("abcdefghij"), [Piece::Thinking("abc".into())]);
        assert_eq!(
            s.push("</think>\n\nok"),
            [Piece::Thinking("defghij".into()), Piece::Text("ok".into())]
        );
        assert!(
            Splitter::new().finish().is_empty(),
            "an empty answer has no pieces"
        );
    }

    #[test]
    fn written_back_as_the_hosts_clients_send_it() {
        let text = write("Step one.", "The answer.");
        assert_eq!(text, "<think>\nStep one.\n</think>\n\nThe answer.");
        assert_eq!(
            split(&text),
            (Some("Step one.".into()), "The answer.".into())
        );
    }
}
