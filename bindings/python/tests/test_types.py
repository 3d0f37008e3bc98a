"""The canonical format's TypedDicts (parlance.types): generated from
schema/ and in step with it, admitting every canonical document of the
shared vectors, refusing a wrong one, and what a type checker enforces on
users' code through the installed package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import REPO
from pydantic import TypeAdapter, ValidationError

from parlance import types

GENERATOR = REPO / "bindings" / "python" / "scripts" / "gen-types.py"
# The vector kinds with a TypedDict, and the TypedDict.
TYPED: Dict[str, Any] = {
    "message": types.Message,
    "block": types.Block,
    "response": types.ResponseDocument,
    "decision": types.Decision,
    "tool_spec": types.ToolSpec,
}


def test_the_installed_types_are_what_the_schemas_give() -> None:
    out = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    installed = Path(types.__file__).read_text()
    assert installed == (REPO / "bindings" / "python" / "python" / "parlance" / "types.py").read_text()


def test_the_check_fails_when_a_schema_changes(tmp_path: Path) -> None:
    # The generator reads ../../../schema from where it is: a copy whose
    # schema gained a role must no longer match the committed types.
    (tmp_path / "schema").mkdir()
    for f in (REPO / "schema").glob("*.schema.json"):
        schema = json.loads(f.read_text())
        if "Role" in schema.get("$defs", {}):
            schema["$defs"]["Role"]["oneOf"].append({"type": "string", "const": "robot"})
        (tmp_path / "schema" / f.name).write_text(json.dumps(schema))
    scripts = tmp_path / "bindings" / "python" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "gen-types.py").write_text(GENERATOR.read_text())
    out_dir = tmp_path / "bindings" / "python" / "python" / "parlance"
    out_dir.mkdir(parents=True)
    (out_dir / "types.py").write_text(Path(types.__file__).read_text())
    out = subprocess.run(
        [sys.executable, str(scripts / "gen-types.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 1
    assert "differs from what schema/ gives" in out.stderr


def vectors() -> List[Dict[str, Any]]:
    cases: List[Dict[str, Any]] = json.loads((REPO / "testdata" / "format" / "valid.json").read_text())
    return [c for c in cases if c["kind"] in TYPED]


@pytest.mark.parametrize("case", vectors(), ids=lambda c: c["name"])
def test_every_canonical_vector_is_a_value_of_its_type(case: Dict[str, Any]) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(TYPED[case["kind"]])
    assert adapter.validate_python(case["value"], strict=True) == case["value"]


def test_a_wrong_document_is_not_a_value_of_its_type() -> None:
    with pytest.raises(ValidationError, match="role"):
        TypeAdapter(types.Message).validate_python({"role": "robot", "content": []})
    with pytest.raises(ValidationError, match="text"):
        TypeAdapter(types.Block).validate_python({"type": "text"})


GOOD = """
from typing import List
import parlance
from parlance.types import Block, Message

def texts(messages: List[Message]) -> List[str]:
    return [b["text"] for m in messages for b in m["content"] if b["type"] == "text"]

m: Message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
r = parlance.Response.from_json("{}")
print(texts([m, *r.messages]), r.to_dict()["usage"]["input_tokens"])
d = parlance.format.canonical(m, kind="message")
b: Block = d["content"][0]
"""

BAD = """
from parlance.types import Message

def first_text(m: Message) -> str:
    return m["content"][0]["text"]  # not every block has text

wrong: Message = {"role": "robot", "content": []}
"""


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "snippet.py").write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "snippet.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_type_checker_reads_the_installed_types(tmp_path: Path) -> None:
    good = mypy(tmp_path, GOOD)
    assert good.returncode == 0, good.stdout
    bad = mypy(tmp_path, BAD)
    assert bad.returncode == 1, bad.stdout
    assert 'TypedDict "ImageBlock" has no key "text"' in bad.stdout
    assert "Literal['robot']" in bad.stdout
