//! What the runner's suites share: the store suites' helpers (the two
//! backends, a temp dir, scripted messages, the `both!` macro) from
//! parlance-testkit, and an agent with a few tools.
#![allow(dead_code)]

use std::sync::Arc;

use parlance_agent::{Agent, Limits, OnToolException, Tool, ToolContext, ToolError};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

pub use parlance_testkit::both;
pub use parlance_testkit::store::*;

pub fn agent(model: &ScriptedModel, policy: OnToolException) -> Agent {
    Agent::builder(Arc::new(model.clone()))
        .instructions("You help.")
        .limits(Limits {
            on_tool_exception: policy,
            ..Limits::default()
        })
        .tool(Tool::new(
            "lookup",
            "Look up.",
            |a: Value, _c: ToolContext| async move { Ok::<_, ToolError>(json!({"found": a["q"]})) },
        ))
        .tool(
            Tool::new(
                "refund",
                "Refund.",
                |a: Value, _c: ToolContext| async move {
                    Ok::<_, ToolError>(format!("refunded {}", a["amount"]))
                },
            )
            .needs_approval(),
        )
        .tool(Tool::blocking(
            "charge",
            "Charge.",
            |_: Value, _c: ToolContext| -> Result<String, ToolError> {
                panic!("card 4111-1111 declined")
            },
        ))
        .build()
        .unwrap()
}
