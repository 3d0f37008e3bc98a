"""Tool results that are not plain JSON (pydantic models, dataclasses,
enums, dates...) made plain, with pydantic's rules; the native core calls
this only for values it cannot write itself."""

from __future__ import annotations

from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` as dicts, lists, strings, numbers, booleans and None."""
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(value)
    except Exception as e:
        raise TypeError(f"a {type(value).__name__} is not JSON and cannot be made JSON: {e}") from None
