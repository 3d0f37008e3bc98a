"""mkdocs hooks of the documentation site (mkdocs.yml):

- Links from a page to a file of the repository outside docs/ (a crate's
  source, schema/, README.md) point at that file in the repository
  (``repo_url``), so the design records keep their links and --strict
  still refuses a link to a missing page.
- ``<!-- schemas -->`` on a page becomes the JSON formats rendered from
  schema/*.schema.json: each document's fields, and the schema itself.
- ``<!-- python-api -->`` becomes the Python package's reference: each
  public name of ``parlance`` and ``parlance.testing`` with its signature
  and docstring, read from the sources (``ast``, nothing imported).
- The site's root redirects to the guide.
"""

from __future__ import annotations

import ast
import inspect
import json
import posixpath
import re
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[3]
LINK = re.compile(r'(\]\()([^)\s]+)((?:\s+"[^"]*")?\))')
FENCE = re.compile(r"^\s*(```|~~~)")


def _outside(page_src: str, target: str, config: Any) -> str:
    """The repository URL of ``target`` when it leaves docs/, else ''."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return ""
    path, _, anchor = target.partition("#")
    if not path:
        return ""
    joined = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_src), path))
    if joined == "docs" or joined.startswith("docs/"):
        return ""
    if not (REPO / joined).exists():
        return ""  # left alone: mkdocs reports it
    kind = "tree" if (REPO / joined).is_dir() else "blob"
    return f"{config['repo_url'].rstrip('/')}/{kind}/main/{joined}" + (f"#{anchor}" if anchor else "")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    out: List[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced:

            def fix(m: re.Match[str]) -> str:
                url = _outside(page.file.src_uri, m.group(2), config)
                return f"{m.group(1)}{url}{m.group(3)}" if url else m.group(0)

            line = LINK.sub(fix, line)
            if line.strip() == "<!-- schemas -->":
                line = schemas()
            elif line.strip() == "<!-- python-api -->":
                line = python_api()
        out.append(line)
    return "\n".join(out)


def _type(p: Dict[str, Any]) -> str:
    if "$ref" in p:
        return "`" + p["$ref"].rsplit("/", 1)[-1] + "`"
    if "const" in p:
        return f"`{json.dumps(p['const'])}`"
    if "enum" in p:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in p["enum"])
    t = p.get("type")
    if isinstance(t, list):
        return " \\| ".join(t)
    if t == "array" and isinstance(p.get("items"), dict):
        return f"array of {_type(p['items'])}"
    if t:
        return str(t)
    for key in ("oneOf", "anyOf"):
        if key in p:
            return " \\| ".join(_type(x) for x in p[key])
    return "any"


def _ref(doc: Dict[str, Any], p: Dict[str, Any]) -> Dict[str, Any]:
    """The definition a ``$ref`` names (``{}`` when none)."""
    ref = p.get("$ref", "")
    if ref.startswith("#/$defs/"):
        found = (doc.get("$defs") or {}).get(ref.rsplit("/", 1)[-1])
        return found if isinstance(found, dict) else {}
    return {}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def schemas() -> str:
    """Each published schema: its title and description, its top-level
    fields, and the schema itself in a fold."""
    parts: List[str] = []
    for path in sorted((REPO / "schema").glob("*.schema.json")):
        doc = json.loads(path.read_text())
        name = path.name.removesuffix(".schema.json")
        parts.append(f"## `{name}`\n")
        parts.append(
            f"`schema/{path.name}`" + (f": {_cell(doc['description'])}" if doc.get("description") else "") + "\n"
        )
        props = doc.get("properties") or {}
        required = set(doc.get("required") or [])
        if props:
            parts.append("| field | type | required | meaning |\n|---|---|---|---|")
            for key, p in props.items():
                desc = _cell(p.get("description", "")) if isinstance(p, dict) else ""
                typ = _type(p) if isinstance(p, dict) else "any"
                parts.append(f"| `{key}` | {typ} | {'yes' if key in required else ''} | {desc} |")
            parts.append("")
        elif doc.get("oneOf") or doc.get("anyOf"):
            parts.append("| one of | meaning |\n|---|---|")
            for alt in doc.get("oneOf") or doc.get("anyOf"):
                kind = ((alt.get("properties") or {}).get("type") or {}).get("const")
                label = f"`type: {json.dumps(kind)}`" if kind is not None else _type(alt)
                desc = alt.get("description") or _ref(doc, alt).get("description", "")
                parts.append(f"| {label} | {_cell(desc)} |")
            parts.append("")
        defs = doc.get("$defs") or {}
        if defs:
            parts.append("| definition | meaning |\n|---|---|")
            for key, d in defs.items():
                parts.append(f"| `{key}` | {_cell(d.get('description', '')) if isinstance(d, dict) else ''} |")
            parts.append("")
        body = json.dumps(doc, indent=2, ensure_ascii=False)
        parts.append(f'??? note "The schema ({len(body.splitlines())} lines)"\n')
        parts.append("    ```json")
        parts.extend("    " + line for line in body.splitlines())
        parts.append("    ```\n")
    return "\n".join(parts)


PKG = REPO / "bindings" / "python" / "python" / "parlance"


def _doc(text: str) -> str:
    """A docstring as Markdown: ``code`` spans, paragraphs kept."""
    text = inspect.cleandoc(text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    # Indented blocks (examples) would read as code blocks: keep them, fenced as text.
    out: List[str] = []
    block: List[str] = []
    for line in [*text.split("\n"), ""]:
        if line.startswith("    ") or (block and not line.strip() and block[-1].strip()):
            block.append(line[4:] if line.startswith("    ") else line)
            continue
        if block:
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```text", *block, "```", ""]
            block = []
        out.append(line)
    return "\n".join(out).strip()


def _signature(fn: Any, drop_self: bool) -> str:
    args = fn.args
    text = ast.unparse(args)
    if drop_self and (args.posonlyargs or args.args) and (args.posonlyargs or args.args)[0].arg in ("self", "cls"):
        first = (args.posonlyargs or args.args)[0].arg
        text = re.sub(rf"^{first}(: [^,]+)?(, )?", "", text)
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"({text}){ret}"


def _is_overload(fn: Any) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in fn.decorator_list)


def _module_defs(path: Path) -> Dict[str, Any]:
    tree = ast.parse(path.read_text())
    defs: Dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if isinstance(node, ast.ClassDef) or not _is_overload(node):
                defs.setdefault(node.name, node)
    return defs


def _render(name: str, node: Any, qual: str) -> List[str]:
    out = [f"#### `{qual}{name}`", ""]
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        init = next(
            (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__" and not _is_overload(n)),
            None,
        )
        sig = _signature(init, True) if init is not None else ""
        out += [f"`class {name}{sig.split(' -> ')[0]}`" + (f" ({bases})" if bases else ""), ""]
        if ast.get_docstring(node):
            out += [_doc(ast.get_docstring(node) or ""), ""]
        methods = [
            n
            for n in node.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not n.name.startswith("_")
            and not _is_overload(n)
        ]
        seen = set()
        for m in methods:
            if m.name in seen:
                continue
            seen.add(m.name)
            is_prop = any(isinstance(d, ast.Name) and d.id == "property" for d in m.decorator_list)
            prefix = "async " if isinstance(m, ast.AsyncFunctionDef) else ""
            sig = "" if is_prop else _signature(m, True)
            head = f"- `{prefix}{m.name}{sig}`" + (" (property)" if is_prop else "")
            doc = ast.get_docstring(m)
            first = " ".join(doc.split("\n\n")[0].split()) if doc else ""
            first = re.sub(r"``([^`]+)``", r"`\1`", first)
            out.append(head + (f": {first}" if first else ""))
        out.append("")
    else:
        prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
        out += [f"`{prefix}def {name}{_signature(node, False)}`", ""]
        if ast.get_docstring(node):
            out += [_doc(ast.get_docstring(node) or ""), ""]
    return out


def python_api() -> str:
    """The public names of ``parlance`` (its ``__all__``) and of
    ``parlance.testing``, from the sources and the native module's stub."""
    parts: List[str] = []
    for module, qual in (("__init__.py", "parlance."), ("testing.py", "parlance.testing.")):
        tree = ast.parse((PKG / module).read_text())
        names: List[str] = []
        where: Dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                names = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]  # type: ignore[attr-defined]
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                for a in node.names:
                    where[a.asname or a.name] = node.module
        local = _module_defs(PKG / module)
        parts.append(f"### `{qual.rstrip('.')}`\n")
        for name in names:
            node = local.get(name)
            if node is None and name in where:
                src = PKG / f"{where[name]}.py"
                if not src.exists():
                    src = PKG / f"{where[name]}.pyi"
                node = _module_defs(src).get(name)
            if node is None:
                continue  # a module, a constant, a TypedDict alias: see their own sections
            parts.extend(_render(name, node, qual))
    return "\n".join(parts)


def on_post_build(config: Any) -> None:
    site = Path(config["site_dir"])
    (site / "index.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>Parlance</title>'
        '<meta http-equiv="refresh" content="0; url=guide/">'
        '<link rel="canonical" href="guide/"><a href="guide/">The Parlance guide</a>\n'
    )
