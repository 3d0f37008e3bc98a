"""Answers that retry until they fit (issue 32), through the wheel and the
OpenAI mock on 127.0.0.1: a final answer that misses ``output_type``'s
schema, or is not JSON, goes back to the model with the problems, within
``output_retries``; what pydantic's own validators refuse goes back the
same way; past the budget the run fails ``invalid_output``, saying how
many retries it took."""

from __future__ import annotations

from typing import Any, Dict, Iterator

import pytest
from conftest import make_agent
from mock_openai import text
from pydantic import BaseModel, field_validator

from parlance import ConfigError, RunError


class Refund(BaseModel):
    order_id: str
    amount: float

    @field_validator("amount")
    @classmethod
    def at_most_100(cls, v: float) -> float:
        if v > 100:
            raise ValueError(f"{v} is over the 100 EUR limit")
        return v


def answers(*replies: str) -> Any:
    it: Iterator[str] = iter(replies)
    return lambda body: text(next(it))


def last_user_text(body: Dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def test_an_output_that_fails_its_schema_twice_then_fits_completes(mock: Any) -> None:
    mock.script = answers('{"order_id": "A-1"}', "A-1, 20 EUR", '{"order_id": "A-1", "amount": 20}')
    r = make_agent(mock, output_type=Refund, output_retries=2).run_sync("Refund A-1")
    assert r.status == "completed", r.error
    assert r.output == Refund(order_id="A-1", amount=20)
    assert len(mock.requests) == 3
    first = last_user_text(mock.requests[1])
    assert first.startswith("the final answer does not match the output schema: ") and "amount" in first, first
    assert last_user_text(mock.requests[2]).startswith("the final answer is not JSON: ")
    marks = [(m.get("metadata") or {}).get("output_retry") for m in r.messages if m["role"] == "user"]
    assert marks == [None, 1, 2]


def test_what_a_pydantic_validator_refuses_goes_back_to_the_model(mock: Any) -> None:
    mock.script = answers('{"order_id": "A-1", "amount": 250}', '{"order_id": "A-1", "amount": 80}')
    r = make_agent(mock, output_type=Refund).run_sync("Refund A-1")
    assert r.output == Refund(order_id="A-1", amount=80), r.error
    sent = last_user_text(mock.requests[1])
    assert sent.startswith("the final answer was refused by the output validator: "), sent
    assert "amount" in sent and "250.0 is over the 100 EUR limit" in sent, sent


def test_past_the_budget_the_run_fails_invalid_output(mock: Any) -> None:
    mock.script = answers('{"order_id": "A-1", "amount": 250}', '{"order_id": "A-1", "amount": 300}')
    with pytest.raises(RunError) as e:
        make_agent(mock, output_type=Refund).run_sync("Refund A-1")
    assert e.value.code == "invalid_output"
    assert "refused by the output validator (after 1 retry)" in str(e.value)
    assert "300.0 is over the 100 EUR limit" in str(e.value)

    mock.requests.clear()
    mock.script = answers('{"order_id": "A-1"}')
    with pytest.raises(RunError, match=r"invalid_output\): the final answer does not match the output schema: "):
        make_agent(mock, output_type=Refund, output_retries=0).run_sync("Refund A-1")
    assert len(mock.requests) == 1
    with pytest.raises(ConfigError, match="output_retries: expected a whole number of at least 0, got -1"):
        make_agent(mock, output_type=Refund, output_retries=-1)
