# A run as events: text as it is written, tool calls as they end.
import asyncio

from parlance import Agent, RunCompleted, TextDelta, ToolCallFinished, tool


@tool
async def get_order(order_id: str) -> dict[str, str]:
    """Look up one order by its id."""
    await asyncio.sleep(0.01)  # a database, an HTTP call...
    return {"order_id": order_id, "status": "shipped"}


async def main() -> None:
    agent = Agent("openai:gpt-4o-mini", instructions="You answer about orders.", tools=[get_order])
    async for event in agent.stream("Where is A-1001?"):
        if isinstance(event, TextDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, ToolCallFinished):
            print(f"[{event.name}: {event.status}]")
        elif isinstance(event, RunCompleted):
            print(f"\n{event.response.status}, {event.response.usage.output_tokens} tokens out")


asyncio.run(main())
