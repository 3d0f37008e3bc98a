#!/usr/bin/env python3
"""Writes python/parlance/types.py, the TypedDicts of the canonical format,
from the published JSON Schema in schema/ (the repository's root), so that
they cannot drift from it: the Python twin of bindings/node/scripts/gen-types.mjs
(which writes lib/format.d.ts from the same files). ``--check``: fails when
the committed file differs from what the schemas give (run by
scripts/test-python).

The schemas use a small part of JSON Schema, all handled here: ``type`` (one
or several), ``properties``/``required``, ``additionalProperties``,
``items``, ``oneOf``/``anyOf``, ``const``, ``enum``, ``$ref`` to
``#/$defs/X`` or ``#`` (alone, or beside properties: a TypedDict that
extends the referenced one). An object with properties becomes a TypedDict
(an inline one is named after its ``type`` constant and its parent: the
``tool_call`` alternative of ``Block`` is ``ToolCallBlock``); anything else
a type alias. Anything outside that part is an error, not a silent ``Any``.

Standard library only; run with any Python 3.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

HERE = Path(__file__).resolve().parent
SCHEMA_DIR = HERE.parents[2] / "schema"
OUT = HERE.parent / "python" / "parlance" / "types.py"

# Each file's root type, named (the names of lib/format.d.ts).
ROOTS = {
    "message.schema.json": "Message",
    "content-block.schema.json": "Block",
    "tool-spec.schema.json": "ToolSpec",
    "response.schema.json": "ResponseDocument",
    "decision.schema.json": "Decision",
}
IGNORED = {
    "description",
    "title",
    "$schema",
    "$id",
    "$defs",
    "x-parlance-format-version",
    "format",
    "minimum",
    "default",
    "unevaluatedProperties",
}
KNOWN = IGNORED | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "oneOf",
    "anyOf",
    "const",
    "enum",
    "$ref",
}
PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", "_").split("_"))


def docstring(text: Optional[str], indent: str) -> str:
    if not text:
        return ""
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.split("\n")
    if len(lines) == 1:
        return f'{indent}"""{text}"""\n'
    body = "\n".join(f"{indent}{line}" if line else "" for line in lines)
    return f'{indent}"""{body.lstrip()}\n{indent}"""\n'


class Generator:
    def __init__(self) -> None:
        # name -> the text of its definition (a class or an alias)
        self.classes: Dict[str, str] = {}
        self.aliases: Dict[str, str] = {}
        # class name -> its base, so that bases are written first
        self.bases: Dict[str, Optional[str]] = {}
        self.order: List[str] = []
        # alias name -> the names its body refers to
        self.uses: Dict[str, List[str]] = {}

    def define(self, table: Dict[str, str], name: str, text: str, where: str) -> None:
        if name in table and table[name] != text:
            raise SystemExit(f"{where}: {name} differs from another file's {name}")
        if name not in self.classes and name not in self.aliases:
            self.order.append(name)
        table[name] = text

    def type_of(self, s: Any, root: str, name: str, where: str) -> str:
        """The annotation of schema ``s``; an inline object with properties
        becomes a TypedDict called ``name``."""
        if not isinstance(s, dict):
            raise SystemExit(f"{where}: expected a schema object")
        for k in s:
            if k not in KNOWN:
                raise SystemExit(f"{where}: unsupported keyword {k}")
        ref = s.get("$ref")
        if ref is not None:
            target = self.ref(ref, root, where)
            if "properties" in s:
                return self.typed_dict(s, root, name, where, base=target)
            return target
        alts = s.get("oneOf", s.get("anyOf"))
        if alts is not None:
            return self.union([self.alternative(a, root, name, f"{where}/{i}") for i, a in enumerate(alts)])
        if "const" in s:
            return self.literal([s["const"]])
        if "enum" in s:
            return self.literal(s["enum"])
        if "type" in s:
            types = s["type"] if isinstance(s["type"], list) else [s["type"]]
            parts = []
            for t in types:
                if t in PRIMITIVES:
                    parts.append(PRIMITIVES[t])
                elif t == "array":
                    items = s.get("items")
                    inner = self.type_of(items, root, f"{name}Item", f"{where}/items") if items else "JsonValue"
                    parts.append(f"List[{inner}]")
                elif t == "object":
                    parts.append(self.object(s, root, name, where))
                else:
                    raise SystemExit(f"{where}: unsupported type {t}")
            return self.union(parts)
        if "properties" in s:
            return self.object(s, root, name, where)
        return "JsonValue"

    def alternative(self, a: Any, root: str, name: str, where: str) -> str:
        """One alternative of a union: an inline object is named after its
        ``type`` constant (``tool_call`` of Block: ``ToolCallBlock``)."""
        if isinstance(a, dict) and "properties" in a:
            const = a["properties"].get("type", {}).get("const")
            if not isinstance(const, str):
                raise SystemExit(f"{where}: an object alternative needs a `type` constant to be named by")
            return self.type_of(a, root, f"{camel(const)}{name}", where)
        return self.type_of(a, root, name, where)

    def ref(self, ref: str, root: str, where: str) -> str:
        if ref == "#":
            return root
        if ref.startswith("#/$defs/"):
            return ref[len("#/$defs/") :]
        raise SystemExit(f"{where}: unsupported $ref {ref}")

    @staticmethod
    def literal(values: List[Any]) -> str:
        parts = [v for v in values if v is not None]
        lit = f"Literal[{', '.join(json.dumps(v) for v in parts)}]" if parts else ""
        if len(parts) < len(values):
            return f"Optional[{lit}]" if lit else "None"
        return lit

    @staticmethod
    def union(parts: List[str]) -> str:
        # Literals of one union are merged; `None` makes it Optional.
        flat: List[str] = []
        nullable = False
        for p in parts:
            if p.startswith("Optional["):
                p, nullable = p[len("Optional[") : -1], True
            if p == "None":
                nullable = True
            else:
                flat.append(p)
        literals = [p[len("Literal[") : -1] for p in flat if p.startswith("Literal[")]
        rest = [p for p in flat if not p.startswith("Literal[")]
        if literals:
            rest.insert(0, f"Literal[{', '.join(literals)}]")
        if not rest:
            return "None"
        body = rest[0] if len(rest) == 1 else f"Union[{', '.join(rest)}]"
        return f"Optional[{body}]" if nullable else body

    def object(self, s: Dict[str, Any], root: str, name: str, where: str) -> str:
        if s.get("properties"):
            return self.typed_dict(s, root, name, where, base=None)
        extra = s.get("additionalProperties")
        if isinstance(extra, dict):
            return f"Dict[str, {self.type_of(extra, root, f'{name}Value', f'{where}/additionalProperties')}]"
        return "Dict[str, JsonValue]"

    def typed_dict(self, s: Dict[str, Any], root: str, name: str, where: str, base: Optional[str]) -> str:
        if isinstance(s.get("additionalProperties"), dict):
            raise SystemExit(f"{where}: properties beside a schema for additionalProperties have no TypedDict")
        required = set(s.get("required", []))
        lines = []
        for prop, p in s["properties"].items():
            if not prop.isidentifier() or prop in {"from", "class", "def", "import", "global", "return"}:
                raise SystemExit(f"{where}: property {prop!r} is not a Python identifier")
            t = self.type_of(p, root, f"{name}{camel(prop)}", f"{where}/{prop}")
            if prop not in required:
                t = f"NotRequired[{t}]"
            lines.append(f"    {prop}: {t}\n{docstring(p.get('description'), '    ')}")
        doc = docstring(s.get("description"), "    ")
        if doc:
            doc += "\n"
        body = "".join(lines) or "    pass\n"
        text = f"class {name}({base or 'TypedDict'}):\n{doc}{body}"
        self.define(self.classes, name, text, where)
        self.bases[name] = base
        return name

    def named(self, name: str, s: Dict[str, Any], root: str, where: str) -> None:
        """A $def or a file's root, under its own name."""
        if s.get("properties") and "oneOf" not in s and "anyOf" not in s:
            self.type_of(s, root, name, where)
            return
        body = self.type_of(s, root, name, where)
        doc = docstring(s.get("description") or s.get("title"), "")
        line = f"{name} = {body}"
        if len(line) > 120 and body.startswith("Union["):
            # As ruff format writes it: one member a line.
            members = "".join(f"    {m},\n" for m in body[len("Union[") : -1].split(", "))
            line = f"{name} = Union[\n{members}]"
        self.define(self.aliases, name, f"{line}\n{doc}", where)
        self.uses[name] = names_in(body)


