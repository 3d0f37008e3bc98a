# A tool with bounds, an error the model reads, and the context of the call.
from typing import Annotated

from pydantic import Field

from parlance import Agent, ToolContext, ToolError, tool


@tool
def refund(order_id: str, amount: Annotated[int, Field(ge=1, le=500)], ctx: ToolContext) -> str:
    """Refund an order.

    Args:
        order_id: The order, like A-1001.
        amount: Euros to refund.
    """
    if order_id.startswith("X"):
        raise ToolError("orders starting with X cannot be refunded")
    return f"refunded {amount} EUR on {order_id} for {ctx.deps['user']}"


agent = Agent("openai:gpt-4o-mini", instructions="You handle refunds.", tools=[refund], tool_timeout=10)
r = agent.run_sync("Refund 900 EUR on A-1001, then 40 EUR on X-7, then 40 EUR on A-1001", deps={"user": "ada"})

# What the model read back from each call: the engine refused the first
# before the function ran; the second raised ToolError; the third ran.
for m in r.messages:
    for b in m["content"]:
        if b["type"] == "tool_result":
            result = b["tool_result"]
            text = "".join(c["text"] for c in result["content"] if c["type"] == "text")
            print(f"{result.get('status', 'ok')}: {text}")
print(r.text)
