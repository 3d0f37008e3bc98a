"""mkdocs hooks of the documentation site (mkdocs.yml):

- Links from a page to a file of the repository outside docs/ (a crate's
  source, schema/, README.md) point at that file in the repository
  (``repo_url``), so the design records keep their links and --strict
  still refuses a link to a missing page.
- ``<!-- schemas -->`` on a page becomes the JSON formats rendered from
  schema/*.schema.json: each document's fields, and the schema itself.
- The site's root redirects to the guide.
"""

from __future__ import annotations

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

            def fix(m: "re.Match[str]") -> str:
                url = _outside(page.file.src_uri, m.group(2), config)
                return f"{m.group(1)}{url}{m.group(3)}" if url else m.group(0)

            line = LINK.sub(fix, line)
            if line.strip() == "<!-- schemas -->":
                line = schemas()
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
        parts.append(f"`schema/{path.name}`" + (f": {_cell(doc['description'])}" if doc.get("description") else "") + "\n")
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


def on_post_build(config: Any) -> None:
    site = Path(config["site_dir"])
    (site / "index.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>Parlance</title>'
        '<meta http-equiv="refresh" content="0; url=guide/">'
        '<link rel="canonical" href="guide/"><a href="guide/">The Parlance guide</a>\n'
    )
