"""A scripted OpenAI Chat Completions server on 127.0.0.1 for the tests:
it answers from a script (a function of the request body) and keeps every
request it got, so tests can check what the model was sent."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

Reply = Dict[str, Any]
Script = Callable[[Dict[str, Any]], Reply]


def text(content: str, pace: float = 0.0) -> Reply:
    """A final answer; streamed, a word every `pace` seconds."""
    return {"text": content, "pace": pace}


def calls(*items: Tuple[str, str, Dict[str, Any]]) -> Reply:
    """Tool calls: ``(id, name, arguments)``."""
    return {"tool_calls": list(items)}


def error(status: int, message: str, headers: Optional[Dict[str, str]] = None) -> Reply:
    """An HTTP error answer: ``status`` with OpenAI's error body."""
    return {"status": status, "message": message, "headers": dict(headers or {})}


def tool_messages(body: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The ``role: tool`` messages of a request."""
    return [m for m in body["messages"] if m["role"] == "tool"]


def after_tools(first: Reply, answer: Callable[[Dict[str, Any]], str]) -> Script:
    """Asks for ``first`` when the last message is the user's; otherwise
    answers with ``answer(body)``."""

    def script(body: Dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "user":
            return first
        return text(answer(body))

    return script


class MockOpenAI:
    def __init__(self, script: Optional[Script] = None) -> None:
        self.script: Script = script or (lambda body: text("Hello."))
        self.requests: List[Dict[str, Any]] = []
        # Each request's headers, names lowercased, in the order received.
        self.headers: List[Dict[str, str]] = []
        self._lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                with mock._lock:
                    mock.requests.append(body)
                    mock.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    reply = mock.script(body)
                except Exception as e:  # a test's script failed: say so
                    data = json.dumps({"error": {"message": f"mock script: {e!r}"}}).encode()
                    self.send_response(400)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if "status" in reply:
                    data = json.dumps({"error": {"message": reply["message"], "type": "mock"}}).encode()
                    self.send_response(reply["status"])
                    for k, v in reply["headers"].items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                elif body.get("stream"):
                    self._stream(reply, body)
                else:
                    data = json.dumps(completion(reply, body)).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            def _stream(self, reply: Reply, body: Dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in chunks(reply, body):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    if reply.get("pace"):
                        self.wfile.flush()
                        time.sleep(reply["pace"])
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _message(reply: Reply) -> Tuple[Dict[str, Any], str]:
    if "tool_calls" in reply:
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in reply["tool_calls"]
        ]
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls"
    return {"role": "assistant", "content": reply["text"]}, "stop"


def completion(reply: Reply, body: Dict[str, Any]) -> Dict[str, Any]:
    message, finish = _message(reply)
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "gpt-4o-mini"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chunks(reply: Reply, body: Dict[str, Any]) -> List[Dict[str, Any]]:
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
    out: List[Dict[str, Any]] = []
    message, finish = _message(reply)
    if finish == "stop":
        words = message["content"].split(" ")
        for i, w in enumerate(words):
            piece = w if i == 0 else " " + w
            out.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    else:
        for n, tc in enumerate(message["tool_calls"]):
            args = tc["function"]["arguments"]
            half = len(args) // 2
            out.append(
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "tool_calls": [
                                    {
                                        "index": n,
                                        "id": tc["id"],
                                        "type": "function",
                                        "function": {"name": tc["function"]["name"], "arguments": args[:half]},
                                    }
                                ]
                            },
                            "finish_reason": None,
                        }
                    ],
                }
            )
            out.append(
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": n, "function": {"arguments": args[half:]}}]},
                            "finish_reason": None,
                        }
                    ],
                }
            )
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    out.append({**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return out
