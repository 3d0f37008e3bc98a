"""Models for your own tests: no network, no key, the same answers every time.

- ``TestModel``: calls every tool it is offered (or ``call_tools``) with
  arguments made from the tool's JSON Schema, then answers (as Pydantic
  AI's ``TestModel``).
- ``FunctionModel``: answers with your function of the messages and the
  request's tools and settings.
- ``ScriptedModel``: plays back a list of messages and keeps every request.
- ``Recorder`` / ``Replay``: a real model's exchanges written to a cassette
  file (JSON Lines, the canonical format), then served from it offline,
  each request checked against the recorded one.

The models are the Rust core's (``parlance::testing``): a cassette recorded
from Python replays in TypeScript and Rust, and the other way round.

    from parlance import Agent
    from parlance.testing import TestModel

    agent = Agent(TestModel(), tools=[get_order])
    r = agent.run_sync("Where is my order?")   # get_order called with made-up, schema-valid arguments

A model of your own is a subclass of ``parlance.Model`` with a ``request``
method; see ``parlance.Model`` and docs/guide/testing.md.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Union

from ._core import Model
from ._core import Recorder as Recorder
from ._core import Replay as Replay
from ._core import ScriptedModel as ScriptedModel
from ._core import TestModel as TestModel

__all__ = ["FunctionModel", "Recorder", "Replay", "RequestInfo", "ScriptedModel", "TestModel"]

# pytest would collect `TestModel` as a test class.
TestModel.__test__ = False  # type: ignore[attr-defined]

Answer = Union[Mapping[str, Any], str]


@dataclass(frozen=True)
class RequestInfo:
    """What a ``FunctionModel``'s function is told besides the messages:
    the tools offered (canonical tool specs: ``name``, ``description``,
    ``input_schema``) and the request's settings (``max_tokens``,
    ``tool_choice``, ``output_schema``...; only those set)."""

    tools: List[Dict[str, Any]] = field(default_factory=list)
    settings: Dict[str, Any] = field(default_factory=dict)


Function = Callable[[List[Dict[str, Any]], RequestInfo], Union[Answer, Awaitable[Answer]]]


class FunctionModel(Model):
    """A model that answers with ``function(messages, info)``: the
    conversation as canonical message dicts, and a ``RequestInfo`` with the
    tools and settings. It returns the assistant's message (a canonical
    message dict, ``role`` optional) or a string (one text block); an
    ``async def`` works too. What it raises fails the run with a model
    error naming the exception.

        def answer(messages, info):
            if not any(m["role"] == "tool" for m in messages):
                return {"content": [{"type": "tool_call", "tool_call": {
                    "id": "c1", "name": "get_order", "arguments": {"order_id": "A-1"}}}]}
            return "It has shipped."

        agent = Agent(FunctionModel(answer), tools=[get_order])
    """

    provider = "function"
    model_id = "function"

    def __init__(self, function: Function, *, model_id: Optional[str] = None) -> None:
        if not callable(function):
            raise TypeError(
                f"FunctionModel: expected a function (messages, info) -> message, got {type(function).__name__}"
            )
        self.function = function
        self.model_id = model_id or getattr(function, "__name__", None) or "function"
        if inspect.iscoroutinefunction(function):
            self.request = self._request_async  # type: ignore[method-assign, assignment]

    def request(
        self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
    ) -> Answer:
        """Calls the function (a ``def``)."""
        return self.function(messages, RequestInfo(tools, settings))  # type: ignore[return-value]

    async def _request_async(
        self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
    ) -> Answer:
        return await self.function(messages, RequestInfo(tools, settings))  # type: ignore[no-any-return, misc]

    def __repr__(self) -> str:
        return f"FunctionModel({self.function!r})"
