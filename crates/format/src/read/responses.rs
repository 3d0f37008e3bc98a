//! The run envelope: turns passed back, decisions on pending calls, and
//! responses.

use serde_json::Value;

use super::blocks::{Place, content, decision_kind};
use super::json::{Obj, Path, R, as_array, as_string};
use super::messages::{finish_reason, messages, usage};
use crate::{ApprovalRequest, Decision, DecisionKind, Response, RunError, RunStatus, Turn, Usage};

pub(crate) fn turn(v: &Value, path: &Path) -> R<Turn> {
    let obj = Obj::new(v, path, "a turn")?;
    // Any other field (a whole earlier response) is accepted and not read.
    let messages = match obj.get("messages") {
        None | Some(Value::Null) => Vec::new(),
        Some(m) => messages(m, &path.key("messages"))?,
    };
    Ok(Turn { messages })
}

pub(crate) fn decision(v: &Value, path: &Path) -> R<Decision> {
    let obj = Obj::new(v, path, "a decision")?;
    obj.only(
        &[
            "tool_call_id",
            "digest",
            "decision",
            "arguments",
            "reason",
            "content",
        ],
        "a decision",
    )?;
    let kind = decision_kind(obj.req("decision")?, &path.key("decision"))?;
    let arguments = obj.opt_free("arguments")?;
    let reason = obj.opt_str("reason")?;
    let content = obj
        .opt("content")
        .map(|c| content(c, &path.key("content"), Place::ToolResultContent))
        .transpose()?;
    let (needs, forbids): (&[&str], &[&str]) = match kind {
        DecisionKind::Approved => (&[], &["arguments", "reason", "content"]),
        DecisionKind::Edited => (&["arguments"], &["reason", "content"]),
        DecisionKind::Rejected => (&[], &["arguments", "content"]),
        DecisionKind::Answered => (&["content"], &["arguments", "reason"]),
    };
    for k in needs {
        if !obj.has(k) {
            return Err(path
                .key(k)
                .err(format!("required when decision is {}", kind.as_str())));
        }
    }
    for k in forbids {
        if obj.has(k) {
            return Err(path
                .key(k)
                .err(format!("not allowed when decision is {}", kind.as_str())));
        }
    }
    Ok(Decision {
        tool_call_id: obj.req_id("tool_call_id")?,
        digest: obj.req_id("digest")?,
        decision: kind,
        arguments,
        reason,
        content,
    })
}

pub(super) fn run_status(v: &Value, path: &Path) -> R<RunStatus> {
    let s = as_string(v, path)?;
    match s.as_str() {
        "completed" => Ok(RunStatus::Completed),
        "requires_approval" => Ok(RunStatus::RequiresApproval),
        "failed" => Ok(RunStatus::Failed),
        _ => Err(path.err(format!(
            "unknown status {s:?} (expected one of: completed, requires_approval, failed)"
        ))),
    }
}

pub(crate) fn response(v: &Value, path: &Path) -> R<Response> {
    let obj = Obj::new(v, path, "a response")?;
    obj.only(
        &[
            "id",
            "thread_id",
            "status",
            "messages",
            "output",
            "usage",
            "cost",
            "finish_reason",
            "pending",
            "error",
        ],
        "a response",
    )?;
    let pending = match obj.opt("pending") {
        None => Vec::new(),
        Some(p) => {
            let pp = path.key("pending");
            let items = as_array(p, &pp, "a list of approval requests")?;
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let ip = pp.index(i);
                let o = Obj::new(item, &ip, "an approval request")?;
                o.only(
                    &["tool_call_id", "name", "arguments", "digest", "run_id"],
                    "an approval request",
                )?;
                out.push(ApprovalRequest {
                    tool_call_id: o.req_id("tool_call_id")?,
                    name: o.req_id("name")?,
                    arguments: o.req_free("arguments")?,
                    digest: o.req_id("digest")?,
                    run_id: o.opt_str("run_id")?,
                });
            }
            out
        }
    };
    let error = match obj.opt("error") {
        None => None,
        Some(e) => {
            let ep = path.key("error");
            let o = Obj::new(e, &ep, "a run error")?;
            o.only(&["code", "message", "cause"], "a run error")?;
            let mut error = RunError::new(o.req_id("code")?, o.req_str("message")?);
            error.cause = o.get_free("cause")?;
            Some(error)
        }
    };
    Ok(Response {
        id: obj.opt_str("id")?,
        thread_id: obj.opt_str("thread_id")?,
        status: run_status(obj.req("status")?, &path.key("status"))?,
        messages: messages(obj.req("messages")?, &path.key("messages"))?,
        output: obj.get_free("output")?.unwrap_or(Value::Null),
        usage: match obj.opt("usage") {
            None => Usage::default(),
            Some(u) => usage(u, &path.key("usage"))?,
        },
        cost: obj.opt_cost("cost")?,
        finish_reason: obj
            .opt("finish_reason")
            .map(|f| finish_reason(f, &path.key("finish_reason")))
            .transpose()?,
        pending,
        error,
    })
}
