//! The invalid-argument budget: how many calls with invalid arguments a
//! run tolerates, in all and per tool.

use std::collections::HashMap;

use super::ToolBox;

/// Counts invalid-argument calls in a run against the agent's budget and
/// each tool's own.
#[derive(Debug, Clone, Default)]
pub struct InvalidArgumentsBudget {
    limit: u32,
    total: u32,
    per_tool: HashMap<String, u32>,
}

/// The model sent invalid arguments more often than allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the model sent invalid arguments {count} times{}, more than the {limit} allowed", .tool.as_ref().map(|t| format!(" to {t}")).unwrap_or_default())]
pub struct BudgetExceeded {
    /// The tool whose own budget ran out (`None`: the agent's).
    pub tool: Option<String>,
    /// The limit.
    pub limit: u32,
    /// How many invalid calls there were.
    pub count: u32,
}

impl InvalidArgumentsBudget {
    /// A budget of `limit` invalid calls per run (tools may set their own).
    pub fn new(limit: u32) -> Self {
        InvalidArgumentsBudget {
            limit,
            ..Default::default()
        }
    }

    /// Counts one invalid call to `tool`; errors when a budget is spent.
    pub fn record(&mut self, tool: &str, tools: &ToolBox) -> Result<(), BudgetExceeded> {
        self.total += 1;
        let n = self.per_tool.entry(tool.to_string()).or_insert(0);
        *n += 1;
        if let Some(limit) = tools.get(tool).and_then(|t| t.max_invalid_arguments)
            && *n > limit
        {
            return Err(BudgetExceeded {
                tool: Some(tool.to_string()),
                limit,
                count: *n,
            });
        }
        if self.total > self.limit {
            return Err(BudgetExceeded {
                tool: None,
                limit: self.limit,
                count: self.total,
            });
        }
        Ok(())
    }
}
