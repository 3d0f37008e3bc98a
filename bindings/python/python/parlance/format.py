"""The canonical conversation format: strict readers that name the JSON
path of any problem, canonical JSON byte-identical to the Rust core's, and
the published JSON Schema.

``kind`` is one of ``conversation`` (a list of messages, or
``{"messages": [...], "tools": [...]}``), ``message``, ``block``,
``response``, ``turn``, ``decision``, ``tool_spec``.
"""

from ._core import format as _native
from ._errors import FormatError

FORMAT_VERSION = _native.FORMAT_VERSION
validate = _native.validate
canonical = _native.canonical
dumps = _native.dumps
loads = _native.loads
schema = _native.schema

__all__ = ["FORMAT_VERSION", "FormatError", "canonical", "dumps", "loads", "schema", "validate"]
