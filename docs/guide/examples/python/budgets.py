# Budgets: this agent may make two tool calls a run. At the limit the
# model answers once more, without tools, and the run ends
# budget_exhausted with that answer as its last message.
from parlance import Agent, RunError, tool


@tool
def get_order(order_id: str) -> str:
    """Look up one order by its id."""
    return f"{order_id} has shipped"


agent = Agent("openai:gpt-4o-mini", tools=[get_order], budget={"run": {"tool_calls": 2}})
try:
    agent.run_sync("Where are A-1, A-2 and A-3?")
except RunError as e:
    print(e.code, "-", e.message)
    assert e.response is not None
    last = e.response.messages[-1]
    print("last answer:", "".join(b["text"] for b in last["content"] if b["type"] == "text"))
