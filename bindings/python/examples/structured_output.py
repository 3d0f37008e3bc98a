"""A typed answer: the agent's output_type gives the model a JSON Schema,
the Rust core checks the answer against it, and ``r.output`` is an
instance (typed: ``Order`` for a type checker too).

    OPENAI_API_KEY=... python structured_output.py
"""

from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel

from parlance import Agent, Model


class Order(BaseModel):
    order_id: str
    status: Literal["processing", "shipped", "delivered"]
    total_eur: float


def build(model: Union[str, Model] = "openai:gpt-4o-mini") -> Agent[Order]:
    return Agent(model, instructions="Extract the order.", output_type=Order)


def main() -> None:
    r = build().run_sync("Order A-1001 shipped, 42.50 EUR.")
    order: Order = r.output
    print(order.order_id, order.status, order.total_eur)


if __name__ == "__main__":
    main()
