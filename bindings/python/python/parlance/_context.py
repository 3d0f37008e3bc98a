"""Context policies: what a run does once its thread outgrows the model's
window.

Before each model request the run sizes what it sends (the tokens the
provider reported for the last answer, plus an estimate of what was added).
Past ``trigger`` of the window (default 0.8):

- ``ContextPolicy.fail()``: the run raises ``RunError`` ``context_too_long``
  before the request;
- ``ContextPolicy.drop_oldest()``: the oldest turns are left out of what is
  sent, down to ``keep`` of the window (default 0.25);
- ``ContextPolicy.compact()``: they are summarized by a model (the agent's,
  or ``model=``) and the summary is sent in their place.

The thread keeps every message; the cut is one stored message whose
``metadata["compaction"]`` names how many of the thread's first messages
it stands for, so the next run starts from it. A cut never separates a
tool call from its result. The window comes from the price table (or
``window=``); without one, the policy acts when the provider answers
``context_too_long``, then asks again once.

    agent = Agent(
        "openai:gpt-4o",
        context=ContextPolicy.compact(model="openai:gpt-4o-mini"),
    )
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Literal, Optional, Union

if TYPE_CHECKING:
    from ._core import Model

Strategy = Literal["fail", "drop_oldest", "compact"]


@dataclass(frozen=True)
class ContextPolicy:
    """How an agent keeps its runs' context inside the model's window (see
    the module's doc). Build one with :meth:`fail`, :meth:`drop_oldest` or
    :meth:`compact`; the ranges are checked when the agent is made."""

    strategy: Strategy
    window: Optional[int] = None
    trigger: float = 0.8
    keep: float = 0.25
    model: Optional[Union[str, Model]] = None
    instructions: Optional[str] = None

    @classmethod
    def fail(cls, *, window: Optional[int] = None, trigger: float = 0.8) -> ContextPolicy:
        """Fail the run before a request past ``trigger`` of the window."""
        return cls("fail", window=window, trigger=trigger)

    @classmethod
    def drop_oldest(cls, *, window: Optional[int] = None, trigger: float = 0.8, keep: float = 0.25) -> ContextPolicy:
        """Leave the oldest turns out of what is sent."""
        return cls("drop_oldest", window=window, trigger=trigger, keep=keep)

    @classmethod
    def compact(
        cls,
        *,
        window: Optional[int] = None,
        trigger: float = 0.8,
        keep: float = 0.25,
        model: Optional[Union[str, Model]] = None,
        instructions: Optional[str] = None,
    ) -> ContextPolicy:
        """Replace the oldest turns with a summary written by ``model`` (the
        agent's own by default), with ``instructions`` of your own."""
        return cls("compact", window=window, trigger=trigger, keep=keep, model=model, instructions=instructions)

    def _settings(self) -> Dict[str, Any]:
        return {
            "strategy": self.strategy,
            "window": self.window,
            "trigger": self.trigger,
            "keep": self.keep,
            "instructions": self.instructions,
        }
