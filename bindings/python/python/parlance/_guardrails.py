"""Guardrails: functions the engine runs at three points of a run, each
deciding what happens next.

- ``Guardrail.input``: a new run's input, before it is stored or sent.
  ``Verdict.block`` ends the run; ``Verdict.replace(text)`` rewrites it
  (the text of the last user message, or a list of message dicts).
- ``Guardrail.tool_call``: each call with valid arguments, before it waits
  or runs. ``block`` ends the run; ``replace(arguments)`` runs it with
  other arguments (checked again); ``retry(why)`` does not run it (the
  model reads why); ``require_approval()`` makes it wait in the inbox.
- ``Guardrail.output``: the final answer, before it leaves the run.
  ``block`` ends the run; ``replace(answer)`` rewrites it; ``retry(why)``
  sends it back to the model (within ``output_retries``).

A blocked run raises ``RunError`` with code ``blocked``; its message is the
guardrail's message for the user (also the run's last message). Each
outcome but ``allow`` is recorded in the message's ``metadata["guardrails"]``
with the ``reason`` (for operators, never sent to a model). While a run
streams, an agent with an output guardrail holds the answer's text until
the guardrail lets it through (``output_hold="answer"``, or ``"sentence"``).

    @Guardrail.output
    def no_passwords(check: GuardCheck) -> Verdict:
        if "password" in check.text:
            return Verdict.block("I can't share that.", reason="password in answer")
        return Verdict.allow()

    agent = Agent("openai:gpt-4o", guardrails=[no_passwords])
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Literal, Optional, Union, overload

from . import _core
from ._errors import ConfigError

GuardPoint = Literal["input", "tool_call", "output"]


@dataclass(frozen=True)
class Verdict:
    """What a guardrail decides (``None`` from a guardrail is ``allow``)."""

    action: Literal["allow", "block", "replace", "retry", "require_approval"]
    message: Optional[str] = None
    reason: Optional[str] = None
    value: Any = None

    @staticmethod
    def allow() -> Verdict:
        """Goes on unchanged."""
        return Verdict("allow")

    @staticmethod
    def block(message: str, *, reason: Optional[str] = None) -> Verdict:
        """Ends the run: ``message`` for the user, ``reason`` for operators."""
        return Verdict("block", message=message, reason=reason)

    @staticmethod
    def replace(value: Any, *, reason: Optional[str] = None) -> Verdict:
        """Goes on with ``value`` in place of what was checked."""
        return Verdict("replace", value=value, reason=reason)

    @staticmethod
    def retry(message: str) -> Verdict:
        """Tells the model ``message`` and lets it try again."""
        return Verdict("retry", message=message)

    @staticmethod
    def require_approval(*, reason: Optional[str] = None) -> Verdict:
        """The call waits for a human's decision (tool calls only)."""
        return Verdict("require_approval", reason=reason)

    def _json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"action": self.action}
        if self.action in ("block", "retry"):
            out["message"] = self.message
        if self.action == "replace":
            out["value"] = self.value
        if self.reason is not None and self.action != "retry":
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class GuardCheck:
    """What a guardrail is shown.

    ``text``: the input's text, the answer's text, or a call's arguments as
    JSON text. ``messages``: the input messages or the answer (canonical
    dicts). ``call``: the tool call (``{"id", "name", "arguments"}``).
    ``value``: the call's arguments, the structured answer (or the
    answer's text). ``partial``: the answer so far, while a streamed answer
    is checked sentence by sentence (only ``allow`` lets it out early).
    """

    point: GuardPoint
    text: str
    value: Any
    messages: List[Dict[str, Any]] = field(default_factory=list)
    call: Optional[Dict[str, Any]] = None
    partial: bool = False
    thread_id: Optional[str] = None


Check = Callable[[GuardCheck], Union[Optional[Verdict], Awaitable[Optional[Verdict]]]]


