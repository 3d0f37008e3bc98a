"""A tool's input JSON Schema from its function's signature.

Plain parameters (``str``, ``int``, ``float``, ``bool``, ``None``,
``list[...]``, ``dict[str, ...]``, ``Optional``/``| None``, ``Literal``,
defaults) get the schema pydantic would give them, written here directly:
importing pydantic costs more than the whole rest of an agent's start-up,
and most tools need nothing more. Anything richer (``Annotated[...,
Field(...)]``, ``Enum``, ``TypedDict``, dataclasses, pydantic models,
unions...) goes to pydantic, which also turns the validated arguments into
those types before the function is called. Validation itself happens in
the Rust engine, against this schema.
"""

from __future__ import annotations

import inspect
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._docstring import parse as parse_docstring
from ._errors import ConfigError, _ArgumentsRefused

_NoneType = type(None)
_PLAIN = {str: "string", int: "integer", float: "number", bool: "boolean"}

if sys.version_info >= (3, 10):
    from types import UnionType as _UnionType
else:  # pragma: no cover - 3.9
    _UnionType = None


@dataclass
class Signature:
    """What a function needs from its call: its schema, the parameter that
    takes the ``ToolContext`` (if any), and how to build its arguments."""

    schema: Dict[str, Any]
    description: str
    context_param: Optional[str] = None
    # None: the validated JSON is passed as is (plain types).
    model: Any = None
    float_params: List[str] = field(default_factory=list)
    # Parameters whose Python default is a pydantic ``Field``: the model's
    # value is always passed (the function's own default is the FieldInfo).
    field_defaults: List[str] = field(default_factory=list)

    def arguments(self, args: Dict[str, Any]) -> Dict[str, Any]:
        """The keyword arguments for one call, from the JSON the engine
        validated. What pydantic refuses on top (validators, constraints the
        schema cannot say) raises ``_ArgumentsRefused``: the model reads it
        as invalid arguments, and the function is not called."""
        if self.model is not None:
            import pydantic

            try:
                built = self.model.model_validate(args)
            except pydantic.ValidationError as e:
                raise _ArgumentsRefused([(list(err["loc"]), _message(err)) for err in e.errors()]) from None
            names = list(args) + [n for n in self.field_defaults if n not in args]
            return {name: getattr(built, name) for name in names}
        for name in self.float_params:
            v = args.get(name)
            if type(v) is int:
                args[name] = float(v)
        return args


def output_check(validate: Callable[[Any], Any]) -> Callable[[Any], Optional[List[Dict[str, Any]]]]:
    """The run's check of a structured answer that matched the schema:
    what pydantic refuses on top (validators, constraints the schema
    cannot say) as ``[{path, message}]``, ``None`` when it fits. The Rust
    core sends the problems back to the model (``output_retries``)."""
    import pydantic

    def check(value: Any) -> Optional[List[Dict[str, Any]]]:
        try:
            validate(value)
        except pydantic.ValidationError as e:
            return [{"path": list(err["loc"]), "message": _message(err)} for err in e.errors()]
        return None

    return check


def _message(error: Any) -> str:
    """pydantic's message for one problem; a validator's own ``ValueError``
    or ``assert`` without pydantic's "Value error, " in front."""
    cause = (error.get("ctx") or {}).get("error")
    if error.get("type") in ("value_error", "assertion_error") and cause is not None and str(cause):
        return str(cause)
    return str(error.get("msg", ""))


def _is_field_info(value: Any) -> bool:
    """Whether a default is a pydantic ``Field(...)`` (FastAPI's style).
    pydantic is not imported for it: without it, there is no FieldInfo."""
    fields = sys.modules.get("pydantic.fields")
    return fields is not None and isinstance(value, fields.FieldInfo)


def _is_context(annotation: Any) -> bool:
    from ._core import ToolContext

    return annotation is ToolContext


def _plain(annotation: Any) -> Optional[Dict[str, Any]]:
    """The schema of a plain annotation, or None when pydantic is needed."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation in _PLAIN:
        return {"type": _PLAIN[annotation]}
    if annotation is _NoneType or annotation is None:
        return {"type": "null"}
    if annotation is list:
        return {"items": {}, "type": "array"}
    if annotation is dict:
        return {"additionalProperties": True, "type": "object"}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list and len(args) == 1:
        item = _plain(args[0])
        return None if item is None else {"items": item, "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        value = _plain(args[1])
        return None if value is None else {"additionalProperties": value, "type": "object"}
    if origin is typing.Literal:
        if not all(type(a) in (str, int, bool) for a in args):
            return None
        kinds = {type(a) for a in args}
        out: Dict[str, Any] = {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        if len(kinds) == 1:
            out["type"] = _PLAIN[kinds.pop()]
        return out
    if origin is typing.Union or (_UnionType is not None and origin is _UnionType):
        rest = [a for a in args if a is not _NoneType]
        if len(rest) == 1 and len(args) == 2:
            inner = _plain(rest[0])
            return None if inner is None else {"anyOf": [inner, {"type": "null"}]}
        return None
    return None


def _takes_float(annotation: Any) -> bool:
    if annotation is float:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or (_UnionType is not None and origin is _UnionType):
        return float in typing.get_args(annotation)
    return False


def _json_default(value: Any) -> Tuple[bool, Any]:
    """A default as JSON, when it is JSON."""
    if value is None or type(value) in (str, int, float, bool):
        return True, value
    if type(value) in (list, tuple, dict):
        try:
            import json

            return True, json.loads(json.dumps(value))
        except (TypeError, ValueError):
            return False, None
    return False, None


def _strip_titles(schema: Any, in_properties: bool = False) -> Any:
    """pydantic's ``title`` keys say nothing the names do not; a property
    that is itself named ``title`` is kept."""
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v, k == "properties" and not in_properties)
            for k, v in schema.items()
            if in_properties or k != "title"
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


class _Parameters:
    """The parameters' annotations alone, for ``get_type_hints``."""

    def __init__(self, func: Callable[..., Any]) -> None:
        inner = inspect.unwrap(func)
        annotations = dict(getattr(inner, "__annotations__", None) or {})
        annotations.pop("return", None)
        self.__annotations__ = annotations
        self.__globals__ = getattr(inner, "__globals__", {})


