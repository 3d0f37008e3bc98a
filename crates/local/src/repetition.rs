//! The loop guard: a generation whose last tokens are one n-gram repeated
//! over and over is stopped, rather than left to fill the token budget
//! with "I'm so sorry. I'm so sorry. …".
//!
//! The test is exact and cheap: for every period `p` up to
//! [`MAX_PERIOD`], it keeps how many trailing tokens equal the token `p`
//! places before them, so each new token costs `MAX_PERIOD` comparisons.
//! A tail that repeats with period `p` at least [`MIN_REPEATS`] times and
//! over at least [`MIN_SPAN`] tokens is a loop. Exact repetition of 32
//! tokens or more is what a stuck model does; prose, lists and code vary
//! their tokens long before that (a list's items share a prefix, not
//! everything).

/// The longest repeated n-gram looked for, in tokens.
pub const MAX_PERIOD: usize = 64;
/// How many copies make a loop.
pub const MIN_REPEATS: usize = 3;
/// How many tokens a loop covers at least (so "ha ha ha" is no loop).
pub const MIN_SPAN: usize = 32;

/// A loop found at the end of a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    /// The repeated n-gram's length in tokens.
    pub period: usize,
    /// How many times it came in a row (whole copies).
    pub repeats: usize,
    /// Where the repetition starts; `start + period` ends the first copy.
    pub start: usize,
}

/// Watches tokens as they are generated.
#[derive(Debug, Clone)]
pub struct LoopGuard {
    tokens: Vec<i32>,
    /// `runs[p - 1]`: trailing tokens equal to the one `p` before them.
    runs: Vec<usize>,
}

impl Default for LoopGuard {
    fn default() -> Self {
        LoopGuard {
            tokens: Vec::new(),
            runs: vec![0; MAX_PERIOD],
        }
    }
}

impl LoopGuard {
    /// Adds a token; returns the loop the tail now is, if any (the
    /// shortest period first, so "a a a …" is period 1, not 2).
    pub fn push(&mut self, token: i32) -> Option<Loop> {
        self.tokens.push(token);
        let n = self.tokens.len();
        let mut found = None;
        for p in 1..=MAX_PERIOD {
            let run = &mut self.runs[p - 1];
            if n > p && self.tokens[n - 1 - p] == token {
                *run += 1;
            } else {
                *run = 0;
            }
            // The periodic tail: `run` tokens that repeat, plus the first
            // copy (with no repeat, `span` is `p`: under three copies).
            let span = *run + p;
            if found.is_none() && span >= MIN_SPAN && span >= p * MIN_REPEATS {
                found = Some(Loop {
                    period: p,
                    repeats: span / p,
                    start: n - span,
                });
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(tokens: &[i32]) -> Option<(usize, Loop)> {
        let mut g = LoopGuard::default();
        tokens
            .iter()
            .enumerate()
            .find_map(|(i, t)| g.push(*t).map(|l| (i, l)))
    }

    #[test]
    fn a_repeated_sentence_is_caught_once_it_spans_enough_tokens() {
        // "Hello there." then "I'm so sorry." (5 tokens) over and over.
        let mut t = vec![100, 101, 102];
        for _ in 0..20 {
            t.extend([1, 2, 3, 4, 5]);
        }
        let (at, l) = feed(&t).expect("a loop");
        assert_eq!(l.period, 5);
        assert_eq!(l.start, 3);
        // 32 tokens of repetition: the first copy and 27 more.
        assert_eq!(at, 3 + 32 - 1);
        assert_eq!(l.repeats, 6);
    }

    #[test]
    fn a_long_period_needs_three_copies() {
        let unit: Vec<i32> = (0..40).collect();
        let mut t = vec![-1];
        t.extend(&unit);
        t.extend(&unit);
        assert_eq!(feed(&t), None, "two copies of 40 tokens are not a loop yet");
        t.extend(&unit);
        let (at, l) = feed(&t).unwrap();
        assert_eq!((at, l.period, l.repeats, l.start), (120, 40, 3, 1));
    }

    #[test]
    fn the_longest_period_looked_for_is_64() {
        let unit: Vec<i32> = (0..64).collect();
        let t: Vec<i32> = unit.iter().cycle().take(64 * 3).copied().collect();
        assert_eq!(feed(&t).unwrap().1.period, 64);
        let unit: Vec<i32> = (0..65).collect();
        let t: Vec<i32> = unit.iter().cycle().take(65 * 4).copied().collect();
        assert_eq!(feed(&t), None);
    }

    #[test]
    fn the_shortest_period_is_reported() {
        let t = vec![7; 40];
        let (at, l) = feed(&t).unwrap();
        assert_eq!((at, l.period, l.start), (31, 1, 0));
        assert_eq!(l.repeats, 32);
    }

    #[test]
    fn varied_text_is_no_loop() {
        // A list whose items share a 4-token prefix but differ after it.
        let mut t = Vec::new();
        for i in 0..30 {
            t.extend([1, 2, 3, 4, 1000 + i, 2000 + i]);
        }
        assert_eq!(feed(&t), None);
        let short = vec![9; MIN_SPAN - 1];
        assert_eq!(feed(&short), None, "under the span");
    }

    #[test]
    fn a_break_in_the_pattern_starts_the_count_again() {
        let mut t = Vec::new();
        for _ in 0..5 {
            t.extend([1, 2, 3, 4, 5]);
        }
        t.push(99);
        for _ in 0..5 {
            t.extend([1, 2, 3, 4, 5]);
        }
        assert_eq!(feed(&t), None, "25 and 25 tokens, broken in the middle");
    }
}
