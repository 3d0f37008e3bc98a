"""Approvals: the four decisions, one at a time or together; refused
decisions; a needs_approval callable; a paused run stored as JSON and
resumed by a fresh agent; a paused run written by Rust resumed here (and
one written here checked in for the Rust test to resume)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

import pytest
from conftest import REPO, make_agent, text_of
from mock_openai import after_tools, calls, text

import parlance
from parlance import DecisionError, Response, answer, approve, edit, reject, tool
from parlance.types import ToolResult

ran: List[Dict[str, Any]] = []


@tool(needs_approval=True)
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    ran.append({"order_id": order_id, "amount": amount})
    return f"refunded {amount} EUR on {order_id}"


FOUR = calls(
    ("c1", "refund", {"order_id": "A-1", "amount": 10}),
    ("c2", "refund", {"order_id": "A-2", "amount": 20}),
    ("c3", "refund", {"order_id": "A-3", "amount": 30}),
    ("c4", "refund", {"order_id": "A-4", "amount": 40}),
)


def result_of(r: Response[Any], call_id: str) -> ToolResult:
    for m in r.messages:
        for b in m["content"]:
            if b["type"] == "tool_result" and b["tool_result"]["tool_call_id"] == call_id:
                return b["tool_result"]
    raise AssertionError(f"no result for {call_id}")


def test_the_four_decisions(mock: Any) -> None:
    ran.clear()
    mock.script = after_tools(FOUR, lambda body: "Done.")
    agent = make_agent(mock, tools=[refund])
    paused = agent.run_sync("Refund them")
    assert paused.status == "requires_approval"
    assert [p.tool_call_id for p in paused.pending] == ["c1", "c2", "c3", "c4"]
    assert paused.pending[1].arguments == {"order_id": "A-2", "amount": 20}
    assert paused.pending[0].digest.startswith("sha256:")
    assert ran == [], "nothing runs before a decision"

    # A fresh agent, from the stored JSON.
    stored = paused.to_json()
    again = make_agent(mock, tools=[refund])
    r = again.resume_sync(
        stored,
        [
            approve(paused.pending[0]),
            edit("c2", {"order_id": "A-2", "amount": 15}),
            reject(paused.pending[2], "too much"),
            answer("c4", "A manager refunded it by hand."),
        ],
    )
    assert r.status == "completed" and r.text == "Done."
    # The approved and the edited call ran, each once; they run at once, so
    # in either order (their results are in call order, checked below).
    assert sorted(ran, key=lambda c: c["order_id"]) == [
        {"order_id": "A-1", "amount": 10},
        {"order_id": "A-2", "amount": 15},
    ]
    assert result_of(r, "c1")["approval"] == {"decision": "approved"}
    assert result_of(r, "c2")["approval"] == {"decision": "edited", "arguments": {"order_id": "A-2", "amount": 15}}
    assert result_of(r, "c2")["content"] == [{"type": "text", "text": "refunded 15 EUR on A-2"}]
    assert result_of(r, "c3")["status"] == "rejected"
    assert text_of(result_of(r, "c3")) == "The reviewer rejected this call: too much"
    assert result_of(r, "c4")["content"] == [{"type": "text", "text": "A manager refunded it by hand."}]
    # What the model read after the decisions, in call order.
    sent = [m["content"] for m in mock.requests[-1]["messages"] if m["role"] == "tool"]
    assert sent == [
        "refunded 10 EUR on A-1",
        "refunded 15 EUR on A-2",
        "The reviewer rejected this call: too much",
        "A manager refunded it by hand.",
    ]


def test_decisions_one_at_a_time_async(mock: Any) -> None:
    import asyncio

    mock.script = after_tools(FOUR, lambda body: "Done.")
    agent = make_agent(mock, tools=[refund])

    async def main() -> Any:
        paused = await agent.run("Refund them")
        step = await agent.resume(paused, [approve(paused.pending[0])])
        assert step.status == "requires_approval"
        assert [p.tool_call_id for p in step.pending] == ["c2", "c3", "c4"]
        return await agent.resume(step, [reject(p) for p in step.pending])

    r = asyncio.run(main())
    assert r.status == "completed"


def test_refused_decisions_name_what_is_wrong(mock: Any) -> None:
    mock.script = after_tools(FOUR, lambda body: "Done.")
    agent = make_agent(mock, tools=[refund])
    paused = agent.run_sync("Refund them")
    with pytest.raises(DecisionError) as e:
        agent.resume_sync(paused, [approve("nosuch")])
    assert e.value.path == "decisions[0].tool_call_id"
    assert 'no pending call has id "nosuch"' in str(e.value)
    forged = parlance.Decision("c1", "approved", digest="sha256:" + "0" * 64)
    with pytest.raises(DecisionError) as e:
        agent.resume_sync(paused, [forged])
    assert e.value.path == "decisions[0].digest"
    with pytest.raises(DecisionError) as e:
        agent.resume_sync(paused, [edit("c1", {"order_id": "A-1", "amount": "ten"})])
    assert e.value.path == "decisions[0].arguments"
    assert "amount" in e.value.message
    with pytest.raises(DecisionError):
        agent.resume_sync(paused, [approve("c1"), approve("c1")])


def test_needs_approval_from_a_function_of_the_arguments(mock: Any) -> None:
    @tool(needs_approval=lambda args: args["amount"] > 100)
    def pay(amount: int) -> str:
        """Pays."""
        return f"paid {amount}"

    mock.script = after_tools(calls(("c1", "pay", {"amount": 50}), ("c2", "pay", {"amount": 500})), lambda b: "ok")
    paused = make_agent(mock, tools=[pay]).run_sync("pay")
    assert paused.status == "requires_approval"
    assert [p.tool_call_id for p in paused.pending] == ["c2"]
    assert text_of(result_of(paused, "c1")) == "paid 50"


DECISIONS: List[Dict[str, Any]] = json.loads((REPO / "testdata" / "paused" / "decisions.json").read_text())


def decided(d: Dict[str, Any], call_id: str) -> parlance.Decision:
    """The decision of testdata/paused/decisions.json, made with Python's helpers."""
    kind = d["decision"]
    if kind == "approved":
        return approve(call_id)
    if kind == "edited":
        return edit(call_id, d["arguments"])
    if kind == "rejected":
        return reject(call_id, d["reason"])
    return answer(call_id, d["content"])


