//! The model flags `parlance run` and `parlance chat` share: sampling over
//! the agent's own settings, and `--verbose` for what each model call cost.

use std::time::Duration;

use parlance_config::AgentConfig;
use parlance_format::Message;
use serde_json::Value;

/// Sampling and reporting flags.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ModelFlags {
    /// Sampling temperature, over the agent's (0: greedy; the local model's
    /// default is 0.8).
    #[arg(long, value_parser = temperature)]
    pub temperature: Option<f64>,
    /// Sampling seed, over the agent's: with the local model the same seed,
    /// conversation and settings give the same answer.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print each model call's tokens and speed (tokens/s) on stderr.
    #[arg(long, short)]
    pub verbose: bool,
}

fn temperature(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!(
            "expected a number of 0 or more (0: greedy), got {s:?}"
        )),
    }
}

impl ModelFlags {
    /// Lays the flags over an agent's configuration.
    pub fn apply(&self, cfg: &mut AgentConfig) {
        if let Some(t) = self.temperature {
            cfg.temperature = Some(t);
        }
        if let Some(s) = self.seed {
            cfg.seed = Some(s);
        }
    }
}

/// The warnings the model attached to a message (the local model's loop
/// guard, a conversation shortened to fit its context).
pub fn warnings(m: &Message) -> Vec<String> {
    m.metadata
        .as_ref()
        .and_then(|md| md.get("parlance_warnings"))
        .and_then(Value::as_array)
        .map(|ws| {
            ws.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn rate(tokens: u64, seconds: f64) -> String {
    if seconds > 0.0 {
        format!("{:.0} tokens/s", tokens as f64 / seconds)
    } else {
        "- tokens/s".into()
    }
}

/// One line on what a model call cost: tokens and speed. The local model
/// reports its own prefill and decode times; for others `wall` (the time
/// the call took, as seen here) gives an overall rate.
pub fn stats(m: &Message, wall: Option<Duration>) -> Option<String> {
    let u = m.usage.as_ref()?;
    let who = format!(
        "{} {}",
        m.provider.as_deref().unwrap_or("model"),
        m.model.as_deref().unwrap_or("")
    );
    let local = m
        .metadata
        .as_ref()
        .and_then(|md| md.get("parlance_local"))
        .filter(|v| v.is_object());
    Some(match local {
        Some(l) => {
            let secs = |k: &str| l.get(k).and_then(Value::as_f64).unwrap_or(0.0) / 1000.0;
            let (prompt, decode) = (secs("prompt_ms"), secs("decode_ms"));
            let mut line = format!(
                "{}: {} prompt tokens in {prompt:.2} s ({}), {} generated in {decode:.2} s ({})",
                who.trim_end(),
                u.input_tokens,
                rate(u.input_tokens, prompt),
                u.output_tokens,
                rate(u.output_tokens, decode),
            );
            match l.get("threads").and_then(Value::as_u64) {
                Some(1) => line.push_str(", 1 thread"),
                Some(t) => line.push_str(&format!(", {t} threads")),
                None => {}
            }
            if let Some(s) = l.get("seed") {
                line.push_str(&format!(", seed {s}"));
            }
            line
        }
        None => {
            let mut line = format!(
                "{}: {} prompt tokens, {} generated",
                who.trim_end(),
                u.input_tokens,
                u.output_tokens
            );
            if let Some(w) = wall {
                line.push_str(&format!(
                    " in {:.2} s ({} overall)",
                    w.as_secs_f64(),
                    rate(u.output_tokens, w.as_secs_f64())
                ));
            }
            line
        }
    })
}

/// Prints a finished assistant message's warnings, and with `verbose` its
/// cost, on stderr.
pub fn report(m: &Message, verbose: bool, wall: Option<Duration>) {
    for w in warnings(m) {
        eprintln!("warning: {w}");
    }
    if verbose && let Some(line) = stats(m, wall) {
        eprintln!("[{line}]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parlance_format::{Role, Usage};
    use serde_json::json;

    fn msg(meta: Value) -> Message {
        let mut m = Message::assistant("hi");
        m.provider = Some("local".into());
        m.model = Some("SmolLM2".into());
        m.usage = Some(Usage {
            input_tokens: 200,
            output_tokens: 50,
            ..Usage::default()
        });
        m.metadata = meta.as_object().cloned();
        m
    }

    #[test]
    fn local_calls_report_prefill_and_decode_speed() {
        let m = msg(
            json!({"parlance_local": {"prompt_ms": 1000.0, "decode_ms": 500.0, "threads": 2, "seed": 7}}),
        );
        assert_eq!(
            stats(&m, None).unwrap(),
            "local SmolLM2: 200 prompt tokens in 1.00 s (200 tokens/s), 50 generated in 0.50 s (100 tokens/s), 2 threads, seed 7"
        );
    }

    #[test]
    fn other_calls_report_an_overall_rate() {
        let mut m = msg(json!({}));
        m.provider = Some("openai".into());
        assert_eq!(
            stats(&m, Some(Duration::from_millis(2500))).unwrap(),
            "openai SmolLM2: 200 prompt tokens, 50 generated in 2.50 s (20 tokens/s overall)"
        );
        assert_eq!(
            stats(&m, None).unwrap(),
            "openai SmolLM2: 200 prompt tokens, 50 generated"
        );
        let zero = msg(json!({"parlance_local": {"prompt_ms": 0.0, "decode_ms": 0.0}}));
        assert!(stats(&zero, None).unwrap().contains("(- tokens/s)"));
        assert_eq!(stats(&Message::new(Role::Assistant, vec![]), None), None);
    }

    #[test]
    fn warnings_are_read_from_the_metadata() {
        let m = msg(json!({"parlance_warnings": ["looped", 3, "shortened"]}));
        assert_eq!(warnings(&m), ["looped", "shortened"]);
        assert!(warnings(&msg(json!({}))).is_empty());
    }

    #[test]
    fn flags_go_over_the_agent() {
        let mut cfg = AgentConfig {
            temperature: Some(0.5),
            seed: Some(1),
            ..Default::default()
        };
        ModelFlags::default().apply(&mut cfg);
        assert_eq!((cfg.temperature, cfg.seed), (Some(0.5), Some(1)));
        let f = ModelFlags {
            temperature: Some(0.0),
            seed: Some(9),
            verbose: false,
        };
        f.apply(&mut cfg);
        assert_eq!((cfg.temperature, cfg.seed), (Some(0.0), Some(9)));
        assert_eq!(temperature("0.7"), Ok(0.7));
        assert!(temperature("-1").unwrap_err().contains("0 or more"));
        assert!(temperature("NaN").is_err());
    }
}
