# Every run's spans (GenAI semantic conventions), exported with OTLP over
# HTTP to a collector (Jaeger, Tempo, an OpenTelemetry Collector...).
import os

from parlance import Agent, export_traces, tool

traces = export_traces(os.environ.get("OTLP_ENDPOINT", "http://localhost:4318"), service_name="orders")


@tool
def get_order(order_id: str) -> str:
    """Look up one order by its id."""
    return f"{order_id}: shipped"


agent = Agent("openai:gpt-4o-mini", name="support", tools=[get_order])
print(agent.run_sync("Where is A-1001?").text)
traces.flush()  # sends the spans now (they go in batches; the process's exit sends the rest)
