# A conversation kept by the store (SQLite here; PostgreSQL with a
# postgres:// URL): each run's steps committed as they complete, the
# history loaded for the next run.
from parlance import Agent, Store

store = Store("sqlite://guide-threads.db")
thread = store.create_thread_sync({"customer": "ada"})
agent = Agent("openai:gpt-4o-mini", instructions="Be brief.")
# At start-up: runs of this agent that a process left when it died are
# carried on from their last committed step (none here).
store.resume_dead_runs_sync([agent])
agent.run_sync("I am Ada.", store=store, thread_id=thread)
r = agent.run_sync("Who am I?", store=store, thread_id=thread)  # the history comes from the store
print(r.text)
print(len(store.messages_sync(thread)), "messages,", len(store.runs_sync(thread)), "runs on", thread)
