"""The exceptions parlance raises (and `ToolError`, which tools raise).

Defined in Python so that they can carry typed attributes and inherit
from the standard exceptions users already catch (`ValueError` for bad
input); the native core raises these very classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

if TYPE_CHECKING:
    from ._core import Response


class ParlanceError(Exception):
    """The base of every error parlance raises."""


class ToolError(Exception):
    """Raise it in a tool to tell the model something went wrong on purpose.

    The message goes back to the model (the result's status is ``error``)
    whatever the agent's ``on_tool_exception`` says: the model can recover
    or explain. Any other exception is an unexpected failure
    (``tool_failed``).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _ArgumentsRefused(Exception):
    """The arguments passed the engine's schema but not the tool's own
    validation (a pydantic validator, a constraint the schema cannot say).
    Raised by ``Signature.arguments`` before the function runs; the core
    turns ``problems`` (``(location, message)`` pairs, the location a list
    of keys and indexes) into the engine's ``invalid_arguments`` lines."""

    def __init__(self, problems: List[Tuple[List[Union[str, int]], str]]) -> None:
        super().__init__("; ".join(msg for _, msg in problems))
        self.problems = problems


class RunError(ParlanceError):
    """A run failed: ``code`` (``tool_failed``, ``model_error``,
    ``max_model_calls``, ``invalid_arguments_budget``, ``invalid_output``...),
    ``message``, ``detail`` (the structured cause, if any) and the failed
    ``response`` (its messages keep the history consistent, so a thread can
    be retried). Under ``on_tool_exception="fail"`` the tool's own exception
    is the ``__cause__``.
    """

    def __init__(
        self,
        message: str,
        code: str = "failed",
        detail: Any = None,
        response: Optional[Response[Any]] = None,
    ) -> None:
        super().__init__(f"run failed ({code}): {message}")
        self.code = code
        self.message = message
        self.detail = detail
        self.response = response


class FormatError(ParlanceError, ValueError):
    """A document is not canonical: ``path`` names where
    (``messages[3].content[1].type``), ``message`` what is wrong. ``str()``
    is exactly the Rust error (``path: message``)."""

    def __init__(self, text: str, path: str = "", message: str = "") -> None:
        super().__init__(text)
        self.path = path
        self.message = message or text


class DecisionError(ParlanceError, ValueError):
    """A decision was refused (unknown call, already decided, digest that
    does not match, invalid edited arguments...); nothing ran. ``path``
    names the decision (``decisions[1].digest``)."""

    def __init__(self, text: str, path: str = "", message: str = "") -> None:
        super().__init__(text)
        self.path = path
        self.message = message or text


class ConfigError(ParlanceError, ValueError):
    """An agent, tool, model or store cannot be built as given (a missing
    API key, an unknown provider, a schema that does not compile, two tools
    with one name...)."""


class StoreError(ParlanceError):
    """The thread store refused or failed: ``kind`` is ``busy``,
    ``not_found``, ``conflict``, ``lease_lost``, ``corrupt``, ``unstorable`` or
    ``database``."""

    def __init__(self, message: str, kind: str = "database") -> None:
        super().__init__(message)
        self.kind = kind
