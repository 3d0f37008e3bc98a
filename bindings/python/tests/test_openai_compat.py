"""`parlance serve` speaks OpenAI's Chat Completions: the official `openai`
client (PyPI) runs a configured agent by its name, its tool running on the
server, answered and streamed in the API's own shapes, on a stored thread
with a header; its errors are the SDK's exceptions."""

from __future__ import annotations

from typing import Any, List, Tuple

import openai
import pytest
from mock_openai import after_tools, calls, error, text
from test_guide import OrdersTool, served  # noqa: F401  (the fixture)


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused-on-loopback", max_retries=0)


def test_the_official_client_runs_an_agent_by_name(served: Tuple[str, OrdersTool], mock: Any) -> None:  # noqa: F811
    url, tool = served
    mock.script = after_tools(calls(("c1", "get_order", {"order_id": "A-17"})), lambda b: "A-17 has shipped.")
    c = client(url)
    r = c.chat.completions.create(
        model="support",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is A-17?"}],
    )
    assert r.object == "chat.completion" and r.model == "support"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == "A-17 has shipped."
    assert r.choices[0].finish_reason == "stop"
    assert r.usage is not None and r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0
    assert tool.got == [{"path": "/orders", "args": {"order_id": "A-17"}}], "the tool ran on the server"
    extra: Any = r.model_extra
    assert extra["parlance"]["status"] == "completed" and extra["parlance"]["run_id"].startswith("run")
    # The client's system message reached the model after the agent's instructions.
    sent = [m["content"] for m in mock.requests[0]["messages"] if m["role"] == "system"]
    assert sent == ["You answer about orders.", "Be brief."], sent

    mock.script = after_tools(calls(("c2", "get_order", {"order_id": "A-18"})), lambda b: "A-18 is on its way.")
    chunks = list(
        c.chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "And A-18?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == "A-18 is on its way."
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices and ch.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert all(ch.object == "chat.completion.chunk" and ch.id == chunks[0].id for ch in chunks)


def test_a_thread_header_keeps_the_conversation(served: Tuple[str, OrdersTool], mock: Any) -> None:  # noqa: F811
    url, _ = served
    seen: List[int] = []

    def answer(body: Any) -> Any:
        seen.append(len(body["messages"]))
        return text(f"{len(seen)}")

    mock.script = answer
    c = client(url)
    thread = c.post("/threads", body={}, cast_to=object)
    assert isinstance(thread, dict)
    headers = {"x-parlance-thread": thread["id"]}
    first = c.chat.completions.create(
        model="support", messages=[{"role": "user", "content": "I am Ada."}], extra_headers=headers
    )
    second = c.chat.completions.create(
        model="support", messages=[{"role": "user", "content": "Who am I?"}], extra_headers=headers
    )
    assert (first.choices[0].message.content, second.choices[0].message.content) == ("1", "2")
    # The second request sent only its new message; the model read the thread.
    assert seen == [2, 4], seen
    extra: Any = second.model_extra
    assert extra["parlance"]["thread_id"] == thread["id"]


def test_errors_are_the_sdks_exceptions(served: Tuple[str, OrdersTool], mock: Any) -> None:  # noqa: F811
    url, _ = served
    c = client(url)
    with pytest.raises(openai.NotFoundError, match="the agents of this server: support"):
        c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi"}])
    with pytest.raises(openai.BadRequestError, match="a request's tools would never be called"):
        c.chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "Hi"}],
            tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        )
    with pytest.raises(openai.BadRequestError, match="the last message must be the user's"):
        c.chat.completions.create(model="support", messages=[{"role": "assistant", "content": "Hi"}])
    mock.script = lambda body: error(400, "the model is down")
    with pytest.raises(openai.UnprocessableEntityError, match="the run failed"):
        c.chat.completions.create(model="support", messages=[{"role": "user", "content": "Hi"}])


def test_the_responses_api_goes_on_from_a_previous_response(served: Tuple[str, OrdersTool], mock: Any) -> None:  # noqa: F811
    """`responses.create` answers with `output_text`; `previous_response_id`
    goes on in the run's thread (only the new input is sent); the SDK's
    `responses.stream()` assembles the streamed events."""
    url, tool = served
    mock.script = after_tools(calls(("c1", "get_order", {"order_id": "A-17"})), lambda b: "A-17 has shipped.")
    c = client(url)
    first = c.responses.create(model="support", input="Where is A-17?")
    assert first.output_text == "A-17 has shipped."
    assert first.id.startswith("run") and first.status == "completed"
    assert first.usage is not None and first.usage.total_tokens > 0
    assert tool.got == [{"path": "/orders", "args": {"order_id": "A-17"}}]

    mock.script = lambda body: text(f"{len(body['messages'])} messages")
    second = c.responses.create(model="support", input="Thanks!", previous_response_id=first.id)
    # instructions, user, call, result, answer, user: the thread's history.
    assert second.output_text == "6 messages", second.output_text
    assert second.previous_response_id == first.id

    with c.responses.stream(model="support", input="Streamed?", previous_response_id=second.id) as s:
        kinds = [e.type for e in s]
        final = s.get_final_response()
    assert final.output_text == "8 messages"
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed", kinds
    assert "response.output_text.delta" in kinds

    # store=False: stateless, the request's own items are the history.
    alone = c.responses.create(model="support", input="Hi", store=False)
    assert alone.output_text == "2 messages"
    with pytest.raises(openai.NotFoundError):
        c.responses.create(model="support", input="Hi", previous_response_id="run_nope")
    with pytest.raises(openai.BadRequestError, match="only the new user input"):
        c.responses.create(model="support", input="Hi", instructions="Be terse.")


def test_a_response_is_retrieved_and_its_stream_picked_up_again(
    served: Tuple[str, OrdersTool],  # noqa: F811
    mock: Any,
) -> None:
    """A client that loses a streamed response reads it again with the
    SDK's `responses.retrieve`: whole, and streamed from the start or after
    the last event it had (`starting_after`), live until it completes."""
    url, _ = served
    answer = "One two three four five six seven eight."
    mock.script = lambda body: text(answer, pace=0.05)
    c = client(url)
    seen: List[Any] = []
    with c.responses.create(model="support", input="Count.", stream=True) as s:
        for e in s:
            seen.append(e)
            if e.type == "response.output_text.delta" and len(seen) > 6:
                break
    rid = seen[0].response.id
    assert c.responses.retrieve(rid).status in ("in_progress", "completed")

    # Picked up after the last event this client had: the rest, in order.
    rest = list(c.responses.retrieve(rid, stream=True, starting_after=seen[-1].sequence_number))
    numbers = [e.sequence_number for e in seen + rest]
    assert numbers == list(range(len(numbers))), numbers
    text_seen = "".join(e.delta for e in seen + rest if e.type == "response.output_text.delta")
    assert text_seen == answer
    assert rest[-1].type == "response.completed" and rest[-1].response.output_text == answer

    # Once it ended: whole, and its stream again from the start.
    done = c.responses.retrieve(rid)
    assert done.status == "completed" and done.output_text == answer
    again = list(c.responses.retrieve(rid, stream=True))
    assert again[0].type == "response.created" and again[-1].type == "response.completed"
    assert again[-1].response.output_text == answer
    with pytest.raises(openai.NotFoundError):
        c.responses.retrieve("run_nope")
