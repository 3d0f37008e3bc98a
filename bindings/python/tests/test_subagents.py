"""Agents that call agents (``Agent.as_tool``): in memory, the caller's
model reads only the sub-agent's output and what it spent rolls up; on a
store (a real SQLite file, and PostgreSQL), a sub-agent's approval is
listed in its caller's place, decided through the caller by a fresh store
and fresh agents, and both runs finish; a forged decision runs nothing."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest

from parlance import Agent, AgentTool, ConfigError, DecisionError, Store, ToolContext, approve, tool
from parlance.testing import FunctionModel, RequestInfo

refunds: List[int] = []


@tool(needs_approval=True)
def refund(amount: int) -> str:
    """Refund the order."""
    refunds.append(amount)
    return f"refunded {amount}"


def call(id: str, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {"content": [{"type": "tool_call", "tool_call": {"id": id, "name": name, "arguments": arguments}}]}


def tool_result(messages: Any) -> Any:
    """The first tool result of a list of canonical messages."""
    return next(b["tool_result"] for m in messages for b in m["content"] if b["type"] == "tool_result")


def answered(messages: List[Dict[str, Any]]) -> bool:
    return any(m["role"] == "tool" for m in messages)


def researcher() -> Agent[str]:
    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        if not answered(messages):
            return call("r1", "refund", {"amount": 20})
        return "Refunded 20 on A-7."

    return Agent(FunctionModel(answer), name="researcher", instructions="You refund orders.", tools=[refund])


def support(child: Agent[str], seen: List[List[Dict[str, Any]]]) -> Agent[str]:
    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        seen.append(messages)
        if not answered(messages):
            return call("p1", "researcher", {"input": "Refund 20 on order A-7"})
        return "Your refund is done."

    return Agent(FunctionModel(answer), name="support", tools=[child.as_tool(description="Refunds orders.")])


def test_the_caller_reads_only_the_sub_agents_output_and_its_usage_rolls_up() -> None:
    sent: List[List[Dict[str, Any]]] = []

    def child_answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        sent.append(messages)
        usage = {"input_tokens": 100, "output_tokens": 1}
        return {"content": [{"type": "text", "text": "Order 7 shipped."}], "usage": usage}

    child = Agent(FunctionModel(child_answer), name="researcher", instructions="You look orders up.")
    seen: List[List[Dict[str, Any]]] = []
    parent = support(child, seen)
    r = parent.run_sync("Where is order 7?")
    assert r.status == "completed", r.error
    assert r.text == "Your refund is done."
    result = seen[1][-1]["content"][0]["tool_result"]
    assert result["content"] == [{"type": "text", "text": "Order 7 shipped."}]
    assert [m["role"] for m in sent[0]] == ["system", "user"]
    assert sent[0][1]["content"][0]["text"] == "Refund 20 on order A-7"
    assert r.usage.input_tokens == 100
    tool = parent.tools[0]
    assert isinstance(tool, AgentTool) and tool.name == "researcher"
    assert tool.schema["required"] == ["input"]
    assert tool.spec["description"] == "Refunds orders."


def test_a_sub_agent_cannot_wait_for_approval_without_a_store() -> None:
    r = support(researcher(), []).run_sync("Refund order A-7")
    result = tool_result(r.messages)
    assert result["status"] == "tool_failed"
    assert "waits for a decision on refund" in result["content"][0]["text"]


def test_as_tool_needs_a_name() -> None:
    with pytest.raises(ConfigError, match="as_tool: give the tool a name"):
        Agent(FunctionModel(lambda m, i: "hi")).as_tool()


def test_a_sub_agents_approval_is_decided_through_its_caller(url: str) -> None:
    refunds.clear()

    async def main() -> Any:
        store = Store(url)
        thread = await store.create_thread()
        paused = await support(researcher(), []).run("Refund order A-7", store=store, thread_id=thread)
        assert paused.status == "requires_approval", paused.error
        [request] = paused.pending
        assert (request.name, request.tool_call_id) == ("refund", "r1")
        assert request.run_id is not None and request.run_id != paused.id
        child_run = await store.run(request.run_id)
        assert child_run["status"] == "requires_approval"
        # Another process: a fresh store, fresh agents, the paused JSON.
        seen: List[List[Dict[str, Any]]] = []
        done = await support(researcher(), seen).resume(paused.to_json(), [approve(request)], store=Store(url))
        return done, seen, await store.run(request.run_id)

    done, seen, child = asyncio.run(main())
    assert done.status == "completed", done.error
    assert done.text == "Your refund is done."
    assert refunds == [20]
    assert child["status"] == "completed"
    result = seen[0][-1]["content"][0]["tool_result"]
    assert result["content"] == [{"type": "text", "text": "Refunded 20 on A-7."}]


def test_a_forged_decision_on_a_sub_agents_call_runs_nothing(url: str) -> None:
    refunds.clear()
    store = Store(url)
    thread = store.create_thread_sync()
    paused = support(researcher(), []).run_sync("Refund order A-7", store=store, thread_id=thread)
    forged = {"tool_call_id": "r1", "digest": "sha256:00", "decision": "approved"}
    with pytest.raises(DecisionError):
        support(researcher(), []).resume_sync(paused, [forged], store=store)
    assert refunds == []
    assert store.run_sync(paused.pending[0].run_id or "")["status"] == "requires_approval"


def test_the_sub_agent_gets_the_callers_deps() -> None:
    @tool
    def whoami(ctx: ToolContext) -> str:
        """Who asks."""
        return str(ctx.deps["name"])

    def child_answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        if not answered(messages):
            return call("w1", "whoami", {})
        return messages[-1]["content"][0]["tool_result"]["content"][0]["text"]

    child = Agent(FunctionModel(child_answer), name="researcher", tools=[whoami])
    r = support(child, []).run_sync("who?", deps={"name": "ada"})
    assert tool_result(r.messages)["content"] == [{"type": "text", "text": "ada"}]


def billing(seen: List[List[Dict[str, Any]]]) -> Agent[str]:
    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        seen.append(messages)
        return "Billing here." if len(seen) == 1 else "Still billing."

    return Agent(FunctionModel(answer), name="billing", instructions="You handle billing.", description="Refunds.")


def front_desk(to: Agent[str], asked: List[int]) -> Agent[str]:
    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        asked.append(1)
        assert [t["name"] for t in info.tools] == ["transfer_to_billing"]
        assert info.tools[0]["description"] == "Hand the conversation to the billing agent: Refunds."
        return call("h1", "transfer_to_billing", {})

    return Agent(FunctionModel(answer), name="support", handoffs=[to])


def test_a_handoff_gives_the_run_and_the_next_turns_to_the_other_agent() -> None:
    seen: List[List[Dict[str, Any]]] = []
    asked: List[int] = []
    support_agent = front_desk(billing(seen), asked)
    first = support_agent.run_sync("A refund, please")
    assert first.text == "Billing here."
    assert first.handoff == "billing"
    assert seen[0][0] == {"role": "system", "content": [{"type": "text", "text": "You handle billing."}]}
    tool_message: Any = next(m for m in first.messages if m["role"] == "tool")
    assert tool_message["metadata"]["handoff"] == {"from": "support", "to": "billing"}
    second = support_agent.run_sync("And the invoice?", turns=[first])
    assert second.text == "Still billing."
    assert second.handoff is None
    assert asked == [1], "support was asked once"


def test_a_handoff_on_a_store_keeps_the_thread_with_the_other_agent(url: str) -> None:
    store = Store(url)
    thread = store.create_thread_sync()
    seen: List[List[Dict[str, Any]]] = []
    asked: List[int] = []
    first = front_desk(billing(seen), asked).run_sync("A refund, please", store=store, thread_id=thread)
    assert first.handoff == "billing"
    assert store.run_sync(first.id or "")["handoff"] == "billing"
    # A fresh agent asked again: billing answers.
    second = front_desk(billing(seen), asked).run_sync("And the invoice?", store=store, thread_id=thread)
    assert second.text == "Still billing."
    assert asked == [1]


def test_handoffs_are_agents() -> None:
    with pytest.raises(ConfigError, match=r"handoffs\[0\]: expected an Agent, got str"):
        Agent(FunctionModel(lambda m, i: "hi"), handoffs=["billing"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"handoffs\[0\]: the agent has no name"):
        Agent(FunctionModel(lambda m, i: "hi"), handoffs=[Agent(FunctionModel(lambda m, i: "hi"))])
