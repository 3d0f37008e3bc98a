use parlance_format::{Block, Message, Role, ToolResult, ToolStatus};

/// The message that makes a thread consistent again after a run died
/// mid-step: an `interrupted` result for every tool call of the last
/// assistant message that has neither a result nor a pending approval.
/// `None` when nothing is missing. Deterministic: the same history always
/// gets the same repair.
pub fn repair(history: &[Message]) -> Option<Message> {
    let last_assistant = history.iter().rposition(|m| m.role == Role::Assistant)?;
    let answered: Vec<&str> = history[last_assistant + 1..]
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::ToolResult { tool_result } => Some(tool_result.tool_call_id.as_str()),
            Block::ApprovalRequest { approval_request } => {
                Some(approval_request.tool_call_id.as_str())
            }
            _ => None,
        })
        .collect();
    let missing: Vec<Block> = history[last_assistant]
        .tool_calls()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .map(|c| {
            let mut r = ToolResult::text(
                &c.id,
                ToolStatus::Interrupted,
                format!(
                    "{} was interrupted: the run stopped before the call finished",
                    c.name
                ),
            );
            r.name = Some(c.name.clone());
            Block::tool_result(r)
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut m = Message::new(Role::Tool, missing);
    m.mark_repair();
    Some(m)
}

/// The last message with every approval request that nobody will decide
/// any more (its run failed or died) turned into an `interrupted` result,
/// so that the thread can be sent to a model again. `None` when it holds
/// no approval request.
pub fn settle_pending(last: &Message) -> Option<Message> {
    if !last
        .content
        .iter()
        .any(|b| matches!(b, Block::ApprovalRequest { .. }))
    {
        return None;
    }
    let mut m = last.clone();
    for b in &mut m.content {
        if let Block::ApprovalRequest { approval_request } = b {
            let mut r = ToolResult::text(
                &approval_request.tool_call_id,
                ToolStatus::Interrupted,
                format!(
                    "{} was not run: the run stopped before this call was decided",
                    approval_request.name
                ),
            );
            r.name = Some(approval_request.name.clone());
            *b = Block::tool_result(r);
        }
    }
    m.mark_repair();
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unanswered_calls_get_interrupted_results() {
        let mut a = Message::new(
            Role::Assistant,
            vec![
                Block::tool_call("c1", "f", json!({})),
                Block::tool_call("c2", "g", json!({})),
            ],
        );
        a.finish_reason = None;
        let history = vec![Message::user("hi"), a.clone()];
        let fix = repair(&history).unwrap();
        assert_eq!(fix.role, Role::Tool);
        let ids: Vec<&str> = fix
            .content
            .iter()
            .map(|b| b.as_tool_result().unwrap().tool_call_id.as_str())
            .collect();
        assert_eq!(ids, ["c1", "c2"]);
        assert!(
            fix.content
                .iter()
                .all(|b| b.as_tool_result().unwrap().status == ToolStatus::Interrupted)
        );
        let mut fixed = history.clone();
        fixed.push(fix);
        assert_eq!(
            repair(&fixed),
            None,
            "a repaired thread needs no more repair"
        );
        assert_eq!(
            repair(&[Message::user("hi"), Message::assistant("done")]),
            None
        );
    }
}
