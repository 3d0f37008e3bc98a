"""A tool that waits for a human: the paused response is the whole state
(store its JSON anywhere), and any process resumes it with decisions.

    OPENAI_API_KEY=... python approvals.py
"""

from __future__ import annotations

from typing import List, Union

from parlance import Agent, Decision, Model, Response, approve, reject, tool


@tool(needs_approval=lambda args: args["amount"] > 100)
def refund(order_id: str, amount: int) -> str:
    """Refund an order (over 100 EUR a person approves first)."""
    return f"refunded {amount} EUR on {order_id}"


def build(model: Union[str, Model] = "openai:gpt-4o-mini") -> Agent[str]:
    return Agent(model, instructions="You handle refunds.", tools=[refund])


def review(paused: Response[str]) -> List[Decision]:
    """A reviewer's decisions: small refunds pass, big ones are refused."""
    return [approve(p) if p.arguments["amount"] <= 300 else reject(p, "over 300 EUR") for p in paused.pending]


def main() -> None:
    agent = build()
    r = agent.run_sync("Refund 250 EUR on A-1001")
    if r.status == "requires_approval":
        stored = r.to_json()  # a database row, a queue message...
        r = build().resume_sync(stored, review(r))
    print(r.status, r.text)


if __name__ == "__main__":
    main()
