"""The canonical conversation format: strict readers that name the JSON
path of any problem, canonical JSON byte-identical to the Rust core's, and
the published JSON Schema.

``kind`` is one of ``conversation`` (a list of messages, or
``{"messages": [...], "tools": [...]}``), ``message``, ``block``,
``response``, ``turn``, ``decision``, ``tool_spec``.
"""

from typing import Any, Dict, Optional

from ._core import format as _native
from ._errors import FormatError

FORMAT_VERSION: str = _native.FORMAT_VERSION


def validate(value: Any, kind: str = "conversation") -> None:
    """Checks ``value`` (dicts and lists) as a ``kind`` document; raises
    ``FormatError`` naming the JSON path of the first problem."""
    _native.validate(value, kind)


def canonical(value: Any, kind: str = "conversation") -> Any:
    """The canonical form of ``value`` (older shapes read into today's)."""
    return _native.canonical(value, kind)


def dumps(value: Any, kind: str = "conversation") -> str:
    """Canonical JSON text, byte-identical to the Rust core's."""
    return _native.dumps(value, kind)


def loads(text: str, kind: str = "conversation") -> Any:
    """Reads JSON text as a ``kind`` document; gives its canonical form."""
    return _native.loads(text, kind)


def convert(
    value: Any, *, from_: str, to: str, kind: str = "request", model: Optional[str] = None
) -> Any:
    """A ``request`` or ``response`` from one format to another:
    ``canonical``, ``openai-chat``, ``openai-responses``, ``anthropic``,
    ``gemini``, ``bedrock-converse``, ``mistral``, ``ollama`` (what ``parlance convert`` does). Writing a provider's
    request needs ``model`` (or a model named by the input); anything
    dropped on the way is a ``UserWarning``."""
    return _native.convert(value, from_=from_, to=to, kind=kind, model=model)


def schema(name: str = "message") -> Dict[str, Any]:
    """A published JSON Schema: ``message``, ``content-block``,
    ``tool-spec``, ``response`` or ``decision``."""
    return _native.schema(name)

__all__ = ["FORMAT_VERSION", "FormatError", "canonical", "convert", "dumps", "loads", "schema", "validate"]
