//! Stop sequences (`options.stop`, or an Ollama model's `stop`
//! parameter): generation ends where one appears, and it is not part of
//! the answer. While streaming, the last bytes that could be the start of
//! a stop sequence are held back until it is clear they are not.

use serde_json::{Map, Value};

/// The stop sequences of one generation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stops {
    stops: Vec<String>,
    /// The longest stop sequence's length, in bytes.
    longest: usize,
}

impl Stops {
    /// The request's stop sequences, else the model's own (`stop` in its
    /// published parameters); empty ones are ignored.
    pub fn new(request: &[String], model_params: &Map<String, Value>) -> Stops {
        let from_model = || -> Vec<String> {
            match model_params.get("stop") {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let mut stops: Vec<String> = if request.is_empty() {
            from_model()
        } else {
            request.to_vec()
        };
        stops.retain(|s| !s.is_empty());
        let longest = stops.iter().map(String::len).max().unwrap_or(0);
        Stops { stops, longest }
    }

    /// Where the first stop sequence starts in `out`, looking only where
    /// one could have been completed by the bytes after `before` (the
    /// length of `out` before the last piece was added).
    pub fn find(&self, out: &[u8], before: usize) -> Option<usize> {
        let from = before.saturating_sub(self.longest.saturating_sub(1));
        self.stops
            .iter()
            .filter_map(|s| {
                out[from..]
                    .windows(s.len())
                    .position(|w| w == s.as_bytes())
                    .map(|i| from + i)
            })
            .min()
    }

    /// How much of `out` may be handed to a stream now: all but the bytes
    /// that could still begin a stop sequence.
    pub fn safe_len(&self, out: &[u8]) -> usize {
        let hold = (1..self.longest.min(out.len() + 1))
            .rev()
            .find(|&k| {
                let tail = &out[out.len() - k..];
                self.stops.iter().any(|s| s.as_bytes().starts_with(tail))
            })
            .unwrap_or(0);
        out.len() - hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stops(s: &[&str]) -> Stops {
        Stops::new(
            &s.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &Map::new(),
        )
    }

    #[test]
    fn the_first_stop_sequence_is_found_where_it_could_be_completed() {
        let s = stops(&["\nUser:", "3"]);
        assert_eq!(s.find(b"1, 2, 3, 4", 0), Some(6));
        // "1, 2, " was seen before; the new piece "3, 4" completes "3".
        assert_eq!(s.find(b"1, 2, 3, 4", 6), Some(6));
        assert_eq!(
            s.find(b"Hi.\nUser: more", 4),
            Some(3),
            "straddling the last piece"
        );
        assert_eq!(s.find(b"Hi.\nUs", 0), None);
        assert_eq!(stops(&[]).find(b"anything", 0), None);
    }

    #[test]
    fn a_possible_beginning_is_held_back() {
        let s = stops(&["\nUser:"]);
        assert_eq!(s.safe_len(b"Hello\nUs"), 5);
        assert_eq!(s.safe_len(b"Hello\n"), 5);
        assert_eq!(s.safe_len(b"Hello"), 5);
        assert_eq!(s.safe_len(b"Hello\nUx"), 8);
        assert_eq!(s.safe_len(b""), 0);
        assert_eq!(s.safe_len(b"\nUs"), 0, "all of it may begin one");
        assert_eq!(stops(&[]).safe_len(b"Hello\n"), 6);
    }

    #[test]
    fn the_request_wins_over_the_model_and_empty_ones_are_ignored() {
        let model = json!({"stop": ["<|end|>", ""]});
        let m = model.as_object().unwrap();
        assert_eq!(Stops::new(&[], m).stops, ["<|end|>"]);
        assert_eq!(Stops::new(&["x".into()], m).stops, ["x"]);
        assert_eq!(
            Stops::new(&[], json!({"stop": "END"}).as_object().unwrap()).stops,
            ["END"]
        );
        assert_eq!(Stops::new(&["".into()], m).longest, 0);
    }
}
