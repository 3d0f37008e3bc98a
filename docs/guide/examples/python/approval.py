# A refund over 100 EUR waits for a person. The paused run is its JSON:
# keep it anywhere, resume it later with a fresh agent (another process,
# another language).
from parlance import Agent, Response, approve, tool


@tool(needs_approval=lambda args: args["amount"] > 100)
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} EUR on {order_id}"


def build() -> Agent[str]:
    return Agent("openai:gpt-4o-mini", instructions="You handle refunds.", tools=[refund])


paused = build().run_sync("Refund 250 EUR on A-1001")
print(paused.status)
stored = paused.to_json()  # a database row, a queue message, a file...

# Later, elsewhere:
waiting = Response.from_json(stored)
call = waiting.pending[0]  # .tool_call_id, .name, .arguments, .digest
print("waiting:", call.name, call.arguments)
done = build().resume_sync(stored, [approve(call)])
# or: edit(call, {"order_id": "A-1001", "amount": 100}),
#     reject(call, "over the customer's limit"), answer(call, "Refunded by hand.")
print(done.status, done.text)
