"""Fixtures: a scripted OpenAI mock on 127.0.0.1 and agents pointed at it.

These tests import the installed wheel (scripts/test-python builds it and
installs it into a fresh virtual environment), never the source tree."""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Any, Iterator, Protocol

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from mock_openai import MockOpenAI

import parlance
from parlance.types import ToolResult

REPO = pathlib.Path(__file__).resolve().parents[3]


class HasURL(Protocol):
    """A mock, or anything with the base URL of one."""

    url: str


def pytest_report_header() -> str:
    return f"parlance {parlance.__version__} from {pathlib.Path(parlance.__file__).parent}"


@pytest.fixture
def mock() -> Iterator[MockOpenAI]:
    m = MockOpenAI()
    yield m
    m.close()


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: Any, tmp_path: Any) -> str:
    """A store URL: a real SQLite file, or the PostgreSQL server scripts/test
    starts (PARLANCE_TEST_POSTGRES_URL; with PARLANCE_REQUIRE_POSTGRES=1 its
    absence fails, as in the Rust store suite)."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/threads.db"
    pg = os.environ.get("PARLANCE_TEST_POSTGRES_URL")
    if not pg:
        if os.environ.get("PARLANCE_REQUIRE_POSTGRES"):
            pytest.fail("PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not")
        pytest.skip("no PostgreSQL (set PARLANCE_TEST_POSTGRES_URL)")
    return pg


def make_agent(mock: HasURL, **kw: Any) -> parlance.Agent[Any]:
    return parlance.Agent("gpt-4o-mini", provider=parlance.OpenAI(base_url=mock.url, api_key="sk-test"), **kw)


def text_of(result: ToolResult) -> str:
    """A tool result's text (every block of it is text)."""
    texts = [b["text"] for b in result["content"] if b["type"] == "text"]
    assert len(texts) == len(result["content"]), result["content"]
    return "".join(texts)
