//! [`TestModel`]: no script needed. It calls the tools it is offered with
//! arguments made from their schemas, then answers.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use parlance_format::{Block, Message, Role, ToolCall};
use serde_json::{Map, Value};

use super::schema_data::value_for;
use super::{as_answer, stream_of};
use crate::{EventStream, Model, ModelError, ModelRequest, ToolChoice};

/// Which tools [`TestModel`] calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CallTools {
    /// Every tool offered, in the order offered.
    #[default]
    All,
    /// These tools, in this order (each must be offered).
    Only(Vec<String>),
}

/// A model for smoke tests, as Pydantic AI's `TestModel`: no script, no
/// network, the same answers every time.
///
/// On the first call of a run (no assistant message since the last user
/// message) it calls every tool offered, or the ones named with
/// [`call_tools`](TestModel::call_tools), all in one turn, each with
/// arguments made from the tool's JSON Schema that validate against it
/// (see [`schema_data`](super::schema_data)). On the next call it answers:
/// with [`text`](TestModel::text) if set; with a value of the output
/// schema when the request has one (made from the schema, or
/// [`output`](TestModel::output)); else with the tools' results as JSON
/// (`{"tool_name": "what it returned", ...}`), or `success (no tool
/// calls)` when none ran. `tool_choice: none` calls nothing; a named tool
/// choice calls that tool.
///
/// ```
/// use parlance_model::testing::TestModel;
/// use parlance_model::{Model, ModelRequest, OutputSchema};
/// use parlance_format::Message;
/// use serde_json::json;
///
/// let model = TestModel::new();
/// let mut request = ModelRequest { messages: vec![Message::user("Rate it")], ..Default::default() };
/// request.options.output_schema = Some(OutputSchema::new("rating", json!({
///     "type": "object",
///     "properties": {"stars": {"type": "integer", "minimum": 1, "maximum": 5}},
///     "required": ["stars"],
/// })));
/// # futures::executor::block_on(async {
/// let answer = model.generate(&request).await.unwrap();
/// assert_eq!(answer.text(), r#"{"stars":1}"#);
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct TestModel {
    call_tools: CallTools,
    text: Option<String>,
    output: Option<Value>,
    seed: u64,
    received: Arc<Mutex<Vec<ModelRequest>>>,
}

impl TestModel {
    /// Calls every tool offered, then answers.
    pub fn new() -> Self {
        TestModel::default()
    }

    /// Calls only these tools (an empty list: none).
    pub fn call_tools<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.call_tools = CallTools::Only(names.into_iter().map(Into::into).collect());
        self
    }

    /// The final answer's text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// The final answer when the request has an output schema (instead of
    /// a value made from the schema).
    pub fn output(mut self, value: Value) -> Self {
        self.output = Some(value);
        self
    }

    /// Varies the made-up values (which enum value, which number): 0, the
    /// default, gives the simplest.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Which tools it calls.
    pub fn tool_selection(&self) -> &CallTools {
        &self.call_tools
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<ModelRequest> {
        self.received.lock().expect("not poisoned").clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<ModelRequest> {
        self.received.lock().expect("not poisoned").last().cloned()
    }

    /// The tools to call for this request, by name, in order.
    fn chosen<'r>(
        &self,
        request: &'r ModelRequest,
    ) -> Result<Vec<&'r parlance_format::ToolSpec>, ModelError> {
        let offered = |name: &str| request.tools.iter().find(|t| t.name == name);
        let named = |names: &[String]| {
            names
                .iter()
                .map(|n| {
                    offered(n).ok_or_else(|| ModelError::InvalidRequest {
                        message: format!(
                            "TestModel: call_tools names {n:?}, which the request does not offer (offered: {})",
                            if request.tools.is_empty() {
                                "no tools".to_string()
                            } else {
                                request.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                            }
                        ),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        match &request.options.tool_choice {
            Some(ToolChoice::None) => Ok(Vec::new()),
            Some(ToolChoice::Tool(name)) => named(std::slice::from_ref(name)),
            _ => match &self.call_tools {
                CallTools::All => Ok(request.tools.iter().collect()),
                CallTools::Only(names) => named(names),
            },
        }
    }

    fn answer(&self, request: &ModelRequest) -> Result<Message, ModelError> {
        self.received
            .lock()
            .expect("not poisoned")
            .push(request.clone());
        let turn_start = request
            .messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .map_or(0, |i| i + 1);
        let turn = &request.messages[turn_start..];
        let first_call = !turn.iter().any(|m| m.role == Role::Assistant);
        if first_call {
            let tools = self.chosen(request)?;
            if !tools.is_empty() {
                let earlier = request.messages.iter().flat_map(|m| m.tool_calls()).count();
                let calls = tools
                    .iter()
                    .enumerate()
                    .map(|(i, t)| Block::ToolCall {
                        tool_call: ToolCall::new(
                            format!("call_{}_{}", earlier + i + 1, t.name),
                            t.name.clone(),
                            value_for(&t.input_schema, self.seed),
                        ),
                    })
                    .collect();
                return Ok(self.finish(Message::new(Role::Assistant, calls)));
            }
        }
        let content = if let Some(text) = &self.text {
            text.clone()
        } else if let Some(schema) = &request.options.output_schema {
            let value = self
                .output
                .clone()
                .unwrap_or_else(|| value_for(&schema.schema, self.seed));
            parlance_format::to_json(&value)
        } else {
            let mut results = Map::new();
            for m in turn {
                for b in &m.content {
                    if let Block::ToolResult { tool_result } = b {
                        let name = tool_result
                            .name
                            .clone()
                            .unwrap_or_else(|| tool_result.tool_call_id.clone());
                        results.insert(name, result_value(&tool_result.content));
                    }
                }
            }
            if results.is_empty() {
                "success (no tool calls)".to_string()
            } else {
                parlance_format::to_json(&results)
            }
        };
        Ok(self.finish(Message::assistant(content)))
    }

    fn finish(&self, msg: Message) -> Message {
        as_answer(msg, "test", "test")
    }
}

/// A tool's result as one JSON value: its text, or its one JSON block, or
/// the blocks as they are.
fn result_value(content: &[Block]) -> Value {
    match content {
        [] => Value::Null,
        [Block::Json { json }] => json.clone(),
        blocks if blocks.iter().all(|b| matches!(b, Block::Text(_))) => Value::String(
            blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        ),
        blocks => serde_json::to_value(blocks).unwrap_or(Value::Null),
    }
}

impl Model for TestModel {
    fn provider(&self) -> &str {
        "test"
    }

    fn model_id(&self) -> &str {
        "test"
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async move { self.answer(request) })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move { Ok(stream_of(&self.answer(request)?)) })
    }
}