def _answer(name: str, v: Any) -> Optional[Dict[str, Any]]:
    if v is None:
        return None
    if not isinstance(v, Verdict):
        raise TypeError(f"guardrail {name} returned {type(v).__name__}: return a Verdict (or None to allow)")
    return v._json()


def _check(d: Dict[str, Any]) -> GuardCheck:
    return GuardCheck(
        point=d["point"],
        text=d["text"],
        value=d.get("value"),
        messages=d.get("messages") or [],
        call=d.get("call"),
        partial=bool(d.get("partial")),
        thread_id=d.get("thread_id"),
    )


class Guardrail:
    """``Guardrail(point, check)``: ``check(GuardCheck)`` (``def`` or
    ``async def``) returns a ``Verdict`` or ``None`` (allow). As decorators:
    ``@Guardrail.input``, ``@Guardrail.tool_call``, ``@Guardrail.output``
    (or ``@Guardrail.output(name="...")``). Guardrails of one point run in
    the order given, each seeing the last one's replacement; what one
    raises fails the run with ``RunError`` code ``guardrail_failed``."""

    def __init__(self, point: GuardPoint, check: Check, *, name: Optional[str] = None) -> None:
        if not callable(check):
            raise ConfigError(f"Guardrail: expected a function, got {type(check).__name__}")
        if point not in ("input", "tool_call", "output"):
            raise ConfigError(f"guardrail point: expected one of input, tool_call, output, got {point!r}")
        self.point: GuardPoint = point
        self.name: str = name if name is not None else getattr(check, "__name__", "guardrail")
        self.check = check
        label = self.name
        if inspect.iscoroutinefunction(check):

            async def judged(d: Dict[str, Any]) -> Optional[Dict[str, Any]]:
                return _answer(label, await check(_check(d)))

            self._core = _core.Guardrail(self.name, point, judged, is_async=True)
        else:

            def judged_sync(d: Dict[str, Any]) -> Optional[Dict[str, Any]]:
                return _answer(label, check(_check(d)))

            self._core = _core.Guardrail(self.name, point, judged_sync, is_async=False)

    @overload
    @classmethod
    def input(cls, check: Check, *, name: Optional[str] = None) -> Guardrail: ...
    @overload
    @classmethod
    def input(cls, check: None = None, *, name: Optional[str] = None) -> Callable[[Check], Guardrail]: ...
    @classmethod
    def input(
        cls, check: Optional[Check] = None, *, name: Optional[str] = None
    ) -> Union[Guardrail, Callable[[Check], Guardrail]]:
        """A guardrail on a new run's input."""
        return cls._at("input", check, name)

    @overload
    @classmethod
    def tool_call(cls, check: Check, *, name: Optional[str] = None) -> Guardrail: ...
    @overload
    @classmethod
    def tool_call(cls, check: None = None, *, name: Optional[str] = None) -> Callable[[Check], Guardrail]: ...
    @classmethod
    def tool_call(
        cls, check: Optional[Check] = None, *, name: Optional[str] = None
    ) -> Union[Guardrail, Callable[[Check], Guardrail]]:
        """A guardrail on each tool call with valid arguments."""
        return cls._at("tool_call", check, name)

    @overload
    @classmethod
    def output(cls, check: Check, *, name: Optional[str] = None) -> Guardrail: ...
    @overload
    @classmethod
    def output(cls, check: None = None, *, name: Optional[str] = None) -> Callable[[Check], Guardrail]: ...
    @classmethod
    def output(
        cls, check: Optional[Check] = None, *, name: Optional[str] = None
    ) -> Union[Guardrail, Callable[[Check], Guardrail]]:
        """A guardrail on the final answer."""
        return cls._at("output", check, name)

    @classmethod
    def _at(
        cls, point: GuardPoint, check: Optional[Check], name: Optional[str]
    ) -> Union[Guardrail, Callable[[Check], Guardrail]]:
        if check is not None:
            return cls(point, check, name=name)
        return lambda f: cls(point, f, name=name)

    def __repr__(self) -> str:
        return f"Guardrail({self.point!r}, name={self.name!r})"
