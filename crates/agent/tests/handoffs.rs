//! Handoffs (`AgentBuilder::handoff`): the model hands the conversation to
//! another agent, which answers the rest of the run with its own
//! instructions, tools and model; the tool message records who handed to
//! whom; the next turns are the new agent's, whichever agent of the chain
//! is asked; a run paused in the new agent's tools resumes there.

use parlance_agent::{Agent, Resume, Tool, ToolError};
use parlance_format::{Block, Decision, FinishReason, Message, Role, RunStatus};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

fn calls(id: &str, name: &str, args: Value) -> Message {
    let mut m = Message::new(Role::Assistant, vec![Block::tool_call(id, name, args)]);
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m
}

fn refund() -> Tool {
    Tool::new("refund", "Refund an order.", |a: Value| async move {
        Ok::<_, ToolError>(format!("refunded {}", a["amount"]))
    })
}

fn billing(model: &ScriptedModel) -> Agent {
    Agent::builder(model.clone())
        .name("billing")
        .description("Refunds and invoices.")
        .instructions("You handle billing.")
        .tool(refund())
        .build()
        .unwrap()
}

fn support(model: &ScriptedModel, billing: &Agent) -> Agent {
    Agent::builder(model.clone())
        .name("support")
        .instructions("You help with orders.")
        .handoff(billing.clone())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_handoff_gives_the_rest_of_the_run_to_the_other_agent() {
    let front = ScriptedModel::new([calls("h1", "transfer_to_billing", json!({}))]);
    let back = ScriptedModel::new([says("Your refund is on its way.")]);
    let agent = support(&front, &billing(&back));
    // Offered as a tool without arguments, described by the target.
    let spec = agent
        .tools()
        .get("transfer_to_billing")
        .unwrap()
        .spec()
        .clone();
    assert_eq!(
        spec.description.as_deref(),
        Some("Hand the conversation to the billing agent: Refunds and invoices.")
    );
    let r = agent.run("I want a refund").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "Your refund is on its way.");
    assert_eq!(r.handoff(), Some("billing"));
    let tool = &r.messages[2];
    assert_eq!(tool.role, Role::Tool);
    assert_eq!(
        tool.metadata.as_ref().unwrap()["handoff"],
        json!({"from": "support", "to": "billing"})
    );
    assert_eq!(
        tool.content[0].as_tool_result().unwrap().content,
        vec![Block::text("Transferred to billing.")]
    );
    // Billing was asked with its own instructions and tools, on the whole
    // conversation so far.
    let sent = &back.received()[0];
    assert_eq!(sent.messages[0], Message::system("You handle billing."));
    assert_eq!(sent.messages[1].text(), "I want a refund");
    assert_eq!(sent.messages.len(), 4);
    let tools: Vec<&str> = sent.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["refund"]);
    assert_eq!(front.received().len(), 1);
}

#[tokio::test]
async fn the_next_turns_are_the_new_agents_whichever_agent_is_asked() {
    let front = ScriptedModel::new([calls("h1", "transfer_to_billing", json!({}))]);
    let back = ScriptedModel::new([says("Handed."), says("Still billing.")]);
    let agent = support(&front, &billing(&back));
    let first = agent.run("I want a refund").await;
    let second = agent.run("And the invoice?").turns([first]).await;
    assert_eq!(second.text(), "Still billing.");
    assert_eq!(front.received().len(), 1, "support was not asked again");
    assert_eq!(
        back.received()[1].messages[0],
        Message::system("You handle billing.")
    );
    // The chain is followed: A -> B -> C, asked as A, answered by C.
    let last = ScriptedModel::new([says("C here.")]);
    let c = Agent::builder(last.clone()).name("c").build().unwrap();
    let b = Agent::builder(ScriptedModel::new(Vec::<Message>::new()))
        .name("b")
        .handoff(c)
        .build()
        .unwrap();
    let a = Agent::builder(ScriptedModel::new(Vec::<Message>::new()))
        .name("a")
        .handoff(b)
        .build()
        .unwrap();
    let mut handed = Message::new(Role::Tool, vec![]);
    handed.metadata =
        Some(serde_json::from_value(json!({"handoff": {"from": "b", "to": "c"}})).unwrap());
    let r = a
        .run("hi")
        .turns([parlance_format::Turn {
            messages: vec![handed],
        }])
        .await;
    assert_eq!(r.text(), "C here.");
}

#[tokio::test]
async fn an_agent_handed_a_conversation_it_cannot_reach_answers_itself() {
    let own = ScriptedModel::new([says("Support here.")]);
    let agent = Agent::builder(own.clone())
        .name("support")
        .handoff(billing(&ScriptedModel::new(Vec::<Message>::new())))
        .build()
        .unwrap();
    let mut handed = Message::new(Role::Tool, vec![]);
    handed.metadata = Some(serde_json::from_value(json!({"handoff": {"to": "nobody"}})).unwrap());
    let r = agent
        .run("hi")
        .turns([parlance_format::Turn {
            messages: vec![handed],
        }])
        .await;
    assert_eq!(r.text(), "Support here.");
}

#[tokio::test]
async fn a_run_paused_after_a_handoff_resumes_with_the_new_agent() {
    let front = ScriptedModel::new([calls("h1", "transfer_to_billing", json!({}))]);
    let back = ScriptedModel::new([
        calls("r1", "refund", json!({"amount": 20})),
        says("Refunded 20."),
    ]);
    let b = Agent::builder(back.clone())
        .name("billing")
        .tool(refund().needs_approval())
        .build()
        .unwrap();
    let agent = support(&front, &b);
    let paused = agent.run("Refund 20").await;
    assert_eq!(
        paused.status,
        RunStatus::RequiresApproval,
        "{:?}",
        paused.error
    );
    let request = paused.pending[0].clone();
    assert_eq!(request.name, "refund");
    // Resumed through the agent that was asked: billing's tool runs.
    let done = agent
        .resume(Resume {
            turns: vec![],
            paused,
            decisions: vec![Decision::approve(&request)],
        })
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{:?}", done.error);
    assert_eq!(done.text(), "Refunded 20.");
}

#[tokio::test]
async fn a_handoff_target_needs_a_name() {
    let nameless = Agent::builder(ScriptedModel::new(Vec::<Message>::new()))
        .build()
        .unwrap();
    let e = Agent::builder(ScriptedModel::new(Vec::<Message>::new()))
        .handoff(nameless)
        .build()
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("handoffs[0]: the agent has no name"),
        "{e}"
    );
}
