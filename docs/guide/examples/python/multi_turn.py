# Two turns: the first response goes back, unchanged, in `turns`.
from parlance import Agent

agent = Agent("openai:gpt-4o-mini", instructions="Be brief.")
first = agent.run_sync("I am Ada.")
second = agent.run_sync("Who am I?", turns=[first])  # the model sees both turns
print(second.text)
print(len(first.messages), "messages in the first turn,", len(second.messages), "in the second")
