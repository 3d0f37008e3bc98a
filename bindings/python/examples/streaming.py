"""A run as events: text as it comes, tool calls as they start and end.

OPENAI_API_KEY=... python streaming.py
"""

from __future__ import annotations

import asyncio
from typing import Dict, Union

from parlance import Agent, Model, RunCompleted, TextDelta, ToolCallFinished, tool


@tool
async def get_order(order_id: str) -> Dict[str, str]:
    """Look up one order by its id."""
    await asyncio.sleep(0.01)  # a database, an HTTP call...
    return {"order_id": order_id, "status": "shipped"}


def build(model: Union[str, Model] = "openai:gpt-4o-mini") -> Agent[str]:
    return Agent(model, instructions="You answer about orders.", tools=[get_order])


async def main() -> None:
    async for event in build().stream("Where are A-1001 and A-1002?"):
        if isinstance(event, TextDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, ToolCallFinished):
            print(f"[{event.name} {event.status} in {event.elapsed * 1000:.1f} ms]")
        elif isinstance(event, RunCompleted):
            print(f"\n{event.response.usage}")


if __name__ == "__main__":
    asyncio.run(main())
