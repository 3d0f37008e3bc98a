# Agents that call agents: the researcher, used as a tool by the support
# agent. Support's model sends it a task; it runs the task as a run of its
# own; support's model reads only its answer, and what it spent rolls up.
from typing import Any

from parlance import Agent

researcher = Agent(
    "openai:gpt-4o-mini",
    name="researcher",
    instructions="You look orders up: say where the order is and when it shipped.",
)
support = Agent(
    "openai:gpt-4o-mini",
    name="support",
    instructions="You answer customers. Ask the researcher to look orders up.",
    tools=[researcher.as_tool(description="Looks orders up: send it the order and the question.")],
)

r = support.run_sync("Where is order A-1001?")
print(r.text)
tool_message: Any = next(m for m in r.messages if m["role"] == "tool")
print("support's model read:", tool_message["content"][0]["tool_result"]["content"][0]["text"])
print(f"input tokens: {r.usage.input_tokens}, the researcher's {tool_message['usage']['input_tokens']}")
