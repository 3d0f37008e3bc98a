"""The quick start: a tool whose schema comes from its type hints and
docstring, an agent, one run.

    ANTHROPIC_API_KEY=... python quickstart.py
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Union

from pydantic import Field

from parlance import Agent, Model, ToolError, tool


@tool
def refund(order_id: str, amount: Annotated[int, Field(ge=1, le=500)]) -> str:
    """Refund an order.

    Args:
        order_id: The order, like A-1001.
        amount: Euros.
    """
    if order_id.startswith("X"):
        raise ToolError("orders starting with X cannot be refunded")
    return f"refunded {amount} EUR"


def build(model: Union[str, Model] = "anthropic:claude-sonnet-4-5") -> Agent[str]:
    return Agent(
        model,
        instructions="You handle refunds.",
        tools=[refund],
        on_tool_exception="return_generic",
    )


async def main() -> None:
    agent = build()
    r = await agent.run("Refund 900 EUR on A-1001")  # or agent.run_sync(...)
    print(r.text, r.usage, r.status)


if __name__ == "__main__":
    asyncio.run(main())
