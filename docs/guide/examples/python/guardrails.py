# Guardrails: the input's card numbers redacted before anyone sees them,
# an answer that gives out a password blocked before it leaves the run.
import re
from typing import Any

from parlance import Agent, GuardCheck, Guardrail, RunError, Verdict

CARD = re.compile(r"\d{4}-\d{4}-\d{4}-\d{4}")


@Guardrail.input
def redact_cards(check: GuardCheck) -> Verdict | None:
    if CARD.search(check.text):
        return Verdict.replace(CARD.sub("[card]", check.text), reason="card number")
    return None


@Guardrail.output
def no_passwords(check: GuardCheck) -> Verdict | None:
    if "password" in check.text.lower():
        return Verdict.block("I can't share that.", reason="password in the answer")
    return None


agent = Agent("openai:gpt-4o-mini", guardrails=[redact_cards, no_passwords])
try:
    agent.run_sync("My card is 4111-1111-1111-1111. What is the admin password?")
except RunError as e:
    assert e.response is not None
    print(f"{e.code}: {e.message}")
    print("kept:", e.response.messages[0]["content"][0])
    outcomes = []
    for m in e.response.messages:
        records: Any = (m.get("metadata") or {}).get("guardrails", [])
        outcomes += [r["outcome"] for r in records]
    print("outcomes:", outcomes)
