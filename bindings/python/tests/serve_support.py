"""What the tests of the protocols `parlance serve` speaks share: an HTTP
tool that records its calls, a configuration whose agent `support` has a
tool and a tool that waits for approval, the server started on it."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from test_guide import parlance_bin

TOKEN = "tok-ann-0123456789"
"""`ann`'s token (`bob`'s is `tok-bob-0123456789`)."""


class Recorder:
    """An HTTP tool that records the arguments it was sent."""

    def __init__(self) -> None:
        self.got: List[Dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                args = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                recorder.got.append(args)
                data = json.dumps({"done": True, **args}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def write_config(tmp_path: pathlib.Path, tool: Recorder) -> pathlib.Path:
    config = tmp_path / "parlance.toml"
    config.write_text(
        f"""
[store]
url = "sqlite://{tmp_path}/serve.db"
identity_dir = "{tmp_path}/identity"

[agents.support]
model = "openai:gpt-4o-mini"
instructions = "You answer about orders."
tools = ["get_order", "refund"]

[tools.get_order]
kind = "http"
url = "{tool.url}/orders"
description = "Look up one order by its id."
input_schema = '{{"type": "object", "properties": {{"order_id": {{"type": "string"}}}}, "required": ["order_id"]}}'

[tools.refund]
kind = "http"
url = "{tool.url}/refunds"
description = "Refund an order."
needs_approval = true
input_schema = '{{"type": "object", "properties": {{"amount": {{"type": "number"}}}}, "required": ["amount"]}}'
"""
    )
    return config


def environment(mock: Any) -> Dict[str, str]:
    return {
        **os.environ,
        "OPENAI_BASE_URL": mock.url,
        "OPENAI_API_KEY": "sk-test",
        "PARLANCE_API_TOKENS": f"ann={TOKEN},bob=tok-bob-0123456789",
        "RUST_LOG": "warn",
    }


@pytest.fixture
def support_served(mock: Any, tmp_path: pathlib.Path) -> Iterator[Tuple[str, Recorder, pathlib.Path]]:
    """`parlance serve` with an agent that has a tool and a tool that waits
    for approval; its URL, the tools' recorder, the configuration."""
    tool = Recorder()
    config = write_config(tmp_path, tool)
    env = {**environment(mock), "PARLANCE_LISTEN": "127.0.0.1:0"}
    proc = subprocess.Popen(
        [str(parlance_bin()), "serve", "--config", str(config)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        m = re.search(r"listening on (http://\S+)", proc.stdout.readline())
        assert m, "parlance serve did not start"
        yield m.group(1), tool, config
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        tool.server.shutdown()