IDENT = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*')
BUILTIN = {"Literal", "Optional", "Union", "List", "Dict", "str", "int", "float", "bool", "None", "JsonValue"}


def names_in(annotation: str) -> List[str]:
    """The type names an annotation refers to (not its string literals)."""
    return [m for m in IDENT.findall(annotation) if not m.startswith('"') and m not in BUILTIN]


def generate() -> str:
    g = Generator()
    version = json.loads((SCHEMA_DIR / "message.schema.json").read_text())["x-parlance-format-version"]
    for file, name in ROOTS.items():
        schema = json.loads((SCHEMA_DIR / file).read_text())
        root = "Block" if file == "content-block.schema.json" else name
        for d, s in schema.get("$defs", {}).items():
            g.named(d, s, "Block", f"{file}#/$defs/{d}")
        rest = {k: v for k, v in schema.items() if k != "$defs"}
        g.named(name, rest, root, file)
    written = set()
    classes = []

    def write(name: str) -> None:
        if name in written:
            return
        base = g.bases.get(name)
        if base is not None and base in g.classes:
            write(base)
        written.add(name)
        classes.append(g.classes[name])

    for name in g.order:
        if name in g.classes:
            write(name)
    # Aliases are evaluated when the module loads: each after the aliases
    # it names (classes come first; their annotations are not evaluated).
    aliases: List[str] = []
    done: Set[str] = set()

    def alias(name: str) -> None:
        if name in done:
            return
        done.add(name)
        for used in g.uses[name]:
            if used in g.aliases:
                alias(used)
        aliases.append(g.aliases[name])

    for name in g.order:
        if name in g.aliases:
            alias(name)
    names = sorted(["JsonValue", *g.classes, *g.aliases])
    head = f'''# Generated by bindings/python/scripts/gen-types.py from the JSON Schema in
# schema/ (the canonical format, version {version}). Do not edit: run the script.
"""The canonical format's types, as TypedDicts: what ``Response.messages``,
``Response.to_dict()``, ``Store.messages`` and ``format.canonical`` give,
and what a run takes. A content block is a union discriminated by its
``type`` field (``if b["type"] == "text": b["text"]``). The same types as
the npm package's ``format.d.ts``, from the same schemas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Literal, Optional, Union

from typing_extensions import NotRequired, TypeAliasType, TypedDict

if TYPE_CHECKING:
    JsonValue = Union[str, int, float, bool, List["JsonValue"], Dict[str, "JsonValue"], None]
    """Any JSON value."""
else:
    # A named alias at run time, so that pydantic can follow the recursion.
    JsonValue = TypeAliasType(
        "JsonValue", Union[str, int, float, bool, List["JsonValue"], Dict[str, "JsonValue"], None]
    )
'''
    all_list = "".join(f'    "{n}",\n' for n in names)
    return f"{head}\n\n" + "\n\n".join(classes) + "\n\n" + "\n".join(aliases) + f"\n__all__ = [\n{all_list}]\n"


def main() -> None:
    text = generate()
    if "--check" in sys.argv[1:]:
        committed = OUT.read_text() if OUT.exists() else ""
        if committed != text:
            sys.exit(
                f"{OUT} differs from what schema/ gives: run `python3 bindings/python/scripts/gen-types.py` and commit"
            )
        print("python/parlance/types.py matches schema/")
    else:
        OUT.write_text(text)
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
