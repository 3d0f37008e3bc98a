//! One generation: fit the conversation into the context, prefill, then
//! decode token by token under the sampler chain and the loop guard.

use std::num::NonZeroU32;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaChatMessage;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use parlance_format::{Block, FinishReason, Message, Role, Usage};
use parlance_model::{ModelError, ModelRequest};
use serde_json::{Map, Value, json};

use crate::engine::{Engine, backend, err};
use crate::fit;
use crate::prompt::{Shape, chat, shape};
use crate::repetition::{Loop, LoopGuard};
use crate::salvage::salvage;
use crate::sampling::Settings;
use crate::stops::Stops;

/// The token budget when a request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 512;

/// The prompt that fits, and what was left out to make it fit.
struct Fitted {
    tokens: Vec<LlamaToken>,
    /// Messages left out of the prompt, and the turns they made.
    left_out: (usize, usize),
}

impl Engine {
    /// The prompt's tokens for these messages, under the model's template.
    fn tokens_for(
        &self,
        req: &ModelRequest,
        messages: Vec<Message>,
    ) -> Result<Vec<LlamaToken>, ModelError> {
        let view = ModelRequest {
            messages,
            tools: req.tools.clone(),
            options: req.options.clone(),
        };
        let chat: Vec<LlamaChatMessage> = chat(&view)
            .into_iter()
            .map(|(r, c)| LlamaChatMessage::new(r, c).map_err(err))
            .collect::<Result<_, _>>()?;
        let prompt = self
            .model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(err)?;
        Ok(self.model.vocab().tokenize(prompt.as_bytes(), true, true))
    }

