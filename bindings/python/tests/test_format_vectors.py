"""The shared vectors of ``testdata/format/`` give the same results and
the same error strings in Python as in Rust (crates/format/tests/vectors.rs
runs the same files)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from conftest import REPO

import parlance
from parlance import FormatError, format


def load(name: str) -> List[Dict[str, Any]]:
    cases: List[Dict[str, Any]] = json.loads((REPO / "testdata" / "format" / name).read_text())
    return cases


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


VALID = load("valid.json")
LEGACY = load("legacy.json")
INVALID = load("invalid.json")


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_valid_documents_round_trip_byte_identically(case: Dict[str, Any]) -> None:
    out = format.dumps(case["value"], kind=case["kind"])
    assert out == compact(case["value"])
    assert format.dumps(json.loads(out), kind=case["kind"]) == out
    format.validate(case["value"], kind=case["kind"])
    assert format.loads(out, kind=case["kind"]) == case["value"]


@pytest.mark.parametrize("case", LEGACY, ids=[c["name"] for c in LEGACY])
def test_older_shapes_read_into_canonical_form(case: Dict[str, Any]) -> None:
    assert format.canonical(case["input"], kind=case["kind"]) == case["expected"]
    assert format.dumps(case["input"], kind=case["kind"]) == compact(case["expected"])


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_invalid_documents_fail_with_the_exact_rust_error(case: Dict[str, Any]) -> None:
    with pytest.raises(FormatError) as e:
        if "text" in case:
            format.loads(case["text"], kind="conversation")
        elif isinstance(case["input"], str):
            # A str is JSON text: the document that is a string, written out.
            format.validate(json.dumps(case["input"]), kind=case["kind"])
        else:
            format.validate(case["input"], kind=case["kind"])
    assert str(e.value) == case["error"]
    assert isinstance(e.value, ValueError)
    if "text" not in case:
        path, _, message = case["error"].partition(": ")
        assert e.value.path == ("" if path == "(root)" else path)
        assert e.value.message == message


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_validate_without_a_kind_recognises_it_as_parlance_validate_does(case: Dict[str, Any]) -> None:
    """Parsed values and JSON text (str and bytes) alike."""
    text = compact(case["value"])
    assert format.validate(case["value"]) == case["kind"]
    assert format.validate(text) == case["kind"]
    assert format.validate(text.encode()) == case["kind"]
    assert format.dumps(text) == text
    assert format.loads(text) == case["value"]


def test_validate_without_a_kind_names_the_error_of_the_kind_it_recognised() -> None:
    with pytest.raises(FormatError) as e:
        format.validate('{"role": "robot", "content": []}')
    assert str(e.value).startswith('role: unknown role "robot"')
    with pytest.raises(FormatError) as e:
        format.validate('[{"role": "user",')
    assert str(e.value) == "(root): invalid JSON at line 1 column 17: EOF while parsing a value"
    request = {"model": "gpt-5", "messages": [{"role": "user", "content": "Hi"}]}
    assert format.validate(request) == "request"
    assert format.canonical(request)["messages"][0]["content"] == [{"type": "text", "text": "Hi"}]


def test_response_vectors_through_the_response_class() -> None:
    for case in VALID:
        if case["kind"] == "response":
            r = parlance.Response.from_dict(case["value"])
            assert r.to_json() == compact(case["value"])
    for case in INVALID:
        if case["kind"] == "response":
            with pytest.raises(FormatError) as e:
                parlance.Response.from_dict(case["input"])
            assert str(e.value) == case["error"]


def test_schemas_are_the_published_files() -> None:
    for name in ["message", "content-block", "tool-spec", "response", "decision"]:
        on_disk = json.loads((REPO / "schema" / f"{name}.schema.json").read_text())
        assert format.schema(name) == on_disk
    with pytest.raises(parlance.ConfigError, match="no schema named"):
        format.schema("nosuch")
    with pytest.raises(parlance.ConfigError, match="unknown kind"):
        format.validate({}, kind="nosuch")  # type: ignore[arg-type]
