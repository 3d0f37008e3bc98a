"""`parlance serve` speaks A2A (protocol 1.0, JSON-RPC): the official
`a2a-sdk` client (PyPI) reads an agent's card, sends it messages streamed
and not, goes on in a context, answers a task that is `input-required` (a
call waiting for approval), reads a task back, follows it again with
`SubscribeToTask`; unknown and foreign tasks, cancelling and a bad token
are refused in A2A's own errors."""

from __future__ import annotations

from typing import Any, List

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from mock_openai import calls, text
from serve_support import TOKEN, support_served  # noqa: F401  (the fixture)


def ask(content: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=f"m-{content}", parts=[Part(text=content)])
    if task_id:
        message.task_id = task_id
    if context_id:
        message.context_id = context_id
    return SendMessageRequest(message=message)


async def collect(client: Any, request: SendMessageRequest) -> List[StreamResponse]:
    return [event async for event in client.send_message(request)]


def final_status(events: List[StreamResponse]) -> Any:
    updates = [e.status_update for e in events if e.HasField("status_update")]
    if updates:
        return updates[-1].status
    return events[-1].task.status


def answer_text(events: List[StreamResponse]) -> str:
    return "".join(p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts)


def test_an_a2a_client_talks_to_an_agent_and_answers_input_required(
    support_served: Any,  # noqa: F811
    mock: Any,
) -> None:
    url, tool, _ = support_served

    async def main() -> None:
        http = httpx.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30)
        card = await A2ACardResolver(http, f"{url}/a2a/support").get_agent_card()
        client = await create_client(card, client_config=ClientConfig(httpx_client=http))
        assert card.name == "support" and card.capabilities.streaming
        assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
        assert card.supported_interfaces[0].url == f"{url}/a2a/support"

        # Streamed: the task, the answer as artifact chunks, completed.
        mock.script = lambda b: (
            calls(("c1", "get_order", {"order_id": "A-17"}))
            if b["messages"][-1]["role"] == "user"
            else text("A-17 has shipped.")
        )
        events = await collect(client, ask("Where is A-17?"))
        assert events[0].HasField("task")
        task = events[0].task
        assert task.id.startswith("run_") and task.context_id.startswith("thr_")
        assert final_status(events).state == TaskState.TASK_STATE_COMPLETED
        assert answer_text(events) == "A-17 has shipped."
        assert tool.got == [{"order_id": "A-17"}], "the tool ran on the server"
        calls_seen = [
            MessageToDict(p.data)
            for e in events
            if e.HasField("status_update")
            for p in e.status_update.status.message.parts
            if p.HasField("data")
        ]
        assert any("tool_call" in c for c in calls_seen) and any("tool_result" in c for c in calls_seen)

        # A call that waits for approval: input-required, then answered.
        mock.script = lambda b: (
            calls(("c2", "refund", {"amount": 40})) if b["messages"][-1]["role"] == "user" else text("Refunded 40.")
        )
        events = await collect(client, ask("Refund 40", context_id=task.context_id))
        status = final_status(events)
        assert status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        waiting = events[0].task
        pending = next(MessageToDict(p.data)["pending"] for p in status.message.parts if p.HasField("data"))
        assert pending[0]["name"] == "refund" and pending[0]["digest"].startswith("hmac-sha256:")
        assert len(tool.got) == 1, "nothing ran before the decision"
        events = await collect(client, ask("approve", task_id=waiting.id, context_id=waiting.context_id))
        assert final_status(events).state == TaskState.TASK_STATE_COMPLETED
        assert answer_text(events) == "Refunded 40."
        assert tool.got[-1] == {"amount": 40}
        user_turns = [m for m in mock.requests[-1]["messages"] if m["role"] == "user"]
        assert len(user_turns) == 2, "the context kept the conversation"

        # Read back, and followed again from the store (a reconnect).
        got = await client.get_task(GetTaskRequest(id=waiting.id))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED
        assert got.artifacts[0].parts[0].text == "Refunded 40."
        assert got.history[0].role == Role.ROLE_USER
        again = [e async for e in client.subscribe(SubscribeToTaskRequest(id=waiting.id))]
        assert final_status(again).state == TaskState.TASK_STATE_COMPLETED
        assert answer_text(again) == "Refunded 40."

        # Refused in A2A's terms: a task that is not there, cancelling.
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="run_nope"))
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=waiting.id))

        # Followed mid-answer from a second connection (a reconnect while
        # the run goes on): the answer whole, then completed.
        mock.script = lambda b: text("Counting: one two three four five six.", pace=0.05)
        stream = client.send_message(ask("Count."))
        first = await stream.__anext__()
        follow = [e async for e in client.subscribe(SubscribeToTaskRequest(id=first.task.id))]
        assert final_status(follow).state == TaskState.TASK_STATE_COMPLETED
        assert answer_text(follow) == "Counting: one two three four five six."
        rest = [e async for e in stream]
        assert answer_text(rest) == "Counting: one two three four five six."

        # A malformed request: JSON-RPC's own errors.
        raw = await http.post(f"{url}/a2a/support", json={"method": "SendMessage", "id": 1})
        assert raw.json()["error"]["code"] == -32600
        raw = await http.post(f"{url}/a2a/support", json={"jsonrpc": "2.0", "method": "Dance", "id": 2})
        assert raw.json()["error"]["code"] == -32601
        raw = await http.post(
            f"{url}/a2a/support", json={"jsonrpc": "2.0", "method": "SendMessage", "id": 3, "params": {}}
        )
        assert raw.json()["error"] == {"code": -32602, "message": "message: required"}

        # Not streamed: the task, whole.
        plain = await create_client(
            f"{url}/a2a/support", client_config=ClientConfig(httpx_client=http, streaming=False)
        )
        mock.script = lambda b: text("Hello.")
        events = await collect(plain, ask("Hi"))
        assert len(events) == 1 and events[0].task.status.state == TaskState.TASK_STATE_COMPLETED
        assert events[0].task.artifacts[0].parts[0].text == "Hello."

        # Another caller's task is not found; a bad token gets no card.
        bob = httpx.AsyncClient(headers={"authorization": "Bearer tok-bob-0123456789"})
        theirs = await create_client(f"{url}/a2a/support", client_config=ClientConfig(httpx_client=bob))
        with pytest.raises(TaskNotFoundError):
            await theirs.get_task(GetTaskRequest(id=waiting.id))
        stranger = httpx.AsyncClient(headers={"authorization": "Bearer nope"})
        with pytest.raises((A2AClientError, httpx.HTTPStatusError)):
            await create_client(f"{url}/a2a/support", client_config=ClientConfig(httpx_client=stranger))
        for c in (http, bob, stranger):
            await c.aclose()

    anyio.run(main)
