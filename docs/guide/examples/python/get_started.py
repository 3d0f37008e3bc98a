# The first agent: a tool whose schema comes from its type hints and
# docstring, an agent, one run.  OPENAI_API_KEY=sk-... python get_started.py
from parlance import Agent, tool


@tool
def get_order(order_id: str) -> dict[str, str]:
    """Look up one order by its id.

    Args:
        order_id: The order, like A-1001.
    """
    return {"order_id": order_id, "status": "shipped"}


agent = Agent("openai:gpt-4o-mini", instructions="You answer about orders.", tools=[get_order])
r = agent.run_sync("Where is order A-1001?")  # or: r = await agent.run(...)
print(r.text)
print(r.status, r.usage.input_tokens, r.usage.output_tokens)
