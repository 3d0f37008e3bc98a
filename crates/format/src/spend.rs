//! What messages spent, in the four measures a budget limits.

use crate::{Message, Role};

/// What a run, a thread or an owner spent: tokens, cost, model calls and
/// tool calls. Sums saturate (counts come from providers).
///
/// Cost is kept in whole nano-dollars (1e-9 USD), so that sums over
/// millions of messages, in a database or in memory, are exact and a
/// store can add them in SQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spend {
    /// Input plus output tokens.
    pub tokens: u64,
    /// Cost in nano-dollars (messages the price table does not price
    /// add nothing).
    pub cost_nanos: u64,
    /// Answers of a model (assistant messages, and messages carrying a
    /// model's usage, such as a summary).
    pub model_calls: u64,
    /// Tool calls the model asked for.
    pub tool_calls: u64,
}

/// What a store counted for a thread and its owner, for budgets (zero
/// where it counted nothing: a thread without an owner has no owner
/// spending).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadSpend {
    /// Every counted run of the thread.
    pub thread: Spend,
    /// Every counted run of the owner's threads, today (UTC).
    pub owner_day: Spend,
    /// Every counted run of the owner's threads, this month (UTC).
    pub owner_month: Spend,
}

/// Nano-dollars in one US dollar.
pub const NANOS_PER_USD: f64 = 1e9;

impl Spend {
    /// What one message spent.
    pub fn of(m: &Message) -> Spend {
        let tokens = m
            .usage
            .map(|u| u.input_tokens.saturating_add(u.output_tokens))
            .unwrap_or(0);
        let model_call = m.role == Role::Assistant || m.usage.is_some();
        Spend {
            tokens,
            cost_nanos: m.cost.map(usd_to_nanos).unwrap_or(0),
            model_calls: u64::from(model_call),
            tool_calls: m.tool_calls().count() as u64,
        }
    }

    /// What `messages` spent together.
    pub fn of_all<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Spend {
        let mut total = Spend::default();
        for m in messages {
            total.add(&Spend::of(m));
        }
        total
    }

    /// Adds `other` to this.
    pub fn add(&mut self, other: &Spend) {
        self.tokens = self.tokens.saturating_add(other.tokens);
        self.cost_nanos = self.cost_nanos.saturating_add(other.cost_nanos);
        self.model_calls = self.model_calls.saturating_add(other.model_calls);
        self.tool_calls = self.tool_calls.saturating_add(other.tool_calls);
    }

    /// Whether nothing was spent.
    pub fn is_zero(&self) -> bool {
        *self == Spend::default()
    }

    /// The cost in US dollars.
    pub fn cost_usd(&self) -> f64 {
        self.cost_nanos as f64 / NANOS_PER_USD
    }
}

/// US dollars as whole nano-dollars, rounded; a negative, NaN or
/// infinite cost (never a price table's) counts as nothing, an enormous
/// one as the most a `u64` holds.
pub fn usd_to_nanos(usd: f64) -> u64 {
    if !usd.is_finite() || usd <= 0.0 {
        return 0;
    }
    // `as` saturates at u64::MAX.
    (usd * NANOS_PER_USD).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Block, ToolCall, Usage};
    use serde_json::json;

    #[test]
    fn a_message_spends_its_tokens_cost_and_calls() {
        let mut m = Message::assistant("checking");
        m.content.push(Block::ToolCall {
            tool_call: ToolCall::new("c1", "get_order", json!({})),
        });
        m.content.push(Block::ToolCall {
            tool_call: ToolCall::new("c2", "get_order", json!({})),
        });
        m.usage = Some(Usage {
            input_tokens: 100,
            output_tokens: 20,
            cached_tokens: 60,
            ..Default::default()
        });
        m.cost = Some(0.000_123_456_789_4);
        assert_eq!(
            Spend::of(&m),
            Spend {
                tokens: 120,
                cost_nanos: 123_457,
                model_calls: 1,
                tool_calls: 2
            }
        );
        // A user's message spends nothing; a summary (usage on a user
        // message) is a model call.
        let mut u = Message::user("hi");
        assert!(Spend::of(&u).is_zero());
        u.usage = Some(Usage {
            input_tokens: 5,
            output_tokens: 5,
            ..Default::default()
        });
        assert_eq!(Spend::of(&u).model_calls, 1);
        let total = Spend::of_all([&m, &u]);
        assert_eq!(
            (total.tokens, total.model_calls, total.tool_calls),
            (130, 2, 2)
        );
    }

    #[test]
    fn costs_convert_exactly_and_never_negative() {
        assert_eq!(usd_to_nanos(0.5), 500_000_000);
        assert_eq!(usd_to_nanos(-1.0), 0);
        assert_eq!(usd_to_nanos(f64::NAN), 0);
        assert_eq!(usd_to_nanos(1e30), u64::MAX);
        let mut s = Spend {
            cost_nanos: u64::MAX - 1,
            ..Default::default()
        };
        s.add(&Spend {
            cost_nanos: 5,
            ..Default::default()
        });
        assert_eq!(s.cost_nanos, u64::MAX);
        assert_eq!(
            Spend {
                cost_nanos: 1_500_000_000,
                ..Default::default()
            }
            .cost_usd(),
            1.5
        );
    }
}
