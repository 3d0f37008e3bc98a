//! Canonical messages → a chat prompt, and the JSON Schema that constrains
//! the answer when tools (or an output schema) are offered.

use parlance_format::{Block, Message, Role, ToolSpec};
use parlance_model::{ModelRequest, ToolChoice};
use serde_json::{Value, json};

/// What the reply must be.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Free text.
    Text,
    /// JSON matching this schema: `{"tool_calls": [...]}` or `{"answer": ...}`.
    Constrained(Value),
}

fn text_of(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.text.clone()),
            Block::Json { json } => Some(json.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The chat as (role, content) pairs for the model's template.
pub fn chat(req: &ModelRequest) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let tools_text = tool_instructions(&req.tools);
    let mut system_seen = false;
    for m in &req.messages {
        match m.role {
            Role::System => {
                let mut text = text_of(&m.content);
                if !system_seen && !tools_text.is_empty() {
                    text.push_str("\n\n");
                    text.push_str(&tools_text);
                }
                system_seen = true;
                out.push(("system".into(), text));
            }
            Role::User => out.push(("user".into(), text_of(&m.content))),
            Role::Assistant => out.push(("assistant".into(), assistant_text(m))),
            Role::Tool => {
                // Small chat templates know user and assistant best: tool
                // results are told to the model as the user's message.
                let lines: Vec<String> = m
                    .content
                    .iter()
                    .filter_map(|b| b.as_tool_result())
                    .map(|r| {
                        format!(
                            "Result of {} ({}): {}",
                            r.name.as_deref().unwrap_or("the tool"),
                            r.status.as_str(),
                            text_of(&r.content)
                        )
                    })
                    .collect();
                out.push(("user".into(), lines.join("\n")));
            }
        }
    }
    if !system_seen && !tools_text.is_empty() {
        out.insert(0, ("system".into(), tools_text));
    }
    out
}

/// An assistant turn as the model would have written it under our protocol.
fn assistant_text(m: &Message) -> String {
    let calls: Vec<Value> = m
        .tool_calls()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    if calls.is_empty() {
        text_of(&m.content)
    } else {
        json!({"tool_calls": calls}).to_string()
    }
}

fn tool_instructions(tools: &[ToolSpec]) -> String {
    if tools.is_empty() {
        return String::new();
    }
    let mut s = String::from("You can use these tools:\n");
    for t in tools {
        s.push_str(&format!(
            "- {}: {} Arguments (JSON Schema): {}\n",
            t.name,
            t.description.as_deref().unwrap_or(""),
            t.input_schema
        ));
    }
    s.push_str("To use tools, reply {\"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]}. To answer, reply {\"answer\": \"...\"}.");
    s
}

/// The schema the reply must match, from the tools, the tool choice and
/// the output schema. `auto` is decided here rather than by the model: a
/// small model cannot be trusted to choose, so after a user message it
/// calls a tool, and after tool results it answers.
pub fn shape(req: &ModelRequest) -> Shape {
    let answer = |schema: Value| json!({"type": "object", "properties": {"answer": schema}, "required": ["answer"], "additionalProperties": false});
    let output = req.options.output_schema.as_ref().map(|s| s.schema.clone());
    let answer_schema = answer(
        output
            .clone()
            .unwrap_or_else(|| json!({"type": "string", "minLength": 1})),
    );
    let choice = req.options.tool_choice.clone().unwrap_or(ToolChoice::Auto);
    let tools: Vec<&ToolSpec> = match &choice {
        _ if req.tools.is_empty() => Vec::new(),
        ToolChoice::None => Vec::new(),
        ToolChoice::Tool(name) => req.tools.iter().filter(|t| &t.name == name).collect(),
        _ => req.tools.iter().collect(),
    };
    let last_is_user = req.messages.last().is_some_and(|m| m.role == Role::User);
    let must_call = match choice {
        ToolChoice::Required | ToolChoice::Tool(_) => true,
        ToolChoice::Auto => last_is_user,
        ToolChoice::None => false,
    };
    if tools.is_empty() || !must_call {
        return match (output, req.tools.is_empty()) {
            (None, true) => Shape::Text,
            _ => Shape::Constrained(answer_schema),
        };
    }
    let calls: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut args = t.input_schema.clone();
            if let Some(o) = args.as_object_mut() {
                // Keywords the grammar builder does not need.
                o.remove("$schema");
                o.remove("title");
            }
            json!({"type": "object", "properties": {"name": {"const": t.name}, "arguments": args},
                   "required": ["name", "arguments"], "additionalProperties": false})
        })
        .collect();
    Shape::Constrained(json!({
        "type": "object",
        "properties": {"tool_calls": {"type": "array", "minItems": 1, "maxItems": 4, "items": {"anyOf": calls}}},
        "required": ["tool_calls"],
        "additionalProperties": false
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parlance_format::ToolSpec;

    fn req(last: Message) -> ModelRequest {
        ModelRequest {
            messages: vec![Message::system("Be brief."), last],
            tools: vec![ToolSpec::new(
                "get_order",
                "Look up an order.",
                json!({"type": "object", "properties": {"id": {"type": "string"}}}),
            )]
            .into(),
            ..Default::default()
        }
    }

    #[test]
    fn auto_calls_after_a_user_message_and_answers_after_results() {
        let Shape::Constrained(s) = shape(&req(Message::user("Where is A-1?"))) else {
            panic!()
        };
        assert_eq!(
            s["properties"]["tool_calls"]["items"]["anyOf"][0]["properties"]["name"]["const"],
            "get_order"
        );
        let results = Message::new(Role::Tool, vec![]);
        let Shape::Constrained(s) = shape(&req(results)) else {
            panic!()
        };
        assert!(s["properties"]["answer"].is_object());
        let mut none = req(Message::user("hi"));
        none.options.tool_choice = Some(ToolChoice::None);
        assert!(
            matches!(shape(&none), Shape::Constrained(s) if s["properties"]["answer"].is_object())
        );
        let plain = ModelRequest {
            messages: vec![Message::user("hi")],
            ..Default::default()
        };
        assert_eq!(shape(&plain), Shape::Text);
    }

    #[test]
    fn tools_are_described_in_the_system_message() {
        let c = chat(&req(Message::user("Where is A-1?")));
        assert_eq!(c[0].0, "system");
        assert!(
            c[0].1.starts_with(
                "Be brief.\n\nYou can use these tools:\n- get_order: Look up an order."
            )
        );
        assert_eq!(c[1], ("user".to_string(), "Where is A-1?".to_string()));
    }
}
