#!/usr/bin/env python3
"""Seeds each fuzz target's corpus from the recorded payloads.

Usage: fuzz/seeds.py CORPUS_DIR

Writes CORPUS_DIR/<target>/<name> files taken from testdata/providers
(requests, responses, streams and error answers with their headers, of
each API), testdata/format (canonical
documents, old shapes, invalid inputs) and examples/. Files already there
are kept (a corpus grows as the fuzzer finds inputs).
"""
import hashlib
import json
import os
import struct
import sys
import zlib

import yaml

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
PROVIDERS = os.path.join(ROOT, "testdata", "providers")
FORMATS = {
    "openai_chat": ("openai-chat", "/chat/completions"),
    "openai_responses": ("openai-responses", "/responses"),
    "anthropic": ("anthropic", "/v1/messages"),
    "gemini": ("gemini", "generativelanguage"),
    "mistral": ("mistral", "/v1/chat/completions"),
    "ollama": ("ollama", "/api/chat"),
    "bedrock_converse": ("bedrock-converse", "bedrock-runtime"),
}
ORDER = list(FORMATS)  # encode_after_decode's first byte picks one of these (WIRE_FORMATS order)


def put(corpus, target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha256(data).hexdigest()[:16]
    path = os.path.join(d, name)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)


def sse(events):
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def event_stream(events):
    """Recorded ConverseStream events (`{"eventName": payload}`) as AWS
    event-stream messages (see `event_stream_message`)."""
    out = b""
    for e in events:
        (name, payload), = e.items()
        headers = ((":message-type", "event"), (":event-type", name), (":content-type", "application/json"))
        out += event_stream_message(headers, json.dumps(payload).encode())
    return out


def event_stream_message(headers, body):
    """One AWS event-stream message: prelude (total and headers length,
    CRC32), string headers, the payload, the message CRC32."""
    h = b""
    for k, v in headers:
        h += bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
    total = 12 + len(h) + len(body) + 4
    prelude = struct.pack(">II", total, len(h))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    msg = prelude + h + body
    return msg + struct.pack(">I", zlib.crc32(msg))


def stream_seed(key, events):
    """A stream seed in the framing of `key`'s API."""
    return event_stream(events) if key == "bedrock_converse" else sse(events)


def provider_seeds(corpus, key, folder, uri_part):
    base = os.path.join(PROVIDERS, folder)
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name)
        text = open(path, encoding="utf-8").read()
        if name.endswith(".yaml"):
            # Integers beyond 64 bits, as the Rust tests read them.
            doc = yaml.safe_load(text)
            for it in doc.get("interactions", []):
                if uri_part not in it["request"].get("uri", ""):
                    continue
                body = it["request"].get("parsed_body")
                if body is None and isinstance(it["request"].get("body"), str):
                    try:
                        body = json.loads(it["request"]["body"])
                    except ValueError:
                        body = None
                if body is not None:
                    put(corpus, f"decode_request_{key}", json.dumps(body))
                    put(corpus, "encode_after_decode", bytes([ORDER.index(key)]) + json.dumps(body).encode())
                    request_tools(corpus, body)
                resp = it["response"]
                if "string" in resp.get("body", {}):
                    put(corpus, f"decode_stream_{key}", resp["body"]["string"])
                elif resp.get("parsed_body") is not None:
                    put(corpus, f"decode_response_{key}", json.dumps(resp["parsed_body"]))
        elif name.endswith("request.json"):
            put(corpus, f"decode_request_{key}", text)
            if key == "openai_chat":
                # No Mistral request is recorded; Chat's are Mistral-shaped.
                put(corpus, "decode_request_mistral", text)
            put(corpus, "encode_after_decode", bytes([ORDER.index(key)]) + text.encode())
            request_tools(corpus, json.loads(text))
        elif name.endswith("response-streaming.json"):
            put(corpus, f"decode_stream_{key}", stream_seed(key, json.loads(text)))
        elif name.endswith(".ndjson"):
            put(corpus, f"decode_stream_{key}", text)
        elif name.endswith(".chunks.txt"):
            lines = [l for l in text.splitlines() if l.strip()]
            if key == "bedrock_converse":
                put(corpus, f"decode_stream_{key}", event_stream([json.loads(l) for l in lines]))
            else:
                put(corpus, f"decode_stream_{key}", "".join(f"data: {l}\n\n" for l in lines))
        elif name.endswith(".json"):
            put(corpus, f"decode_response_{key}", text)


