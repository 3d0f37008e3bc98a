# Types of the native module (bindings/python/src). The public names are
# re-exported by `parlance`; see its docstrings for what they do.
import os
import pathlib
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Dict,
    Generic,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    Union,
)

from typing_extensions import TypeAlias

from . import types
from ._events import Event

__version__: str

_T = TypeVar("_T", covariant=True)
RunStatus: TypeAlias = Literal["completed", "requires_approval", "failed"]

class Usage:
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> Optional[int]: ...
    @property
    def reasoning_tokens(self) -> Optional[int]: ...
    @property
    def total_tokens(self) -> int: ...
    def to_dict(self) -> types.Usage: ...

class ApprovalRequest:
    @property
    def tool_call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> Dict[str, Any]: ...
    @property
    def digest(self) -> str: ...
    def to_dict(self) -> types.ApprovalRequest: ...

class Response(Generic[_T]):
    """What a run gave: messages, output, usage, status, pending approvals."""

    @classmethod
    def from_json(cls, text: str) -> Response[Any]: ...
    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Response[Any]: ...
    @property
    def id(self) -> Optional[str]: ...
    @property
    def thread_id(self) -> Optional[str]: ...
    @property
    def status(self) -> RunStatus: ...
    @property
    def text(self) -> str: ...
    @property
    def output(self) -> _T: ...
    @property
    def messages(self) -> List[types.Message]: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def cost(self) -> Optional[float]: ...
    @property
    def finish_reason(self) -> Optional[types.FinishReason]: ...
    @property
    def pending(self) -> List[ApprovalRequest]: ...
    @property
    def error(self) -> Optional[types.RunError]: ...
    def to_dict(self) -> types.ResponseDocument: ...
    def to_json(self, *, indent: bool = False) -> str: ...

class ToolContext:
    """What a tool sees of its call."""

    @property
    def run_id(self) -> str: ...
    @property
    def thread_id(self) -> Optional[str]: ...
    @property
    def call_id(self) -> str: ...
    @property
    def idempotency_key(self) -> str: ...
    @property
    def tool_name(self) -> str: ...
    @property
    def remaining(self) -> float: ...
    @property
    def deadline(self) -> float: ...
    @property
    def cancelled(self) -> bool: ...
    @property
    def deps(self) -> Any: ...

class RunStream(AsyncIterator[Event]):
    def __aiter__(self) -> RunStream: ...
    async def __anext__(self) -> Event: ...