    /// The whole conversation when it fits `n_ctx` with `max_new` tokens to
    /// spare; else without its oldest turns (the fewest that make it fit).
    fn fit(&self, req: &ModelRequest, n_ctx: usize, max_new: usize) -> Result<Fitted, ModelError> {
        let turns = fit::turns(&req.messages);
        let mut seen: Vec<(usize, Vec<LlamaToken>)> = Vec::new();
        let mut failure = None;
        let dropped = fit::fewest_to_drop(turns.len(), |k| {
            match self.tokens_for(req, fit::without_oldest(&req.messages, &turns, k)) {
                Ok(t) => {
                    let fits = t.len() + max_new <= n_ctx;
                    seen.push((k, t));
                    fits
                }
                Err(e) => {
                    failure.get_or_insert(e);
                    false
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let Some(k) = dropped else {
            // Name the smallest prompt tried: the system messages and the
            // last turn, or everything when there was nothing to leave out.
            let least = seen.iter().map(|(_, t)| t.len()).min().unwrap_or(0);
            return Err(ModelError::ContextTooLong {
                message: format!(
                    "{least} prompt tokens (the system messages and the last turn) + {max_new} to generate exceed the model's {n_ctx}-token context"
                ),
            });
        };
        let tokens = seen
            .into_iter()
            .find(|(j, _)| *j == k)
            .map(|(_, t)| t)
            .expect("the search tried the turn count it returned");
        let left_messages = turns.iter().take(k).map(|t| t.len()).sum();
        Ok(Fitted {
            tokens,
            left_out: (left_messages, k),
        })
    }

    /// Generates one answer; `on_text` gets free-text pieces as they come.
    pub(crate) fn generate(
        &self,
        req: &ModelRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Message, ModelError> {
        let _guard = self
            .busy
            .lock()
            .map_err(|_| err("a previous generation panicked"))?;
        let settings = Settings::resolve(&self.params, &req.options, self.n_ctx_train)?;
        let n_ctx = settings.num_ctx.unwrap_or(self.n_ctx);
        let threads = settings.num_thread.map_or(self.threads, |n| n as i32);
        let max_new = req.options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS) as usize;
        if max_new >= n_ctx as usize {
            return Err(ModelError::ContextTooLong {
                message: format!(
                    "max_tokens {max_new} leaves no room for a prompt in the model's {n_ctx}-token context"
                ),
            });
        }
        let mut warnings = Vec::new();
        let fitted = self.fit(req, n_ctx as usize, max_new)?;
        if fitted.left_out.0 > 0 {
            warnings.push(format!(
                "the conversation is longer than the model's {n_ctx}-token context: its {} oldest messages ({} turns) were left out of the prompt (they are still in the conversation)",
                fitted.left_out.0, fitted.left_out.1
            ));
        }
        let tokens = fitted.tokens;
        let shape = shape(req);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let mut ctx = self.model.new_context(backend(), params).map_err(err)?;
        let t_prompt = Instant::now();
        let mut batch = LlamaBatch::new(tokens.len().max(512), 1);
        let last = tokens.len() as i32 - 1;
        for (i, t) in tokens.iter().enumerate() {
            batch
                .add(*t, i as i32, &[0], i as i32 == last)
                .map_err(err)?;
        }
        ctx.decode(&mut batch).map_err(err)?;
        let prompt_time = t_prompt.elapsed();
        let grammar = match &shape {
            Shape::Constrained(schema) => {
                let g = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
                    .map_err(|e| err(format!("schema to grammar: {e}")))?;
                Some(
                    LlamaSampler::grammar(&self.model, &g, "root")
                        .map_err(|e| err(format!("grammar: {e:?}")))?,
                )
            }
            Shape::Text => None,
        };
        let sampled = grammar.is_none() && !settings.greedy();
        let mut sampler = settings.chain(&self.model, grammar, n_ctx);
        let vocab = self.model.vocab();
        let t_decode = Instant::now();
        let mut out: Vec<u8> = Vec::new();
        // `ends[i]`: the length of `out` after token i.
        let mut ends: Vec<usize> = Vec::new();
        let mut guard = LoopGuard::default();
        let mut looped: Option<Loop> = None;
        let mut emitted = 0;
        let mut n = tokens.len() as i32;
        let mut finished = false;
        let stops = Stops::new(&req.options.stop, &self.params);
        let mut stopped = false;
        while ends.len() < max_new {
            // `sample` also accepts the token (grammar and penalty state).
            let token = sampler.sample(&ctx, batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                finished = true;
                break;
            }
            let before = out.len();
            out.extend(vocab.token_to_piece(token, false, None));
            ends.push(out.len());
            if let Some(at) = stops.find(&out, before) {
                out.truncate(at);
                (finished, stopped) = (true, true);
                break;
            }
            if settings.loop_guard
                && let Some(l) = guard.push(token.0)
            {
                looped = Some(l);
                break;
            }
            if shape == Shape::Text {
                // Hand over only complete UTF-8, and nothing that may
                // begin a stop sequence.
                let safe = stops.safe_len(&out).max(emitted);
                let valid = match std::str::from_utf8(&out[emitted..safe]) {
                    Ok(s) => s.len(),
                    Err(e) => e.valid_up_to(),
                };
                if valid > 0 {
                    on_text(std::str::from_utf8(&out[emitted..emitted + valid]).expect("checked"));
                    emitted += valid;
                }
            }
            batch.clear();
            batch.add(token, n, &[0], true).map_err(err)?;
            n += 1;
            ctx.decode(&mut batch).map_err(err)?;
        }
        let decode_time = t_decode.elapsed();
        if shape == Shape::Text && emitted < out.len() {
            // What was held back for a stop sequence that did not come.
            on_text(&String::from_utf8_lossy(&out[emitted..]));
        }
        let generated = ends.len();
        if let Some(l) = looped {
            // Keep the text up to the end of the first copy.
            let first = &out
                [if l.start == 0 { 0 } else { ends[l.start - 1] }..ends[l.start + l.period - 1]];
            let unit: String = String::from_utf8_lossy(first)
                .trim()
                .chars()
                .take(60)
                .collect();
            warnings.push(format!(
                "the model was caught in a loop and stopped: its last {} tokens were one {}-token sequence over and over (\"{unit}\"); the repeats are left out of the answer",
                generated - l.start,
                l.period,
            ));
            out.truncate(ends[l.start + l.period - 1]);
        }
        let text = String::from_utf8_lossy(&out).trim().to_string();
        let mut msg = match &shape {
            Shape::Text => Message::new(Role::Assistant, vec![Block::text(text)]),
            Shape::Constrained(_) => constrained_message(&text, finished)?,
        };
        let tool_calls = msg.tool_calls().next().is_some();
        msg.finish_reason = Some(match (finished, tool_calls) {
            (false, _) => FinishReason::Length,
            (true, true) => FinishReason::ToolCalls,
            (true, false) => FinishReason::Stop,
        });
        msg.finish_reason_raw = Some(
            match (finished, looped.is_some()) {
                (true, _) if stopped => "stop_sequence",
                (true, _) => "eog",
                (false, true) => "loop",
                (false, false) => "max_tokens",
            }
            .into(),
        );
        msg.usage = Some(Usage {
            input_tokens: tokens.len() as u64,
            output_tokens: generated as u64,
            ..Usage::default()
        });
        msg.provider = Some("local".into());
        msg.model = Some(self.name.clone());
        let mut meta = Map::new();
        let mut run = json!({
            "prompt_ms": millis(prompt_time),
            "decode_ms": millis(decode_time),
            "threads": threads,
            "context": n_ctx,
        });
        if sampled {
            run["seed"] = settings.seed.into();
        }
        meta.insert("parlance_local".into(), run);
        for w in &warnings {
            tracing::warn!("local model {}: {w}", self.name);
        }
        if !warnings.is_empty() {
            meta.insert("parlance_warnings".into(), json!(warnings));
        }
        msg.metadata = Some(meta);
        Ok(msg)
    }
}

fn millis(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

/// The constrained JSON reply → canonical blocks.
fn constrained_message(text: &str, finished: bool) -> Result<Message, ModelError> {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Cut off: the answer so far or the whole calls, else what came.
        Err(_) if !finished => match salvage(text) {
            Some(v) => v,
            None => return Ok(Message::new(Role::Assistant, vec![Block::text(text)])),
        },
        Err(e) => {
            return Err(ModelError::MalformedResponse {
                message: format!("local model: the constrained reply is not JSON ({e}): {text}"),
            });
        }
    };
    if let Some(calls) = v.get("tool_calls").and_then(Value::as_array) {
        let blocks = calls
            .iter()
            .map(|c| {
                Block::tool_call(
                    parlance_format::new_id("call"),
                    c["name"].as_str().unwrap_or_default(),
                    c["arguments"].clone(),
                )
            })
            .collect();
        return Ok(Message::new(Role::Assistant, blocks));
    }
    let answer = v.get("answer").cloned().unwrap_or(Value::Null);
    let text = match answer {
        Value::String(s) if !finished => s.trim().to_string(),
        Value::String(s) => s,
        other => other.to_string(),
    };
    Ok(Message::new(Role::Assistant, vec![Block::text(text)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_reply_is_read_back() {
        let m = constrained_message(r#"{"answer": "Paris is the cap"#, false).unwrap();
        assert_eq!(m.text(), "Paris is the cap");
        let m = constrained_message(r#"{"tool_calls": [{"na"#, false).unwrap();
        assert_eq!(m.text(), r#"{"tool_calls": [{"na"#);
        let m = constrained_message(
            r#"{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "a", "#,
            false,
        )
        .unwrap();
        assert_eq!(m.tool_calls().count(), 1);
        assert!(constrained_message("{oops", true).is_err());
    }

    #[test]
    fn constrained_replies_become_calls_or_answers() {
        let m = constrained_message(
            r#"{"tool_calls": [{"name": "lookup", "arguments": {"id": "A-1"}}]}"#,
            true,
        )
        .unwrap();
        let c = m.tool_calls().next().unwrap();
        assert_eq!(
            (c.name.as_str(), &c.arguments),
            ("lookup", &json!({"id": "A-1"}))
        );
        assert!(c.id.starts_with("call_"));
        let m = constrained_message(r#"{"answer": {"city": "Paris"}}"#, true).unwrap();
        assert_eq!(m.text(), r#"{"city":"Paris"}"#);
    }
}