def error_seeds(corpus, key, status, body, headers=None):
    """A recorded failed answer: for `classify_error` (format byte, status,
    body) and, with its headers, for `retry_headers`."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    pick = ORDER.index(key)
    put(corpus, "classify_error", bytes([pick]) + struct.pack(">H", status) + body)
    put(corpus, "classify_error", bytes([pick | 0x80]) + struct.pack(">H", status) + body)
    if headers:
        put(corpus, "retry_headers", header_lines(headers))


def header_lines(headers):
    """Recorded headers (`name: [values]`) as the lines `retry_headers` reads."""
    lines = []
    for k, vs in headers.items():
        for v in vs if isinstance(vs, list) else [vs]:
            lines.append(f"{k}: {v}")
    return "\n".join(lines)


# The waits and rate-limit headers providers document (OpenAI's
# x-ratelimit-*, Anthropic's anthropic-ratelimit-*, the retry hints), and
# the extremes issue 39 found.
DOCUMENTED_HEADERS = [
    "retry-after: 30",
    "retry-after: 0.5\nx-should-retry: true",
    "retry-after-ms: 1500\nretry-after: 2",
    "retry-after: Wed, 21 Oct 2015 07:28:00 GMT",
    "retry-after: 1e30",
    "retry-after-ms: inf",
    "retry-after-ms: NaN\nretry-after: -1",
    "x-should-retry: false\nretry-after: 3",
    "x-ratelimit-limit-requests: 60\nx-ratelimit-remaining-requests: 0\nx-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 6m0s",
    "anthropic-ratelimit-requests-limit: 50\nanthropic-ratelimit-requests-remaining: 0\nanthropic-ratelimit-requests-reset: 2025-01-01T00:00:30Z\nretry-after: 30",
    "content-type: application/json\ncontent-length: 18446744073709551616",
]


def failure_seeds(corpus):
    """Recorded error answers of every API, for the classifiers and the
    header reader; AWS event-stream messages for the framing."""
    for key, (folder, uri_part) in FORMATS.items():
        base = os.path.join(PROVIDERS, folder)
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            text = open(path, encoding="utf-8").read()
            if name.endswith(".yaml"):
                for it in yaml.safe_load(text).get("interactions", []):
                    resp = it["response"]
                    status = resp.get("status", {}).get("code", 200)
                    headers = resp.get("headers") or {}
                    if headers:
                        put(corpus, "retry_headers", header_lines(headers))
                    if status >= 400:
                        body = resp.get("parsed_body")
                        if body is None:
                            body = (resp.get("body") or {}).get("string", "")
                        error_seeds(corpus, key, status, body, headers)
            elif "error" in name and name.endswith(".json"):
                for status in (429 if "429" in name else 400, 500):
                    error_seeds(corpus, key, status, text)
    compatible = os.path.join(PROVIDERS, "openai-compatible")
    for name in sorted(os.listdir(compatible)):
        if "error" in name and name.endswith(".json"):
            text = open(os.path.join(compatible, name), encoding="utf-8").read()
            error_seeds(corpus, "openai_chat", 429 if "rate-limit" in name else 400, text)
    # Issue 39: a Gemini 429 asking for a wait no duration holds.
    huge = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted",
                      "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1844674407370955161534.4s"}]}}
    error_seeds(corpus, "gemini", 429, huge)
    for text in DOCUMENTED_HEADERS:
        put(corpus, "retry_headers", text)
    # ConverseStream's own failures: an exception event and an error message.
    exception = event_stream_message(
        [(":message-type", "exception"), (":exception-type", "throttlingException"), (":content-type", "application/json")],
        json.dumps({"message": "Too many requests, please wait before trying again."}).encode())
    error = event_stream_message(
        [(":message-type", "error"), (":error-code", "InternalFailure"), (":error-message", "An internal error occurred")], b"")
    for data in (exception, error):
        put(corpus, "decode_stream_bedrock_converse", data)
        put(corpus, "event_stream_framing", bytes([1]) + data)


def framing_seeds(corpus):
    """`event_stream_framing`: each recorded ConverseStream, its CRCs kept
    (mode bit 0 clear) or set right again (set), in chunks of 1, 7 and 128
    bytes."""
    d = os.path.join(corpus, "decode_stream_bedrock_converse")
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        data = open(os.path.join(d, name), "rb").read()
        for mode in (0, 1, 13, 255):
            put(corpus, "event_stream_framing", bytes([mode]) + data)


def request_tools(corpus, body):
    """Tool schemas (and sample arguments) for the argument validator."""
    tools = body.get("tools") or []
    for t in tools:
        if not isinstance(t, dict):
            continue
        schema = (t.get("function") or {}).get("parameters") or t.get("input_schema") or t.get("parameters")
        for d in t.get("functionDeclarations") or []:
            schema = d.get("parametersJsonSchema") or d.get("parameters") or schema
        if isinstance(schema, dict):
            for args in ({}, {"location": "Paris"}, {"a": [1, 2, {"b": None}]}):
                put(corpus, "arguments", json.dumps(schema).encode() + b"\0" + json.dumps(args).encode())


def format_seeds(corpus):
    base = os.path.join(ROOT, "testdata", "format")
    for name in sorted(os.listdir(base)):
        for case in json.load(open(os.path.join(base, name), encoding="utf-8")):
            for key in ("value", "input", "expected"):
                if key in case:
                    put(corpus, "canonical_reader", json.dumps(case[key]))
                    if case.get("kind") == "conversation":
                        put(corpus, "request_document", json.dumps(case[key]))
            if "text" in case:
                put(corpus, "canonical_reader", case["text"])
    example = os.path.join(ROOT, "examples", "conversation.json")
    if os.path.exists(example):
        text = open(example, encoding="utf-8").read()
        put(corpus, "canonical_reader", text)
        put(corpus, "request_document", text)
    put(corpus, "request_document", json.dumps({
        "model": "m", "stream": True,
        "messages": [{"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "cache_point", "cache_point": {"ttl": "1h"}}]},
                     {"role": "user", "content": "Hi"}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}, "cache_point": {}}],
        "options": {"max_tokens": 5, "reasoning": {"effort": "high", "summary": "detailed"}, "tool_choice": {"tool": "f"},
                    "extra": {"anthropic": {"cache_control": {"type": "ephemeral"}}}}}))


def main():
    corpus = sys.argv[1]
    for key, (folder, uri_part) in FORMATS.items():
        provider_seeds(corpus, key, folder, uri_part)
    format_seeds(corpus)
    failure_seeds(corpus)
    framing_seeds(corpus)


if __name__ == "__main__":
    main()
