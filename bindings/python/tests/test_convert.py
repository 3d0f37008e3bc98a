"""``parlance.format.convert``: through the canonical format between the
providers' wire formats, with the same readers as ``parlance convert``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REPO

from parlance import ConfigError, FormatError, format

OPENAI = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "Today's weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ],
}


def test_openai_request_to_canonical_and_to_anthropic() -> None:
    canonical: Any = format.convert(OPENAI, from_="openai-chat", to="canonical")
    assert canonical["model"] == "gpt-4o-mini"
    assert [m["role"] for m in canonical["messages"]] == ["system", "user", "assistant", "tool"]
    assert canonical["messages"][2]["content"][0]["tool_call"]["arguments"] == {"city": "Paris"}
    format.validate(canonical["messages"], kind="conversation")
    anthropic: Any = format.convert(canonical, from_="canonical", to="anthropic", model="claude-sonnet-4-5")
    assert anthropic["model"] == "claude-sonnet-4-5"
    assert anthropic["system"] in ("Be brief.", [{"type": "text", "text": "Be brief."}])
    assert anthropic["tools"][0]["input_schema"]["properties"] == {"city": {"type": "string"}}


def test_a_recorded_response_reads_into_a_canonical_message() -> None:
    recorded = sorted((REPO / "testdata" / "providers").rglob("*.json"))
    anthropic = [p for p in recorded if p.name.endswith("__anthropic__response.json")]
    assert anthropic, "recorded Anthropic responses are in testdata/providers"
    message: Any = format.convert(
        json.loads(anthropic[0].read_text()), from_="anthropic", to="canonical", kind="response"
    )
    assert message["role"] == "assistant"
    format.validate(message, kind="message")


def test_bad_conversions_say_what_is_wrong() -> None:
    with pytest.raises(ConfigError, match='unknown format "nosuch"'):
        format.convert({}, from_="nosuch", to="canonical")
    with pytest.raises(ConfigError, match="model: required"):
        format.convert([{"role": "user", "content": "hi"}], from_="canonical", to="gemini")
    with pytest.raises(FormatError, match=r"^messages\[0\]\.role: unknown role"):
        format.convert({"messages": [{"role": "robot", "content": []}]}, from_="canonical", to="canonical")
    with pytest.raises(ConfigError, match="converts only to canonical"):
        format.convert({}, from_="anthropic", to="gemini", kind="response")


def test_what_is_not_carried_is_named_in_a_warning() -> None:
    # The same translation as `parlance convert` (providers::write_request):
    # Responses-only options never reach Chat Completions, and the decoder's
    # own warnings (a participant name has no canonical home) reach Python.
    responses = {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "hi"}],
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }
    with pytest.warns(UserWarning, match=r"options\.extra\.openai-responses not sent to openai-chat.*include"):
        chat: Any = format.convert(responses, from_="openai-responses", to="openai-chat")
    assert "include" not in chat
    canonical: Any = format.convert(responses, from_="openai-responses", to="canonical")
    assert canonical["stream"] is True
    named = {"model": "m", "messages": [{"role": "user", "name": "ann", "content": "hi"}]}
    with pytest.warns(UserWarning, match=r"messages\[0\]\.name"):
        format.convert(named, from_="openai-chat", to="canonical")


def _binary_body(cassette: str) -> bytes:
    """The first ``!!binary`` response body of a VCR cassette (base64 lines)."""
    import base64

    lines = (REPO / "testdata" / "providers" / cassette).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "string: !!binary |")
    indent = len(lines[start + 1]) - len(lines[start + 1].lstrip())
    chunk = []
    for line in lines[start + 1 :]:
        if len(line) - len(line.lstrip()) < indent:
            break
        chunk.append(line.strip())
    return base64.b64decode("".join(chunk))


def test_a_binary_bedrock_stream_converts_from_bytes() -> None:
    frames = _binary_body("bedrock-converse/pydantic__test_bedrock_model_thinking_part_stream.yaml")
    m = format.convert(frames, from_="bedrock-converse", to="canonical", kind="stream")
    assert [b["type"] for b in m["content"]] == ["thinking", "text"]
    assert m["content"][0]["signature"]
    with pytest.raises(ConfigError, match=r"not UTF-8 \(byte 6"):
        format.convert(b"data: \xff\xfe", from_="anthropic", to="canonical", kind="stream")


def test_a_providers_dialect_keeps_its_reasoning() -> None:
    body = {
        "model": "deepseek-reasoner",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Call the tool.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    }
    back = format.convert(body, from_="deepseek", to="deepseek")
    assert back["messages"][1]["reasoning_content"] == "Call the tool."
    with pytest.warns(UserWarning, match="thinking dropped"):
        plain = format.convert(body, from_="deepseek", to="openai-chat")
    assert "reasoning_content" not in plain["messages"][1]
