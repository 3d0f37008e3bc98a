"""Cost from Python: each assistant message's ``cost`` and the response's
sum, from the built-in price table (genai-prices); ``parlance.cost`` prices
a usage; a model the table does not know has none; a bad price table file
is an error naming the file and the JSON path."""

from __future__ import annotations

import pathlib
from typing import Any, Dict, List

import pytest

import parlance
from parlance import Agent, ConfigError
from parlance.testing import FunctionModel, RequestInfo

# The second call of testdata/providers/anthropic/pydantic__test_anthropic_cache_real_api.yaml:
# 3 uncached input tokens, 1111 read from the cache, 418 written to it, 33 out.
USAGE = {"input_tokens": 3 + 1111 + 418, "output_tokens": 33, "cached_tokens": 1111, "cache_write_tokens": 418}
# claude-sonnet-4-5: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million.
COST = 0.0024048


def answering(model: str) -> FunctionModel:
    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Dict[str, Any]:
        return {
            "content": [{"type": "text", "text": "Hi."}],
            "usage": USAGE,
            "provider": "anthropic",
            "model": model,
        }

    return FunctionModel(answer)


def test_the_usage_of_a_recorded_call_costs_the_hand_computed_figure() -> None:
    assert parlance.cost("anthropic:claude-sonnet-4-5", USAGE) == COST
    assert parlance.cost("anthropic:claude-sonnet-4-5-20250929", USAGE) == COST


def test_each_message_has_its_cost_and_the_response_the_sum() -> None:
    r = Agent(answering("claude-sonnet-4-5")).run_sync("Hello")
    assistant = [m for m in r.messages if m["role"] == "assistant"]
    assert [m.get("cost") for m in assistant] == [COST]
    assert r.cost == COST
    assert r.to_dict()["cost"] == COST
    assert parlance.cost("anthropic:claude-sonnet-4-5", r.usage) == COST


def test_a_model_the_table_does_not_know_has_no_cost() -> None:
    r = Agent(answering("no-such-model")).run_sync("Hello")
    assert r.cost is None
    assert "cost" not in r.messages[-1]
    assert parlance.cost("anthropic:no-such-model", USAGE) is None


def test_a_table_of_ones_own_comes_first(tmp_path: pathlib.Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"providers": [{"id": "acme", "models": [{"id": "m1", "input": "1", "cached": "0"}]}]}')
    with pytest.raises(ConfigError, match=r"prices.json: \$\.providers\[0\]\.models\[0\]\.cached: unknown field"):
        parlance.cost("acme:m1", USAGE, prices=prices)
    prices.write_text('{"providers": [{"id": "acme", "models": [{"id": "m1", "input": "1", "output": "2"}]}]}')
    usage = {"input_tokens": 1_000_000, "output_tokens": 500_000}
    assert parlance.cost("acme:m1", usage, prices=prices) == 2.0
    assert parlance.cost("anthropic:claude-sonnet-4-5", USAGE, prices=str(prices)) == COST


def test_a_model_string_without_a_provider_is_refused() -> None:
    with pytest.raises(ConfigError, match="expected provider:model"):
        parlance.cost("claude-sonnet-4-5", USAGE)


def test_an_agents_own_price_table(tmp_path: pathlib.Path) -> None:
    """``Agent(prices=file)``: the agent's messages are priced by the file's
    table, then the built-in one; a file that does not read is a
    ``ConfigError`` naming it."""
    prices = tmp_path / "prices.json"
    prices.write_text('{"providers": [{"id": "acme", "models": [{"id": "m1", "input": "1", "output": "2"}]}]}')

    def acme(messages: List[Dict[str, Any]], info: RequestInfo) -> Dict[str, Any]:
        return {
            "content": [{"type": "text", "text": "Hi."}],
            "usage": {"input_tokens": 1_000_000, "output_tokens": 500_000},
            "provider": "acme",
            "model": "m1",
        }

    assert Agent(FunctionModel(acme), prices=prices).run_sync("Hello").cost == 2.0
    assert Agent(FunctionModel(acme)).run_sync("Hello").cost is None
    assert Agent(answering("claude-sonnet-4-5"), prices=str(prices)).run_sync("Hello").cost == COST
    with pytest.raises(ConfigError, match=r"prices: .*nope\.json"):
        Agent(FunctionModel(acme), prices=tmp_path / "nope.json")
