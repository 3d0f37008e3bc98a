"""Schemas from type hints and docstrings: plain types written directly
(and equal to what pydantic gives), richer ones through pydantic; the
arguments reach the function as those types; bad tools are refused when
they are made, naming what is wrong."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Any, Dict, List, Literal, Optional

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic's rule before Python 3.12

from parlance import ConfigError, Tool, ToolContext, tool
from parlance._schema import _strip_titles


def pydantic_schema(fn: Any) -> Dict[str, Any]:
    """What pydantic alone gives for fn's parameters (titles stripped)."""
    import inspect

    import pydantic

    fields = {
        p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default)
        for p in inspect.signature(fn, eval_str=True).parameters.values()
    }
    model = pydantic.create_model("m", __config__=pydantic.ConfigDict(extra="forbid"), **fields)  # type: ignore[call-overload]
    schema: Dict[str, Any] = _strip_titles(model.model_json_schema())
    return schema


def plain(
    name: str,
    count: int,
    ratio: float,
    flag: bool,
    tags: List[str],
    scores: Dict[str, int],
    mode: Literal["fast", "slow"],
    note: Optional[str] = None,
    limit: int = 10,
) -> None:
    """Plain types."""


def test_plain_types_give_the_schema_pydantic_gives() -> None:
    t = tool(plain)
    assert t.schema == pydantic_schema(plain)
    assert t.schema["required"] == ["name", "count", "ratio", "flag", "tags", "scores", "mode"]
    assert t.schema["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Item:
    sku: str
    qty: int = 1


class Address(TypedDict):
    street: str
    city: str


class Customer(BaseModel):
    name: str
    vip: bool = False


def test_rich_types_go_through_pydantic_and_reach_the_function_typed(mock: Any) -> None:
    got: Dict[str, Any] = {}

    @tool
    def order(
        amount: Annotated[int, Field(ge=1, le=500, description="Euros.")],
        colour: Colour,
        items: List[Item],
        address: Address,
        customer: Customer,
        ctx: ToolContext,
    ) -> str:
        """Place an order.

        Args:
            amount: Ignored, the Field's description wins.
            colour: The colour.
        """
        got.update(amount=amount, colour=colour, items=items, address=address, customer=customer, ctx=ctx)
        return "ok"

    s = order.schema
    assert s["properties"]["amount"] == {"description": "Euros.", "maximum": 500, "minimum": 1, "type": "integer"}
    assert "ctx" not in s["properties"], "the context is not shown to the model"
    assert s["additionalProperties"] is False
    assert order.description == "Place an order."

    args = {
        "amount": 20,
        "colour": "red",
        "items": [{"sku": "X", "qty": 2}],
        "address": {"street": "Main St", "city": "Ghent"},
        "customer": {"name": "Ada"},
    }
    mock.script = after_tools(calls(("c1", "order", args)), lambda b: "done")
    make_agent(mock, tools=[order]).run_sync("order")
    assert got["colour"] is Colour.RED
    assert got["items"] == [Item("X", 2)]
    assert got["address"] == {"street": "Main St", "city": "Ghent"}
    assert got["customer"] == Customer(name="Ada")
    assert got["ctx"].call_id == "c1"


@pytest.mark.parametrize(
    "doc",
    [
        """Refund an order.

        Args:
            order_id: The order, like A-1001.
            amount: Euros,
                whole ones.
        """,
        """Refund an order.

        Parameters
        ----------
        order_id : str
            The order, like A-1001.
        amount : int
            Euros,
            whole ones.
        """,
        """Refund an order.

        :param order_id: The order, like A-1001.
        :param amount: Euros,
            whole ones.
        :returns: what was done.
        """,
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_docstring_styles(doc: str) -> None:
    def refund(order_id: str, amount: int) -> str:
        return ""

    refund.__doc__ = doc
    t = tool(refund)
    assert t.description == "Refund an order."
    assert t.schema["properties"]["order_id"]["description"] == "The order, like A-1001."
    assert t.schema["properties"]["amount"]["description"] == "Euros, whole ones."


def test_floats_reach_the_function_as_floats(mock: Any) -> None:
    seen: List[Any] = []

    @tool
    def weigh(kg: float) -> str:
        """Weighs."""
        seen.append(kg)
        return "ok"

    mock.script = after_tools(calls(("c1", "weigh", {"kg": 3})), lambda b: "done")
    make_agent(mock, tools=[weigh]).run_sync("weigh")
    assert seen == [3.0] and type(seen[0]) is float


def test_a_hand_written_schema(mock: Any) -> None:
    seen: List[Any] = []

    def lookup(**kwargs: Any) -> str:
        seen.append(kwargs)
        return "found"

    t = Tool(
        lookup,
        name="lookup",
        description="Look up.",
        schema={"type": "object", "properties": {"q": {"type": "string", "minLength": 2}}, "required": ["q"]},
    )
    mock.script = after_tools(calls(("c1", "lookup", {"q": "x"}), ("c2", "lookup", {"q": "xy"})), lambda b: "done")
    r = make_agent(mock, tools=[t]).run_sync("go")
    assert seen == [{"q": "xy"}]
    contents = [m["content"] for m in mock.requests[1]["messages"] if m["role"] == "tool"]
    assert contents[0].startswith("Invalid arguments for lookup:\nq: ")
    assert r.status == "completed"


def test_bad_tools_are_refused_when_made() -> None:
    def star(*args: int) -> None:
        """Stars."""

    with pytest.raises(ConfigError, match=r"tool star: parameter args: \*args and \*\*kwargs"):
        tool(star)
    with pytest.raises(ConfigError, match="tool bad: "):
        Tool(lambda: None, name="bad", description="x", schema={"type": "object", "properties": 5})
    with pytest.raises(ConfigError, match="needs a name"):
        Tool(lambda: None)
    with pytest.raises(ConfigError, match="two tools are named"):
        make_agent(_FakeMock(), tools=[tool(plain), tool(plain)])
    with pytest.raises(ConfigError, match="timeout must be a positive number"):
        tool(timeout=-1)(plain)


class _FakeMock:
    url = "http://127.0.0.1:9/v1"
