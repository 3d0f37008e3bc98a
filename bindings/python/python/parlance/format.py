"""The canonical conversation format: strict readers that name the JSON
path of any problem, canonical JSON byte-identical to the Rust core's, and
the published JSON Schema.

``kind`` is one of ``conversation`` (a list of messages, or
``{"messages": [...], "tools": [...]}``), ``message``, ``block``,
``response``, ``request`` (a request document, as ``parlance convert``
writes), ``turn``, ``decision``, ``tool_spec``. Without a ``kind``, the
document's fields say which (as ``parlance validate FILE`` does):
``status`` → response, ``role`` → message, ``decision`` → decision,
``type`` → block, ``input_schema`` → tool_spec, a list or only
``messages``/``tools`` → conversation, anything else → request.

A document is given parsed (dicts and lists) or as JSON text (``str`` or
``bytes``).
"""

from typing import Any, Dict, Literal, Optional, Union, overload

from . import types
from ._core import format as _native
from ._errors import FormatError

Kind = Literal["conversation", "message", "block", "response", "request", "turn", "decision", "tool_spec"]

FORMAT_VERSION: str = _native.FORMAT_VERSION


def validate(value: Any, kind: Optional[Kind] = None) -> Kind:
    """Checks ``value`` (parsed, or JSON text) as a ``kind`` document, or
    as the kind its fields say; raises ``FormatError`` naming the JSON
    path of the first problem. Returns the kind it was read as."""
    found: Kind = _native.validate(value, kind)
    return found


@overload
def canonical(value: Any, kind: Literal["message"]) -> types.Message: ...


@overload
def canonical(value: Any, kind: Literal["block"]) -> types.Block: ...


@overload
def canonical(value: Any, kind: Literal["response"]) -> types.ResponseDocument: ...


@overload
def canonical(value: Any, kind: Literal["decision"]) -> types.Decision: ...


@overload
def canonical(value: Any, kind: Literal["tool_spec"]) -> types.ToolSpec: ...


@overload
def canonical(value: Any, kind: Optional[Kind] = None) -> Any: ...


def canonical(value: Any, kind: Optional[Kind] = None) -> Any:
    """The canonical form of ``value`` (older shapes read into today's):
    typed by ``kind`` (``kind="message"``: a ``types.Message``...)."""
    return _native.canonical(value, kind)


def dumps(value: Any, kind: Optional[Kind] = None) -> str:
    """Canonical JSON text, byte-identical to the Rust core's."""
    return _native.dumps(value, kind)


@overload
def loads(text: Union[str, bytes], kind: Literal["message"]) -> types.Message: ...


@overload
def loads(text: Union[str, bytes], kind: Literal["block"]) -> types.Block: ...


@overload
def loads(text: Union[str, bytes], kind: Literal["response"]) -> types.ResponseDocument: ...


@overload
def loads(text: Union[str, bytes], kind: Literal["decision"]) -> types.Decision: ...


@overload
def loads(text: Union[str, bytes], kind: Literal["tool_spec"]) -> types.ToolSpec: ...


@overload
def loads(text: Union[str, bytes], kind: Optional[Kind] = None) -> Any: ...


def loads(text: Union[str, bytes], kind: Optional[Kind] = None) -> Any:
    """Reads JSON text as a ``kind`` document (or the kind its fields say);
    gives its canonical form. Syntax errors name the line and column."""
    if not isinstance(text, (str, bytes)):
        raise TypeError(f"loads() takes JSON text (str or bytes), got {type(text).__name__}")
    return _native.canonical(text, kind)


def convert(value: Any, *, from_: str, to: str, kind: str = "request", model: Optional[str] = None) -> Any:
    """A ``request``, a ``response`` or a recorded ``stream`` (to canonical
    only) from one format to another: ``canonical``, a wire format
    (``openai-chat``, ``openai-responses``, ``anthropic``, ``gemini``,
    ``bedrock-converse``, ``mistral``, ``ollama``) or a provider's dialect
    (``deepseek``, ``openrouter``, ``groq``...: its own reasoning fields),
    what ``parlance convert`` does. ``value`` is parsed JSON or its text (a
    stream: SSE text, JSON lines, a list of events, or the ``bytes`` of a
    Bedrock ConverseStream body). Writing a provider's request needs
    ``model`` (or a model named by the input); anything dropped on the way
    is a ``UserWarning``."""
    return _native.convert(value, from_=from_, to=to, kind=kind, model=model)


def schema(name: str = "message") -> Dict[str, Any]:
    """A published JSON Schema: ``message``, ``content-block``,
    ``tool-spec``, ``response`` or ``decision``."""
    return _native.schema(name)


__all__ = ["FORMAT_VERSION", "FormatError", "canonical", "convert", "dumps", "loads", "schema", "validate"]
