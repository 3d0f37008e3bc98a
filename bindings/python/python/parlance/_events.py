"""What a streamed run reports, in order; the last event is
``RunCompleted`` (a failed run raises ``RunError`` in its place)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Union

from ._core import ApprovalRequest, Response


@dataclass(frozen=True)
class TextDelta:
    """More answer text."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """More reasoning text."""

    text: str


@dataclass(frozen=True)
class MessageCompleted:
    """A message was added to the run (assistant or tool), as a canonical dict."""

    message: Dict[str, Any]


@dataclass(frozen=True)
class ToolCallStarted:
    """A tool call started running (its arguments were valid)."""

    call_id: str
    name: str


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call ended: ``status`` (``ok``, ``error``, ``tool_failed``,
    ``timeout``, ``invalid_arguments``...), ``elapsed`` in seconds."""

    call_id: str
    name: str
    status: str
    elapsed: float


@dataclass(frozen=True)
class ApprovalRequired:
    """The run stopped to wait for these decisions."""

    requests: List[ApprovalRequest]


@dataclass(frozen=True)
class ContextCompacted:
    """The context policy cut the oldest turns of what is sent: ``strategy``
    (``compact`` or ``drop_oldest``), the number of the thread's first
    messages the record stands for, and the context's estimated size
    before and after, in tokens. The record follows as a
    :class:`MessageCompleted`."""

    strategy: str
    replaces: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class RunCompleted:
    """The run ended; always the last event."""

    response: Response[Any]


Event = Union[
    TextDelta,
    ThinkingDelta,
    MessageCompleted,
    ToolCallStarted,
    ToolCallFinished,
    ApprovalRequired,
    ContextCompacted,
    RunCompleted,
]
