"""Reading a run's messages with their types: ``parlance.types`` has the
canonical format as TypedDicts (generated from the published schema), so
a type checker knows each block's fields once its ``type`` is tested.

    OPENAI_API_KEY=... python reading_messages.py
"""

from __future__ import annotations

from typing import List, Union

from parlance import Agent, Message, Model, tool


@tool
def get_order(order_id: str) -> str:
    """Look up one order by its id."""
    return f"{order_id}: shipped"


def build(model: Union[str, Model] = "openai:gpt-4o-mini") -> Agent[str]:
    return Agent(model, instructions="You answer about orders.", tools=[get_order])


def transcript(messages: List[Message]) -> List[str]:
    """One line per block: who, what."""
    lines: List[str] = []
    for m in messages:
        for b in m["content"]:
            if b["type"] == "text":
                lines.append(f"{m['role']}: {b['text']}")
            elif b["type"] == "tool_call":
                lines.append(f"{m['role']}: calls {b['tool_call']['name']}({b['tool_call']['arguments']})")
            elif b["type"] == "tool_result":
                result = b["tool_result"]
                text = "".join(c["text"] for c in result["content"] if c["type"] == "text")
                lines.append(f"{m['role']}: {result.get('status', 'ok')}: {text}")
    return lines


def main() -> None:
    r = build().run_sync("Where is A-1001?")
    print("\n".join(transcript(r.messages)))


if __name__ == "__main__":
    main()