class Model:
    """A model an agent talks to: from a string, built for a provider, or
    written in Python. For one of your own, subclass ``Model`` and define

        async def request(self, messages, *, tools, settings) -> dict | str

    (or a plain ``def``): ``messages`` are canonical message dicts,
    ``tools`` canonical tool specs, ``settings`` the request's options (only
    those set). Return the assistant's message (a canonical message dict,
    ``role`` optional) or a string (one text block). An ``async def`` runs
    on the caller's event loop; what it raises fails the run with a model
    error naming the exception. ``provider`` and ``model_id`` may be set
    as class attributes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @staticmethod
    def from_string(spec: str) -> Model: ...
    @staticmethod
    def build(provider: str, model: str, settings: Optional[Dict[str, Any]] = None) -> Model: ...
    @property
    def provider(self) -> str: ...
    @property
    def model_id(self) -> str: ...

class Store:
    """Threads in SQLite or PostgreSQL."""

    def __init__(self, url: str, options: Optional[Dict[str, Any]] = None) -> None: ...
    async def query(self, q: Dict[str, Any]) -> Any: ...
    def query_blocking(self, q: Dict[str, Any]) -> Any: ...

class Tool:
    def __init__(
        self,
        name: str,
        description: str,
        schema: Dict[str, Any],
        func: Callable[[Dict[str, Any], ToolContext], Any],
        *,
        is_async: bool,
        timeout: Optional[float] = None,
        needs_approval: Union[bool, Callable[[Dict[str, Any]], bool], None] = None,
        max_invalid_arguments: Optional[int] = None,
    ) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def spec(self) -> Dict[str, Any]: ...

class Work:
    """What a run does, given once to ``Agent.run``, ``run_blocking`` or ``stream``."""

    @staticmethod
    def run(
        input: Any, *, turns: Optional[List[Any]] = None, run_id: Optional[str] = None, thread_id: Optional[str] = None
    ) -> Work: ...
    @staticmethod
    def retry(turns: List[Any], *, run_id: Optional[str] = None, thread_id: Optional[str] = None) -> Work: ...
    @staticmethod
    def resume(paused: Any, decisions: List[Any], *, turns: Optional[List[Any]] = None) -> Work: ...
    @staticmethod
    def on_thread(store: Store, thread_id: str, input: Any) -> Work: ...
    @staticmethod
    def retry_thread(store: Store, thread_id: str) -> Work: ...
    @staticmethod
    def resume_thread(store: Store, run_id: str, decisions: List[Any]) -> Work: ...
    @staticmethod
    def carry_on(store: Store, run_id: str, max_attempts: int = 3) -> Work: ...

class Agent:
    def __init__(
        self,
        model: Union[str, Model, Sequence[Union[str, Model]]],
        tools: Sequence[Tool],
        settings: Dict[str, Any],
        output_type: Optional[Callable[[Any], Any]] = None,
        toolsets: Sequence[Any] = (),
        *,
        output_check: Optional[Callable[[Any], Any]] = None,
        guardrails: Sequence[Guardrail] = (),
        context_model: Optional[Union[str, Model]] = None,
        shared_cooldowns: Optional[Store] = None,
    ) -> None: ...
    @property
    def has_async_tools(self) -> bool: ...
    @property
    def settings(self) -> Dict[str, Any]: ...
    async def run(
        self, work: Work, *, deps: Any = None, checkpoint: Optional[Callable[[Any], Any]] = None
    ) -> Response[Any]: ...
    def run_blocking(
        self, work: Work, *, deps: Any = None, checkpoint: Optional[Callable[[Any], Any]] = None
    ) -> Response[Any]: ...
    def stream(
        self, work: Work, *, deps: Any = None, checkpoint: Optional[Callable[[Any], Any]] = None
    ) -> RunStream: ...

class McpServer:
    def __init__(self, settings: Dict[str, Any]) -> None: ...
    @property
    def name(self) -> str: ...
    async def shutdown(self) -> None: ...
    def shutdown_blocking(self) -> None: ...

class _FormatModule:
    FORMAT_VERSION: str
    def validate(self, value: Any, kind: Optional[str] = None) -> Any: ...
    def canonical(self, value: Any, kind: Optional[str] = None) -> Any: ...
    def dumps(self, value: Any, kind: Optional[str] = None) -> str: ...
    def schema(self, name: str = "message") -> Dict[str, Any]: ...
    def convert(
        self, value: Any, *, from_: str, to: str, kind: str = "request", model: Optional[str] = None
    ) -> Any: ...

format: _FormatModule

class TestModel(Model):
    def __init__(
        self,
        *,
        call_tools: Union[str, Sequence[str], None] = None,
        text: Optional[str] = None,
        output: Any = None,
        seed: int = 0,
    ) -> None: ...
    @property
    def call_tools(self) -> Union[str, List[str]]: ...
    @property
    def received(self) -> List[Dict[str, Any]]: ...

class ScriptedModel(Model):
    def __init__(self, messages: Sequence[Union[Mapping[str, Any], str]]) -> None: ...
    @property
    def received(self) -> List[Dict[str, Any]]: ...
    @property
    def remaining(self) -> int: ...

class Recorder(Model):
    def __init__(
        self, model: Union[str, Model], path: Union[str, os.PathLike[str]], *, append: bool = False
    ) -> None: ...
    @property
    def path(self) -> pathlib.Path: ...

class Replay(Model):
    def __init__(self, path: Union[str, os.PathLike[str]]) -> None: ...
    @property
    def remaining(self) -> int: ...
    @property
    def path(self) -> pathlib.Path: ...

class Guardrail:
    def __init__(self, name: str, point_name: str, check: Callable[[Any], Any], *, is_async: bool) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def point(self) -> str: ...

class Toolset:
    def __init__(
        self, name: str, list: Callable[[Any], Any], *, is_async: bool, prefix: Optional[str] = None
    ) -> None: ...

class Traces:
    def flush(self) -> None: ...
    def shutdown(self) -> None: ...

def export_traces(settings: Dict[str, Any]) -> Traces: ...
def pull_local_model() -> str:
    """Fetches the default local model into Parlance's model cache when it
    is not there (with pip); its path."""

def local_model_path() -> Optional[str]:
    """Where the default local model is kept (``None`` in a build without it)."""

def cost(
    model: str,
    usage: Union[Usage, types.Usage, Mapping[str, Any]],
    *,
    prices: Optional[Union[str, os.PathLike[str]]] = None,
) -> Optional[float]:
    """What ``usage`` on ``model`` (``"provider:model"``) cost, in US dollars.

    ``None`` when the price table does not know the model (never a guess).
    ``prices``: a JSON price table file, consulted before the built-in one
    (pydantic's genai-prices, shipped with Parlance).
    """

# For the tests that check a Rust panic reaches Python as an exception.
def _panic_for_tests(how: str) -> Any: ...
