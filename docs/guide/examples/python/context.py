# Context windows: a conversation past 80 % of the model's window (a small
# one here, 500 tokens) has its oldest turns summarized; the summary is
# sent in their place, and the run keeps a record of the cut.
from typing import Any

from parlance import Agent, ContextPolicy

history: Any = [
    {
        "messages": [
            {"role": "user", "content": f"Question {i}: " + "x" * 300},
            {"role": "assistant", "content": f"Answer {i}."},
        ]
    }
    for i in range(6)
]
agent = Agent("openai:gpt-4o-mini", context=ContextPolicy.compact(window=500))
r = agent.run_sync("Which plan did we settle on?", turns=history)
record: Any = r.messages[1]
compaction = record["metadata"]["compaction"]
print(f"summarized: the first {compaction['replaces']} of 12 messages")
print("summary:", record["content"][0]["text"].splitlines()[-1])
print("answer:", r.output)
