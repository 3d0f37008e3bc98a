# A provider as an object (your key, base URL, headers), and a history
# converted from one provider's wire format to another's.
import os
import warnings

from parlance import Agent, OpenAI, format

# Any OpenAI-compatible server: a base URL and a key of your own.
provider = OpenAI(
    base_url=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), api_key=os.environ["OPENAI_API_KEY"]
)
agent = Agent(provider.model("gpt-4o-mini"), instructions="Be brief.")
print(agent.run_sync("Hello!").text)

# Anthropic's signed thinking cannot go to OpenAI: it is dropped, and said.
anthropic_request = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "messages": [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Greet back.", "signature": "EqQBCg"},
                {"type": "text", "text": "Hello!"},
            ],
        },
        {"role": "user", "content": "And again?"},
    ],
}
with warnings.catch_warnings(record=True) as dropped:
    warnings.simplefilter("always")
    openai_request = format.convert(anthropic_request, from_="anthropic", to="openai-chat", model="gpt-4o-mini")
print([m["role"] for m in openai_request["messages"]])
for w in dropped:
    print("dropped:", w.message)
