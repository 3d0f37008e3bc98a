//! Fitting a conversation into the model's context: when the history is
//! longer than the context, the oldest turns are left out of the prompt.
//!
//! Only the prompt is shortened; the caller's messages (a stored thread)
//! are never touched. A turn is a user message and everything after it up
//! to the next user message, so an assistant's tool calls always travel
//! with their results and an answer with its question. System messages
//! are always kept, and so is the last turn (the one being answered).

use std::ops::Range;

use parlance_format::{Message, Role};

/// The turns of a conversation, as ranges of message indices (system
/// messages excluded). Messages before the first user message (a greeting)
/// are a turn of their own.
pub fn turns(messages: &[Message]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::System {
            continue;
        }
        match out.last_mut() {
            Some(t) if m.role != Role::User => t.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The messages left when the `dropped` oldest turns are left out.
pub fn without_oldest(
    messages: &[Message],
    turns: &[Range<usize>],
    dropped: usize,
) -> Vec<Message> {
    let gone: Vec<&Range<usize>> = turns.iter().take(dropped).collect();
    messages
        .iter()
        .enumerate()
        .filter(|(i, m)| m.role == Role::System || !gone.iter().any(|t| t.contains(i)))
        .map(|(_, m)| m.clone())
        .collect()
}

/// The fewest oldest turns to leave out so that `fits` holds, never the
/// last turn: `Some(0)` when everything fits, `None` when even the system
/// messages and the last turn do not. `fits(k)` must be monotone (leaving
/// out more never makes the prompt longer); it is called about log2(turns)
/// times.
pub fn fewest_to_drop(turns: usize, mut fits: impl FnMut(usize) -> bool) -> Option<usize> {
    if fits(0) {
        return Some(0);
    }
    let most = turns.saturating_sub(1);
    if most == 0 || !fits(most) {
        return None;
    }
    // fits(lo) is false, fits(hi) is true.
    let (mut lo, mut hi) = (0, most);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parlance_format::{Block, ToolResult, ToolStatus};
    use serde_json::json;

    fn convo() -> Vec<Message> {
        vec![
            Message::system("Be brief."),
            Message::assistant("Hi! How can I help?"),
            Message::user("Where is A-1?"),
            Message::new(
                Role::Assistant,
                vec![Block::tool_call("c1", "lookup", json!({"id": "A-1"}))],
            ),
            Message::new(
                Role::Tool,
                vec![Block::tool_result(ToolResult::text(
                    "c1",
                    ToolStatus::Ok,
                    "shipped",
                ))],
            ),
            Message::assistant("It shipped."),
            Message::user("Thanks. And A-2?"),
            Message::assistant("Let me look."),
            Message::user("Quick, please."),
        ]
    }

    #[test]
    fn turns_start_at_user_messages_and_keep_calls_with_results() {
        let m = convo();
        assert_eq!(turns(&m), vec![1..2, 2..6, 6..8, 8..9]);
        assert_eq!(turns(&[Message::system("s")]), Vec::<Range<usize>>::new());
        assert_eq!(turns(&[Message::user("a")]), vec![0..1]);
    }

    #[test]
    fn leaving_out_turns_keeps_system_messages() {
        let m = convo();
        let t = turns(&m);
        let kept = without_oldest(&m, &t, 2);
        let texts: Vec<String> = kept.iter().map(|m| m.text()).collect();
        assert_eq!(
            texts,
            [
                "Be brief.",
                "Thanks. And A-2?",
                "Let me look.",
                "Quick, please."
            ]
        );
        assert_eq!(without_oldest(&m, &t, 0), m);
        // A system message in the middle stays where it was.
        let mut m2 = m.clone();
        m2.insert(4, Message::system("Mind the tools."));
        let t2 = turns(&m2);
        let kept = without_oldest(&m2, &t2, 2);
        assert_eq!(kept[1].text(), "Mind the tools.");
        assert_eq!(kept.len(), 5);
    }

    #[test]
    fn the_fewest_turns_are_dropped() {
        // Each turn costs 10, the rest 5, the budget 37: three turns fit.
        let cost = |k: usize| 5 + 10 * (8 - k);
        let mut calls = 0;
        assert_eq!(
            fewest_to_drop(8, |k| {
                calls += 1;
                cost(k) <= 37
            }),
            Some(5)
        );
        assert!(calls <= 5, "{calls} calls");
        assert_eq!(fewest_to_drop(8, |_| true), Some(0));
        assert_eq!(fewest_to_drop(8, |k| k >= 7), Some(7));
        assert_eq!(fewest_to_drop(8, |k| k >= 1), Some(1));
        assert_eq!(fewest_to_drop(8, |_| false), None, "not even the last turn");
        assert_eq!(
            fewest_to_drop(1, |k| k >= 1),
            None,
            "the last turn is never dropped"
        );
        assert_eq!(fewest_to_drop(0, |_| false), None);
    }
}
