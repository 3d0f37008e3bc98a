# The embedded local model: no key, no server, no network once it is
# fetched (`parlance model pull`, or parlance.pull_local_model()).
import parlance
from parlance import Agent

print("model file:", parlance.local_model_path() or parlance.pull_local_model())
agent = Agent("local", instructions="Answer in one short sentence.", model_settings={"max_tokens": 32})
r = agent.run_sync("What is the capital of France?")
print(r.status, r.messages[-1]["provider"], r.usage.output_tokens > 0)
print(r.text)