def _hints(func: Callable[..., Any], name: str) -> Dict[str, Any]:
    """The resolved type hints of the parameters (the return annotation is
    not needed, and may name a class only the function's body sees)."""
    try:
        return typing.get_type_hints(_Parameters(func), include_extras=True)
    except Exception as e:  # a forward reference that does not resolve
        raise ConfigError(f"tool {name}: cannot resolve the type hints: {e}") from e


def hand_written(func: Callable[..., Any], name: str, schema: Dict[str, Any]) -> Signature:
    """A schema written by hand: the arguments go to the function as they
    are, by name (``**kwargs`` is fine); a ``ToolContext`` parameter still
    gets the context."""
    hints = _hints(func, name)
    context_param = next((n for n, a in hints.items() if _is_context(a)), None)
    description, _ = parse_docstring(inspect.getdoc(func))
    return Signature(schema=schema, description=description, context_param=context_param)


def signature(func: Callable[..., Any], name: str) -> Signature:
    """Reads ``func``'s parameters, type hints and docstring."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"tool {name}: cannot read the function's signature: {e}") from e
    hints = _hints(func, name)
    description, param_docs = parse_docstring(inspect.getdoc(func))

    context_param = None
    params: List[inspect.Parameter] = []
    for p in sig.parameters.values():
        annotation = hints.get(p.name, p.annotation)
        if _is_context(annotation):
            if context_param is not None:
                raise ConfigError(f"tool {name}: two ToolContext parameters ({context_param}, {p.name})")
            context_param = p.name
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ConfigError(
                f"tool {name}: parameter {p.name}: *args and **kwargs cannot be described to a model; "
                "name each parameter"
            )
        if p.kind is p.POSITIONAL_ONLY:
            raise ConfigError(f"tool {name}: parameter {p.name}: positional-only parameters cannot be passed by name")
        params.append(p.replace(annotation=annotation))

    plain = {p.name: _plain(p.annotation) for p in params}
    if all(s is not None for s in plain.values()) and not any(_is_field_info(p.default) for p in params):
        properties: Dict[str, Any] = {}
        required: List[str] = []
        for p in params:
            prop = dict(plain[p.name] or {})
            if param_docs.get(p.name):
                prop["description"] = param_docs[p.name]
            if p.default is inspect.Parameter.empty:
                required.append(p.name)
            else:
                ok, value = _json_default(p.default)
                if ok:
                    prop["default"] = value
            properties[p.name] = prop
        schema: Dict[str, Any] = {"additionalProperties": False, "properties": properties, "type": "object"}
        if required:
            schema["required"] = required
        return Signature(
            schema=schema,
            description=description,
            context_param=context_param,
            float_params=[p.name for p in params if _takes_float(p.annotation)],
        )
    return _with_pydantic(name, params, param_docs, description, context_param)


def _with_pydantic(
    name: str,
    params: List[inspect.Parameter],
    param_docs: Dict[str, str],
    description: str,
    context_param: Optional[str],
) -> Signature:
    try:
        import pydantic
        from pydantic.fields import FieldInfo
    except ImportError as e:  # pragma: no cover - pydantic is a dependency
        raise ConfigError(f"tool {name}: these parameter types need pydantic: {e}") from e

    fields: Dict[str, Any] = {}
    for p in params:
        annotation = Any if p.annotation is inspect.Parameter.empty else p.annotation
        doc = param_docs.get(p.name) or None
        default: Any = ... if p.default is inspect.Parameter.empty else p.default
        if isinstance(default, FieldInfo):
            if doc and not default.description:
                annotation = typing.Annotated[annotation, pydantic.Field(description=doc)]
            fields[p.name] = (annotation, default)
            continue
        has_own_description = any(
            isinstance(m, FieldInfo) and m.description for m in getattr(annotation, "__metadata__", ())
        )
        if doc and not has_own_description:
            fields[p.name] = (annotation, pydantic.Field(default, description=doc))
        else:
            fields[p.name] = (annotation, default)
    try:
        model = pydantic.create_model(
            f"{name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
        schema = model.model_json_schema()
    except Exception as e:
        raise ConfigError(f"tool {name}: no JSON Schema for its parameters: {e}") from e
    schema = _strip_titles(schema)
    return Signature(
        schema=schema,
        description=description,
        context_param=context_param,
        model=model,
        field_defaults=[p.name for p in params if isinstance(p.default, FieldInfo)],
    )


def output_schema(output_type: Any) -> Tuple[str, Dict[str, Any], Callable[[Any], Any]]:
    """The schema of an agent's ``output_type``, its name, and the
    function that turns the validated JSON into an instance."""
    import pydantic

    adapter = pydantic.TypeAdapter(output_type)
    schema = adapter.json_schema()
    schema.pop("title", None)
    name = getattr(output_type, "__name__", None) or "output"
    return name, schema, adapter.validate_python
