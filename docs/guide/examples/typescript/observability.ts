// Every run's spans (GenAI semantic conventions), exported with OTLP over
// HTTP to a collector (Jaeger, Tempo, an OpenTelemetry Collector...).
import { Agent, exportTraces, tool } from "parlance-ai";
import { z } from "zod";

const traces = exportTraces({ endpoint: process.env.OTLP_ENDPOINT ?? "http://localhost:4318", serviceName: "orders" });

const getOrder = tool({
  name: "get_order",
  description: "Look up one order by its id.",
  parameters: z.object({ order_id: z.string() }),
  execute: ({ order_id }) => `${order_id}: shipped`,
});

const agent = new Agent({ model: "openai:gpt-4o-mini", name: "support", tools: [getOrder] });
console.log((await agent.run("Where is A-1001?")).text);
await traces.flush(); // sends the spans now (they go in batches; the process's exit sends the rest)