@pytest.mark.parametrize("file", ["paused-by-rust.json", "paused-by-node.json"])
@pytest.mark.parametrize("case", DECISIONS, ids=[c["decision"]["decision"] for c in DECISIONS])
def test_a_run_paused_by_rust_or_node_resumes_in_python_with_each_decision(
    mock: Any, file: str, case: Dict[str, Any]
) -> None:
    ran.clear()
    stored = (REPO / "testdata" / "paused" / file).read_text()
    mock.script = lambda body: text("Done.")
    agent = make_agent(mock, tools=[refund])
    r = agent.resume_sync(stored, [decided(case["decision"], "call_1")])
    assert r.status == "completed" and r.id == json.loads(stored)["id"]
    result = result_of(r, "call_1")
    assert result.get("status", "ok") == case["status"]
    assert text_of(result) == case["text"]
    assert ran == case["ran"]
    # The model was sent the other language's part of the history.
    assert mock.requests[0]["messages"][0] == {"role": "user", "content": "Refund 20 EUR on A-1001"}


def test_a_run_paused_by_python_is_the_fixture_rust_resumes(mock: Any) -> None:
    mock.script = after_tools(calls(("call_1", "refund", {"order_id": "A-1001", "amount": 20})), lambda b: "x")
    paused = make_agent(mock, tools=[refund]).run_sync("Refund 20 EUR on A-1001", run_id="run_paused_by_python")
    written = paused.to_json(indent=True) + "\n"
    path = REPO / "testdata" / "paused" / "paused-by-python.json"
    if os.environ.get("PARLANCE_UPDATE_FIXTURES"):
        path.write_text(written)
    assert path.read_text() == written, f"{path} drifted: run with PARLANCE_UPDATE_FIXTURES=1 and commit"
