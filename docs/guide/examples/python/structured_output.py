# A typed answer: the schema goes to the model, the Rust core checks the
# answer, and `r.output` is an instance.
from typing import Literal

from pydantic import BaseModel

from parlance import Agent


class Order(BaseModel):
    order_id: str
    status: Literal["processing", "shipped", "delivered"]
    total_eur: float


agent = Agent("openai:gpt-4o-mini", instructions="Extract the order.", output_type=Order)
r = agent.run_sync("Order A-1001 shipped, 42.50 EUR.")
order: Order = r.output
print(order.order_id, order.status, order.total_eur)
