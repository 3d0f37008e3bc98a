"""Wrong arguments never reach the function: what pydantic refuses on top
of the engine's schema (validators, constraints JSON Schema cannot say)
goes back to the model as invalid arguments, in the engine's form, and
counts against the budget; a ``Field(...)`` default keeps its description
and constraint; a returned ``ToolError`` is an error like a raised one."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Dict, List

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls, tool_messages
from pydantic import AfterValidator, BaseModel, Field, field_validator, model_validator

from parlance import RunError, ToolError, tool


class Guest(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v


class Window(BaseModel):
    start: int
    end: int

    @model_validator(mode="after")
    def ordered(self) -> Window:
        if self.end < self.start:
            raise ValueError("end must not be before start")
        return self


def even(n: int) -> int:
    if n % 2:
        raise ValueError(f"must be even, got {n}")
    return n


def run(agent: Any, prompt: str, is_async: bool) -> Any:
    """The run, awaited on a loop (async tools need one) or synchronously."""
    if not is_async:
        return agent.run_sync(prompt)

    async def main() -> Any:
        return await agent.run(prompt)

    return asyncio.run(main())


def results(r: Any) -> List[Any]:
    return [
        (
            b["tool_result"]["tool_call_id"],
            b["tool_result"].get("status", "ok"),
            b["tool_result"]["content"][0].get("text"),
        )
        for m in r.messages
        for b in m["content"]
        if b["type"] == "tool_result"
    ]


def booking_tool(is_async: bool, seen: List[Any]) -> Any:
    if is_async:

        @tool
        async def book(
            room: str, window: Window, guests: List[Guest], chairs: Annotated[int, AfterValidator(even)]
        ) -> str:
            """Book a room."""
            seen.append((room, window, guests, chairs))
            return "booked"

        return book

    @tool  # type: ignore[no-redef]
    def book(room: str, window: Window, guests: List[Guest], chairs: Annotated[int, AfterValidator(even)]) -> str:
        """Book a room."""
        seen.append((room, window, guests, chairs))
        return "booked"

    return book


GOOD = {"room": "A", "window": {"start": 9, "end": 10}, "guests": [{"name": "Ada"}], "chairs": 2}


@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
def test_what_pydantic_refuses_is_invalid_arguments_in_the_engines_form(mock: Any, is_async: bool) -> None:
    seen: List[Any] = []
    book = booking_tool(is_async, seen)
    mock.script = after_tools(
        calls(
            ("c1", "book", GOOD),
            ("c2", "book", {**GOOD, "window": {"start": 10, "end": 9}}),
            ("c3", "book", {**GOOD, "guests": [{"name": "Ada"}, {"name": " "}], "chairs": 3}),
        ),
        lambda body: "done",
    )
    agent = make_agent(mock, tools=[book], max_invalid_arguments=5, on_tool_exception="fail")
    r = run(agent, "book", is_async)
    assert r.status == "completed"
    assert results(r) == [
        ("c1", "ok", "booked"),
        ("c2", "invalid_arguments", "Invalid arguments for book:\nwindow: end must not be before start"),
        (
            "c3",
            "invalid_arguments",
            "Invalid arguments for book:\nguests[1].name: must not be blank\nchairs: must be even, got 3",
        ),
    ]
    assert len(seen) == 1, "refused arguments never reached the function"
    assert [m["content"] for m in tool_messages(mock.requests[1])] == [t for _, _, t in results(r)]


def test_what_pydantic_refuses_counts_against_the_budget(mock: Any) -> None:
    seen: List[Any] = []
    book = booking_tool(False, seen)
    mock.script = after_tools(
        calls(
            ("c1", "book", {**GOOD, "chairs": 1}),
            ("c2", "book", {**GOOD, "chairs": 5}),
        ),
        lambda body: "never",
    )
    with pytest.raises(RunError) as e:
        make_agent(mock, tools=[book], max_invalid_arguments=1).run_sync("book")
    assert e.value.code == "invalid_arguments_budget"
    assert (
        str(e.value)
        == "run failed (invalid_arguments_budget): the model sent invalid arguments 2 times, more than the 1 allowed"
    )
    assert len(mock.requests) == 1 and seen == []


def test_a_field_default_keeps_its_description_and_constraint(mock: Any) -> None:
    seen: List[Dict[str, Any]] = []

    @tool
    def tag(code: str = Field(..., description="Short code.", max_length=5), note: str = Field("none")) -> str:
        """Tags an order."""
        seen.append({"code": code, "note": note})
        return "tagged"

    assert tag.schema["properties"]["code"] == {"description": "Short code.", "maxLength": 5, "type": "string"}
    assert tag.schema["required"] == ["code"]
    mock.script = after_tools(
        calls(("c1", "tag", {}), ("c2", "tag", {"code": "TOOLONG"}), ("c3", "tag", {"code": "AB"})),
        lambda body: "done",
    )
    r = make_agent(mock, tools=[tag]).run_sync("tag")
    assert results(r) == [
        ("c1", "invalid_arguments", "Invalid arguments for tag:\ncode: required property missing"),
        (
            "c2",
            "invalid_arguments",
            'Invalid arguments for tag:\ncode: must be at most 5 characters long, got "TOOLONG"',
        ),
        ("c3", "ok", "tagged"),
    ]
    assert seen == [{"code": "AB", "note": "none"}], "never a FieldInfo"


def test_a_docstring_describes_a_field_default_without_one() -> None:
    @tool
    def tag(code: str = Field(..., max_length=5)) -> str:
        """Tags an order.

        Args:
            code: Short code.
        """
        return code

    assert tag.schema["properties"]["code"] == {"description": "Short code.", "maxLength": 5, "type": "string"}


def test_numpy_parameters_sharing_a_description() -> None:
    @tool
    def move(x: int, y: int, speed: float = 1.0) -> str:
        """Moves the arm.

        Parameters
        ----------
        x, y : int
            Where to, in millimetres.
        speed : float
            How fast.
        """
        return "moved"

    props = move.schema["properties"]
    assert props["x"]["description"] == "Where to, in millimetres."
    assert props["y"]["description"] == "Where to, in millimetres."
    assert props["speed"]["description"] == "How fast."


@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
def test_a_returned_tool_error_is_an_error_for_the_model(mock: Any, is_async: bool) -> None:
    if is_async:

        @tool
        async def lookup(order_id: str) -> Any:
            """Looks up an order."""
            return ToolError(f"no order {order_id}")

    else:

        @tool
        def lookup(order_id: str) -> Any:
            """Looks up an order."""
            return ToolError(f"no order {order_id}")

    mock.script = after_tools(calls(("c1", "lookup", {"order_id": "A-9"})), lambda body: "sorry")
    agent = make_agent(mock, tools=[lookup], on_tool_exception="fail")
    r = run(agent, "find", is_async)
    assert r.status == "completed"
    assert results(r) == [("c1", "error", "no order A-9")]
    assert [m["content"] for m in tool_messages(mock.requests[1])] == ["no order A-9"]


def test_pydantic_checks_a_call_when_it_runs_after_its_approval(mock: Any) -> None:
    from parlance import approve, edit

    ran: List[int] = []

    @tool(needs_approval=True)
    def seat(chairs: Annotated[int, AfterValidator(even)]) -> str:
        """Seats people."""
        ran.append(chairs)
        return f"seated {chairs}"

    mock.script = after_tools(calls(("c1", "seat", {"chairs": 3}), ("c2", "seat", {"chairs": 4})), lambda body: "done")
    agent = make_agent(mock, tools=[seat])
    paused = agent.run_sync("seat")
    assert paused.status == "requires_approval", "the check has not run yet: both wait"
    assert [p.tool_call_id for p in paused.pending] == ["c1", "c2"]
    r = agent.resume_sync(paused, [approve("c1"), edit("c2", {"chairs": 5})])
    assert results(r) == [
        ("c1", "invalid_arguments", "Invalid arguments for seat:\nchairs: must be even, got 3"),
        ("c2", "invalid_arguments", "Invalid arguments for seat:\nchairs: must be even, got 5"),
    ]
    assert ran == []
