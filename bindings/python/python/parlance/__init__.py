"""Parlance: an agent runtime on a Rust core.

One canonical conversation format, tools whose arguments are validated
before they run (by the Rust engine: the model reads the same messages in
every language), every major model provider, approvals that survive a
restart, threads in SQLite or PostgreSQL.

    from parlance import Agent, tool

    @tool
    def get_order(order_id: str) -> dict:
        \"\"\"Look up one order.\"\"\"
        return {"order_id": order_id, "status": "shipped"}

    agent = Agent("openai:gpt-4o-mini", instructions="...", tools=[get_order])
    r = await agent.run("Where is A-1001?")     # or agent.run_sync(...)
    print(r.text, r.usage, r.status)

The canonical format's types (``Message``, the ``Block`` union...) are
TypedDicts generated from the published schema: ``parlance.types``.
"""

from . import format, types
from ._agent import Agent, Checkpoint, Step
from ._budget import Budget, BudgetLimits, Spent, ThreadSpent
from ._content import Content
from ._context import ContextPolicy
from ._core import (
    ApprovalRequest,
    Model,
    Response,
    RunStream,
    ToolContext,
    Usage,
    __version__,
    cost,
    local_model_path,
    pull_local_model,
)
from ._decisions import Decision, answer, approve, edit, reject
from ._errors import (
    ConfigError,
    DecisionError,
    FormatError,
    ParlanceError,
    RunError,
    StoreError,
    ToolError,
)
from ._events import (
    ApprovalRequired,
    ContextCompacted,
    Event,
    MessageCompleted,
    RunCompleted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from ._guardrails import GuardCheck, Guardrail, Verdict
from ._mcp import McpServer
from ._providers import Anthropic, Azure, Bedrock, Gemini, Mistral, Ollama, OpenAI, OpenAIResponses, Provider
from ._store import DeadRun, ResumedRun, Store
from ._tools import AgentTool, Tool, tool
from ._toolset import Toolset
from ._traces import Traces, export_traces
from .types import Block, JsonValue, Message, ResponseDocument, ToolSpec

__all__ = [
    "Agent",
    "AgentTool",
    "Anthropic",
    "ApprovalRequest",
    "ApprovalRequired",
    "Azure",
    "Bedrock",
    "Block",
    "Budget",
    "BudgetLimits",
    "Checkpoint",
    "ConfigError",
    "Content",
    "ContextCompacted",
    "ContextPolicy",
    "DeadRun",
    "Decision",
    "DecisionError",
    "Event",
    "FormatError",
    "Gemini",
    "GuardCheck",
    "Guardrail",
    "JsonValue",
    "McpServer",
    "Message",
    "MessageCompleted",
    "Mistral",
    "Model",
    "Ollama",
    "OpenAI",
    "OpenAIResponses",
    "ParlanceError",
    "Provider",
    "Response",
    "ResponseDocument",
    "ResumedRun",
    "RunCompleted",
    "RunError",
    "RunStream",
    "Spent",
    "Step",
    "Store",
    "StoreError",
    "TextDelta",
    "ThinkingDelta",
    "ThreadSpent",
    "Tool",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolContext",
    "ToolError",
    "ToolSpec",
    "Toolset",
    "Traces",
    "Usage",
    "Verdict",
    "__version__",
    "answer",
    "approve",
    "cost",
    "edit",
    "export_traces",
    "format",
    "local_model_path",
    "pull_local_model",
    "reject",
    "tool",
    "types",
]
