"""Reads a tool's docstring: its summary (the tool's description) and one
description per parameter, in Google, NumPy or Sphinx (reST) style.

Small on purpose: the three styles differ only in how a parameter section
is marked, and a tool's docstring is short. Anything unrecognised stays
in the description.
"""

from __future__ import annotations

import inspect
import re
from typing import Dict, List, Tuple

_GOOGLE_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_SECTION = re.compile(
    r"^(Parameters|Other Parameters|Returns|Yields|Raises|Examples|Notes|See Also|Attributes|References|Warnings)\s*$"
)
_UNDERLINE = re.compile(r"^-{3,}\s*$")
# ``x : int``, or several sharing one description: ``x, y : int``.
_NUMPY_PARAM = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(:.*)?$")
_SPHINX_FIELD = re.compile(r"^:(param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_SPHINX_OTHER = re.compile(r"^:(type|rtype|returns?|raises?|yields?|var|ivar|cvar)\b")


def parse(doc: str | None) -> Tuple[str, Dict[str, str]]:
    """``(description, {parameter: description})`` from a docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    for style in (_sphinx, _numpy, _google):
        found = style(lines)
        if found is not None:
            return found
    return _join(lines), {}


def _join(lines: List[str]) -> str:
    """Paragraphs kept, lines within one joined."""
    text = "\n".join(lines).strip()
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paragraphs if p)


def _google(lines: List[str]) -> Tuple[str, Dict[str, str]] | None:
    start = next(
        (i for i, line in enumerate(lines) if _GOOGLE_SECTION.match(line.strip()) and not line.startswith(" ")), None
    )
    if start is None:
        return None
    params: Dict[str, str] = {}
    current = None
    indent = None
    end = len(lines)
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        lead = len(line) - len(line.lstrip())
        if lead == 0:
            end = i
            break
        if indent is None:
            indent = lead
        m = _GOOGLE_PARAM.match(line.strip()) if lead == indent else None
        if m:
            current = m.group(1).lstrip("*")
            params[current] = m.group(3).strip()
        elif current is not None:
            params[current] = (params[current] + " " + line.strip()).strip()
    del end
    return _summary(lines[:start]), params


def _numpy(lines: List[str]) -> Tuple[str, Dict[str, str]] | None:
    heads = [
        i
        for i in range(len(lines) - 1)
        if _NUMPY_SECTION.match(lines[i].strip()) and _UNDERLINE.match(lines[i + 1].strip())
    ]
    if not heads:
        return None
    params: Dict[str, str] = {}
    for h in heads:
        if lines[h].strip() not in ("Parameters", "Other Parameters"):
            continue
        current: List[str] = []
        for line in lines[h + 2 :]:
            if not line.strip():
                continue
            if line == line.lstrip():
                if _NUMPY_SECTION.match(line.strip()):
                    break
                m = _NUMPY_PARAM.match(line.strip())
                if m:
                    current = [name.strip().lstrip("*") for name in m.group(1).split(",")]
                    for name in current:
                        params[name] = ""
                    continue
            for name in current:
                params[name] = (params[name] + " " + line.strip()).strip()
    return _summary(lines[: heads[0]]), params


def _sphinx(lines: List[str]) -> Tuple[str, Dict[str, str]] | None:
    first = next(
        (i for i, line in enumerate(lines) if _SPHINX_FIELD.match(line.strip()) or _SPHINX_OTHER.match(line.strip())),
        None,
    )
    if first is None:
        return None
    params: Dict[str, str] = {}
    current = None
    for line in lines[first:]:
        s = line.strip()
        m = _SPHINX_FIELD.match(s)
        if m:
            current = m.group(2)
            params[current] = m.group(3).strip()
        elif _SPHINX_OTHER.match(s) or s.startswith(":"):
            current = None
        elif current is not None and s:
            params[current] = (params[current] + " " + s).strip()
    return _summary(lines[:first]), params


def _summary(lines: List[str]) -> str:
    return _join(lines)
