"""The user guide's examples (docs/guide/examples/python, included by the
pages of docs/guide), run as a reader runs them: the whole file as
``__main__``, with the installed package, against the local mock of the
OpenAI API (OPENAI_BASE_URL) where the example names a provider's model.
Each example's output is checked, and so is what it sent.

Also: every code block of the guide's pages is an included example file
that a test suite runs (or a block marked as not runnable: shell, TOML,
JSON, text), and every example file is on a page."""

from __future__ import annotations

import json
import os
import pathlib
import re
import runpy
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from conftest import REPO
from mock_openai import after_tools, calls, text, tool_messages

import parlance

GUIDE = REPO / "docs" / "guide"
EXAMPLES = GUIDE / "examples" / "python"


def run_example(name: str, mock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: Any) -> str:
    """Runs docs/guide/examples/python/NAME.py as a script; its stdout."""
    monkeypatch.setenv("OPENAI_BASE_URL", mock.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    out: str = capsys.readouterr().out
    return out


def user_texts(body: Dict[str, Any]) -> List[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


# Each example: the mock's script, and what its output and the requests must be.
Check = Callable[[str, Any], None]


def check_get_started(out: str, mock: Any) -> None:
    assert out.splitlines()[0] == "Order A-1001 has shipped."
    assert re.fullmatch(r"completed \d+ \d+", out.splitlines()[1])
    assert tool_messages(mock.requests[1])[0]["content"] == '{"order_id":"A-1001","status":"shipped"}'
    assert mock.requests[0]["tools"][0]["function"]["parameters"]["properties"]["order_id"] == {
        "type": "string",
        "description": "The order, like A-1001.",
    }


def check_tools(out: str, mock: Any) -> None:
    assert out.splitlines() == [
        "invalid_arguments: Invalid arguments for refund:",
        "amount: must be at most 500, got 900",
        "error: orders starting with X cannot be refunded",
        "ok: refunded 40 EUR on A-1001 for ada",
        "Refunded 40 EUR on A-1001.",
    ]


def check_approval(out: str, mock: Any) -> None:
    assert out.splitlines() == [
        "requires_approval",
        "waiting: refund {'order_id': 'A-1001', 'amount': 250}",
        "completed Refunded 250 EUR.",
    ]
    assert [m["content"] for m in tool_messages(mock.requests[-1])] == ["refunded 250 EUR on A-1001"]


def check_multi_turn(out: str, mock: Any) -> None:
    assert out.splitlines() == ["You are Ada.", "2 messages in the first turn, 2 in the second"]
    assert user_texts(mock.requests[1]) == ["I am Ada.", "Who am I?"]


def check_threads(out: str, mock: Any) -> None:
    lines = out.splitlines()
    assert lines[0] == "You are Ada."
    assert re.fullmatch(r"4 messages, 2 runs on \S+", lines[1])
    assert user_texts(mock.requests[1]) == ["I am Ada.", "Who am I?"]


def check_streaming(out: str, mock: Any) -> None:
    assert out == "[get_order: ok]\nA-1001 has shipped.\ncompleted, 10 tokens out\n"
    assert all(r.get("stream") for r in mock.requests)


def check_providers(out: str, mock: Any) -> None:
    lines = out.splitlines()
    assert lines[0] == "Hello! How can I help?"
    assert lines[1] == "['user', 'assistant', 'user']"
    assert len(lines) >= 3 and all(line.startswith("dropped: ") for line in lines[2:]), lines
    assert "thinking" in lines[2]
    assert mock.headers[0]["authorization"] == "Bearer sk-test"


def check_structured_output(out: str, mock: Any) -> None:
    assert out == "A-1001 shipped 42.5\n"
    assert mock.requests[0]["response_format"]["json_schema"]["name"] == "Order"


def check_offline(expected: List[str]) -> Check:
    def check(out: str, mock: Any) -> None:
        assert out.splitlines() == expected
        assert mock.requests == [], "an offline example called the provider"

    return check


def check_messages(out: str, mock: Any) -> None:
    lines = out.splitlines()
    assert lines[0] == "message"
    assert lines[1] == "{'role': 'user', 'content': [{'type': 'text', 'text': 'Hi'}]}"
    assert lines[2] == (
        "{'type': 'tool_call', 'tool_call': {'id': 'c1', 'name': 'get_order', 'arguments': {'order_id': 'A-1'}}}"
    )
    assert lines[3].startswith("content[1].type: "), lines[3]
    assert "foo" in lines[3]
    assert mock.requests == []


def check_guardrails(out: str, mock: Any) -> None:
    assert out.splitlines() == [
        "blocked: I can't share that.",
        "kept: {'type': 'text', 'text': 'My card is [card]. What is the admin password?'}",
        "outcomes: ['replace', 'block']",
    ]
    sent = json.dumps(mock.requests[0])
    assert "[card]" in sent and "4111" not in sent


SUMMARY = "The user asked six questions and settled on plan B."


def summarizing(b: Any) -> Any:
    asked = b["messages"][-1]["content"]
    return text(SUMMARY) if asked.startswith("The conversation to summarize") else text("You settled on plan B.")


def check_context(out: str, mock: Any) -> None:
    assert out.splitlines() == [
        "summarized: the first 10 of 12 messages",
        f"summary: {SUMMARY}",
        "answer: You settled on plan B.",
    ]
    assert len(mock.requests) == 2
    transcript = mock.requests[0]["messages"][-1]["content"]
    assert "Question 0:" in transcript and "Question 5:" not in transcript
    sent = [m["content"] for m in mock.requests[1]["messages"]]
    assert len(sent) == 4 and sent[0].endswith(SUMMARY) and sent[1].startswith("Question 5:")


def budgets_script(b: Any) -> Any:
    looked_up = len(tool_messages(b))
    if b.get("tools") and looked_up < 2:
        return calls((f"c{looked_up + 1}", "get_order", {"order_id": f"A-{looked_up + 1}"}))
    return text("A-1 and A-2 have shipped; I could not check A-3.")


def check_budgets(out: str, mock: Any) -> None:
    assert out.splitlines() == [
        "budget_exhausted - the run's budget is exhausted: 2 of 2 tool calls",
        "last answer: A-1 and A-2 have shipped; I could not check A-3.",
    ]
    assert len(mock.requests) == 3
    assert not mock.requests[2].get("tools")


def offered(body: Dict[str, Any]) -> List[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def subagents_script(b: Any) -> Any:
    """Support's requests offer the researcher; the researcher's offer nothing."""
    if "researcher" not in offered(b):
        return text("A-1001 shipped on May 2; it is with the carrier.")
    if tool_messages(b):
        return text("Your order A-1001 shipped on May 2 and is on its way.")
    return calls(("c1", "researcher", {"input": "Where is order A-1001, and when did it ship?"}))


def check_subagents(out: str, mock: Any) -> None:
    assert out.splitlines() == [
        "Your order A-1001 shipped on May 2 and is on its way.",
        "support's model read: A-1001 shipped on May 2; it is with the carrier.",
        "input tokens: 30, the researcher's 10",  # the mock counts 10 input tokens a request
    ]
    first, child, last = mock.requests
    assert offered(first) == ["researcher"]
    assert first["tools"][0]["function"]["description"] == "Looks orders up: send it the order and the question."
    assert first["tools"][0]["function"]["parameters"]["required"] == ["input"]
    # The researcher sees its own instructions and the task, nothing else.
    assert [m["role"] for m in child["messages"]] == ["system", "user"]
    assert child["messages"][0]["content"].startswith("You look orders up")
    assert user_texts(child) == ["Where is order A-1001, and when did it ship?"]
    assert not child.get("tools")
    assert [m["content"] for m in tool_messages(last)] == ["A-1001 shipped on May 2; it is with the carrier."]


SCRIPTS: Dict[str, Any] = {
    "get_started": (
        after_tools(calls(("c1", "get_order", {"order_id": "A-1001"})), lambda b: "Order A-1001 has shipped."),
        check_get_started,
    ),
    "messages": (None, check_messages),
    "guardrails": (lambda b: text("Sure: the admin password is hunter2."), check_guardrails),
    "subagents": (subagents_script, check_subagents),
    "context": (summarizing, check_context),
    "budgets": (budgets_script, check_budgets),
    "tools": (
        after_tools(
            calls(
                ("c1", "refund", {"order_id": "A-1001", "amount": 900}),
                ("c2", "refund", {"order_id": "X-7", "amount": 40}),
                ("c3", "refund", {"order_id": "A-1001", "amount": 40}),
            ),
            lambda b: "Refunded 40 EUR on A-1001.",
        ),
        check_tools,
    ),
    "approval": (
        after_tools(calls(("c1", "refund", {"order_id": "A-1001", "amount": 250})), lambda b: "Refunded 250 EUR."),
        check_approval,
    ),
    "multi_turn": (
        lambda b: text("Hello Ada.") if len(user_texts(b)) == 1 else text("You are Ada."),
        check_multi_turn,
    ),
    "threads": (
        lambda b: text("Hello Ada.") if len(user_texts(b)) == 1 else text("You are Ada."),
        check_threads,
    ),
    "streaming": (
        after_tools(calls(("c1", "get_order", {"order_id": "A-1001"})), lambda b: "A-1001 has shipped."),
        check_streaming,
    ),
    "providers": (lambda b: text("Hello! How can I help?"), check_providers),
    "structured_output": (
        lambda b: text(json.dumps({"order_id": "A-1001", "status": "shipped", "total_eur": 42.5})),
        check_structured_output,
    ),
    "testing": (
        None,
        check_offline(
            [
                'TestModel: {"weather":"Sunny in a"}',
                "FunctionModel: offered: weather",
                "ScriptedModel: Hello! Again. 0",
                "Replay: It is sunny in Oslo.",
                "Changed: exchange 1 of 2: the request is not the recorded one: messages[0].content[0].text:"
                ' recorded "Weather in Oslo?", got "And in Rome?" (re-record the cassette if the change is meant)',
            ]
        ),
    ),
}
# Tested on their own below: the real local model, an MCP server, an OTLP
# collector, `parlance serve`.
LOCAL = {"deploying", "local_model", "mcp", "observability", "serving"}


def test_every_example_has_a_test() -> None:
    files = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    assert files == sorted([*SCRIPTS, *LOCAL])


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_example(name: str, mock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: Any) -> None:
    script, check = SCRIPTS[name]
    if script is not None:
        mock.script = script
    out = run_example(name, mock, monkeypatch, tmp_path, capsys)
    check(out, mock)


def test_local_model_example(mock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: Any) -> None:
    path = parlance.local_model_path()
    if path is None or not pathlib.Path(path).exists():
        if os.environ.get("PARLANCE_REQUIRE_MODEL"):
            pytest.fail(f"PARLANCE_REQUIRE_MODEL is set but the local model is missing ({path})")
        pytest.skip(f"no local model at {path}")
    out = run_example("local_model", mock, monkeypatch, tmp_path, capsys).splitlines()
    assert out[0] == f"model file: {path}"
    assert out[1] == "completed local True"
    assert "".join(out[2:]).strip(), "the local model answered nothing"
    assert mock.requests == []


def test_deploying_example(mock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: Any) -> None:
    """On SQLite (the default URL, a file in the working folder), and on
    PostgreSQL when the tests have one (scripts/test starts it)."""
    monkeypatch.delenv("PARLANCE_STORE_URL", raising=False)
    assert run_example("deploying", mock, monkeypatch, tmp_path, capsys) == "sqlite {'customer': 'ada'} 0\n"
    assert (tmp_path / "parlance.db").exists()
    postgres = os.environ.get("PARLANCE_TEST_POSTGRES_URL")
    if postgres:
        monkeypatch.setenv("PARLANCE_STORE_URL", postgres)
        out = run_example("deploying", mock, monkeypatch, tmp_path, capsys)
        assert out == f"{postgres.split(':')[0]} {{'customer': 'ada'}} 0\n"
    elif os.environ.get("PARLANCE_REQUIRE_POSTGRES"):
        pytest.fail("PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not")


def test_mcp_example(mock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: Any) -> None:
    """Against the MCP server of the repository's tests (testdata/mcp, the
    official Python SDK), over stdio."""
    python = os.environ.get("PARLANCE_MCP_PYTHON", str(REPO / "target" / "mcp-venv" / "bin" / "python"))
    if not pathlib.Path(python).exists():
        if os.environ.get("PARLANCE_REQUIRE_MCP") == "1":
            pytest.fail(f"PARLANCE_REQUIRE_MCP=1 but there is no MCP test server interpreter at {python}")
        pytest.skip("no MCP test server (scripts/mcp-test-server installs it)")
    log = tmp_path / "calls.jsonl"
    server = REPO / "testdata" / "mcp" / "server.py"
    monkeypatch.setenv("MCP_COMMAND", f"{python} {server} --log {log}")
    mock.script = after_tools(calls(("c1", "calc_add", {"a": 2, "b": 3})), lambda b: "2 + 3 = 5.")
    out = run_example("mcp", mock, monkeypatch, tmp_path, capsys)
    assert out.splitlines() == ["called: calc_add {'a': 2, 'b': 3}", "2 + 3 = 5."]
    assert [t["function"]["name"] for t in mock.requests[0]["tools"]] == ["calc_add"]
    assert [m["content"] for m in tool_messages(mock.requests[1])] == ['{"result":5}']  # the structured result
    assert [json.loads(line) for line in log.read_text().splitlines()] == [{"tool": "add", "args": {"a": 2, "b": 3}}]


class Collector:
    """An OTLP/HTTP receiver on 127.0.0.1 (JSON): the spans it got."""

    def __init__(self) -> None:
        self.bodies: List[Dict[str, Any]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                collector.bodies.append({"path": self.path, "body": json.loads(self.rfile.read(length))})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> List[Tuple[str, str]]:
        """(service.name, span name) of every span received."""
        out: List[Tuple[str, str]] = []
        for b in self.bodies:
            for rs in b["body"]["resourceSpans"]:
                attrs = {a["key"]: a["value"].get("stringValue") for a in rs["resource"]["attributes"]}
                for ss in rs["scopeSpans"]:
                    out.extend((attrs.get("service.name", ""), s["name"]) for s in ss["spans"])
        return out


def test_observability_example(mock: Any, tmp_path: pathlib.Path) -> None:
    """In a process of its own (the exporter is once per process), with
    the collector speaking OTLP's JSON."""
    collector = Collector()
    try:
        mock.script = after_tools(calls(("c1", "get_order", {"order_id": "A-1001"})), lambda b: "A-1001 has shipped.")
        env = {
            **os.environ,
            "OPENAI_BASE_URL": mock.url,
            "OPENAI_API_KEY": "sk-test",
            "OTLP_ENDPOINT": collector.url,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        }
        r = subprocess.run(
            [sys.executable, str(EXAMPLES / "observability.py")],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout == "A-1001 has shipped.\n"
        spans = collector.spans()
        assert {p["path"] for p in collector.bodies} == {"/v1/traces"}
        assert sorted(set(spans)) == [
            ("orders", "chat gpt-4o-mini"),
            ("orders", "execute_tool get_order"),
            ("orders", "invoke_agent support"),
        ]
    finally:
        collector.server.shutdown()


def parlance_bin() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("PARLANCE_BIN", str(REPO / "target" / "debug" / "parlance")))
    if not path.exists():
        if os.environ.get("PARLANCE_REQUIRE_MODEL"):  # set by scripts/test, which builds the command first
            pytest.fail(f"no parlance command at {path} (cargo build -p parlance-cli)")
        pytest.skip(f"no parlance command at {path} (cargo build -p parlance-cli)")
    return path


class OrdersTool:
    """The HTTP tool of the guide's configuration: POST /orders."""

    def __init__(self) -> None:
        self.got: List[Dict[str, Any]] = []
        tool = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                args = json.loads(self.rfile.read(length))
                tool.got.append({"path": self.path, "args": args})
                data = json.dumps({"order_id": args["order_id"], "status": "shipped"}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/orders"


@pytest.fixture
def served(mock: Any, tmp_path: pathlib.Path) -> Iterator[Tuple[str, OrdersTool]]:
    """`parlance serve` with the guide's configuration, its model the mock
    and its tool a local server; its URL."""
    tool = OrdersTool()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": mock.url,
        "OPENAI_API_KEY": "sk-test",
        "PARLANCE_LISTEN": "127.0.0.1:0",
        "PARLANCE_STORE_URL": f"sqlite://{tmp_path}/serve.db",
        "PARLANCE__TOOLS__GET_ORDER__URL": tool.url,
    }
    proc = subprocess.Popen(
        [str(parlance_bin()), "serve", "--config", str(GUIDE / "examples" / "parlance.toml")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        err = proc.stderr.read() if proc.stderr is not None and proc.poll() is not None else ""
        assert m, f"parlance serve said {line!r}: {err}"
        yield m.group(1), tool
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        tool.server.shutdown()


def test_serving_example(
    served: Tuple[str, OrdersTool], mock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: Any
) -> None:
    url, tool = served
    mock.script = lambda b: (
        calls(("c1", "get_order", {"order_id": "A-1001"}))
        if b["messages"][-1]["role"] == "user" and user_texts(b)[-1] == "Where is A-1001?"
        else text("A-1001 has shipped." if user_texts(b)[-1] == "Where is A-1001?" else "You're welcome.")
    )
    monkeypatch.setenv("PARLANCE_URL", url)
    out = run_example("serving", mock, monkeypatch, tmp_path, capsys)
    assert out.splitlines() == ["completed A-1001 has shipped.", "completed You're welcome."]
    assert tool.got == [{"path": "/orders", "args": {"order_id": "A-1001"}}]
    # The second run on the thread: the history came from the store.
    assert user_texts(mock.requests[-1]) == ["Where is A-1001?", "Thanks!"]


def test_the_examples_type_check() -> None:
    """mypy --strict on the guide's Python examples, against the installed
    package (its stubs and py.typed), as a reader's type checker sees them."""
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(EXAMPLES)],
        capture_output=True,
        text=True,
        cwd=EXAMPLES,
    )
    assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------- the pages

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)[^\n]*$")
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$')
# Blocks that are not programs: commands, configuration, documents, output.
NOT_RUNNABLE = {"sh", "toml", "json", "text", "http"}
TESTED = (
    "docs/guide/examples/python/",
    "docs/guide/examples/typescript/",
    "crates/parlance/examples/guide_",
    # The API reference shows the packages' own declarations (checked by
    # their type tests: tsc on test/types, mypy --strict on the stubs).
    "bindings/node/lib/index.d.ts",
    "bindings/node/lib/testing.d.ts",
)


def blocks(page: pathlib.Path) -> List[Dict[str, Any]]:
    """The fenced code blocks of a page: language, body lines, line number."""
    out: List[Dict[str, Any]] = []
    current: Dict[str, Any] = {}
    for n, line in enumerate(page.read_text().splitlines(), 1):
        m = FENCE.match(line)
        if not current and m:
            current = {"lang": m.group(3), "fence": m.group(2), "indent": m.group(1), "body": [], "line": n}
        elif current and line.strip() == current["fence"]:
            out.append(current)
            current = {}
        elif current:
            current["body"].append(line.strip())
    assert not current, f"{page.name}:{current.get('line')}: a code block is not closed"
    return out


def test_every_code_block_of_the_guide_is_a_tested_file() -> None:
    pages = sorted(GUIDE.glob("*.md"))
    assert len(pages) >= 15, pages
    included = set()
    problems = []
    for page in pages:
        for b in blocks(page):
            where = f"{page.name}:{b['line']}"
            if b["lang"] in NOT_RUNNABLE:
                continue
            body = [line for line in b["body"] if line]
            m = SNIPPET.match(body[0]) if len(body) == 1 else None
            if not m:
                problems.append(f"{where}: a ```{b['lang']} block that is not an included example file")
                continue
            path = m.group(1).split(":")[0]
            if not path.startswith(TESTED) or not (REPO / path).is_file():
                problems.append(f"{where}: {path} is not a tested example file")
            included.add(path)
    assert problems == []
    examples = {
        str(p.relative_to(REPO))
        for p in [
            *EXAMPLES.glob("*.py"),
            *(GUIDE / "examples" / "typescript").glob("*.ts"),
            *(REPO / "crates" / "parlance" / "examples").glob("guide_*.rs"),
        ]
    }
    assert sorted(examples - included) == [], "example files no page shows"


def test_each_page_shows_its_examples_in_the_three_languages() -> None:
    """A page's tab set names Python, TypeScript and Rust, in that order."""
    missing = []
    for page in sorted(GUIDE.glob("*.md")):
        text_ = page.read_text()
        tabs = re.findall(r'^=== "([^"]+)"', text_, re.M)
        if not tabs:
            continue
        groups = [tabs[i : i + 3] for i in range(0, len(tabs), 3)]
        for g in groups:
            if g != ["Python", "TypeScript", "Rust"]:
                missing.append(f"{page.name}: {g}")
    assert missing == []
