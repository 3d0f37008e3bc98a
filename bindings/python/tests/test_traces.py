"""Traces from Python: ``export_traces`` sends the GenAI spans of a run to
an OTLP collector (a receiver on 127.0.0.1 here, speaking OTLP/HTTP
JSON): one trace, ``invoke_agent`` the parent of the ``chat`` and
``execute_tool`` spans, the failed call's span in error, the service name
given; the runtime's logs still reach ``logging`` once a subscriber is
installed; a second export and bad settings are refused."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Dict, Iterator, List

import pytest
from conftest import make_agent
from mock_openai import text

from parlance import Agent, ConfigError, export_traces, tool
from parlance.testing import FunctionModel, RequestInfo


class Collector:
    """An OTLP/HTTP receiver: the JSON bodies posted to /v1/traces."""

    def __init__(self) -> None:
        self.bodies: List[Dict[str, Any]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/traces":
                    collector.bodies.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> List[Dict[str, Any]]:
        return [
            span
            for body in self.bodies
            for rs in body["resourceSpans"]
            for ss in rs["scopeSpans"]
            for span in ss["spans"]
        ]

    def service_names(self) -> List[str]:
        return [
            a["value"]["stringValue"]
            for body in self.bodies
            for rs in body["resourceSpans"]
            for a in rs["resource"]["attributes"]
            if a["key"] == "service.name"
        ]


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.server.shutdown()


def call(id: str, name: str) -> Dict[str, Any]:
    return {"type": "tool_call", "tool_call": {"id": id, "name": name, "arguments": {"order_id": "A-1"}}}


def attribute(span: Dict[str, Any], key: str) -> Any:
    for a in span.get("attributes", []):
        if a["key"] == key:
            return next(iter(a["value"].values()))
    return None


def test_a_run_is_one_span_tree_at_the_collector(
    collector: Collector, mock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    @tool
    def lookup(order_id: str) -> str:
        """Looks an order up."""
        return "shipped"

    @tool
    def refund(order_id: str) -> str:
        """Refunds an order."""
        raise RuntimeError("the payment service is down")

    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        if messages[-1]["role"] != "tool":
            return {
                "content": [
                    call("c1", "lookup"),
                    call("c2", "refund"),
                ]
            }
        return "Done."

    traces = export_traces(collector.url, service_name="shop-py", protocol="http/json")
    with pytest.raises(ConfigError, match="traces: this process already exports its traces"):
        export_traces(collector.url)
    r = Agent(FunctionModel(answer), name="support", tools=[lookup, refund]).run_sync("Refund A-1")
    assert r.text == "Done."
    traces.flush()

    assert collector.service_names() and set(collector.service_names()) == {"shop-py"}
    spans = collector.spans()
    by_name = {s["name"]: s for s in spans}
    assert sorted(by_name) == ["chat answer", "execute_tool lookup", "execute_tool refund", "invoke_agent support"]
    assert len([s for s in spans if s["name"] == "chat answer"]) == 2
    root = by_name["invoke_agent support"]
    assert not root.get("parentSpanId")
    assert {s["traceId"] for s in spans} == {root["traceId"]}
    for s in spans:
        if s is not root:
            assert s["parentSpanId"] == root["spanId"], s["name"]
    assert attribute(root, "gen_ai.operation.name") == "invoke_agent"
    failed = by_name["execute_tool refund"]
    assert attribute(failed, "error.type") == "tool_failed"
    assert failed["status"]["code"] in (2, "STATUS_CODE_ERROR")
    assert attribute(by_name["execute_tool lookup"], "gen_ai.tool.call.id") == "c1"
    # No message content by default.
    assert all(attribute(s, "gen_ai.input.messages") is None for s in spans)

    # With the subscriber installed, the runtime's logs still reach
    # `logging` (a request's dropped thinking is a warning).
    mock.script = lambda body: text("ok")
    earlier = [
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {
            "role": "assistant",
            "provider": "anthropic",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "sig", "provider": "anthropic"},
                {"type": "text", "text": "Sunny."},
            ],
        },
    ]
    with caplog.at_level(logging.WARNING):
        make_agent(mock).run_sync("And tomorrow?", turns=[{"messages": earlier}])
    drops = [x for x in caplog.records if "thinking dropped" in x.getMessage()]
    assert len(drops) == 1, [x.getMessage() for x in caplog.records]
    assert drops[0].name.startswith("parlance_providers") and drops[0].levelno == logging.WARNING


def test_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ConfigError, match=r'traces: endpoint: expected an http:// or https:// URL, got "localhost'):
        export_traces("localhost:4318")
    with pytest.raises(ConfigError, match=r'traces: protocol: expected http/protobuf or http/json, got "grpc"'):
        export_traces("http://127.0.0.1:4318", protocol="grpc")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"traces: headers.x: expected a string, got 1"):
        export_traces("http://127.0.0.1:4318", headers={"x": 1})  # type: ignore[dict-item]
