//! The protocols other clients already speak, each served by a module of
//! its own over the same agents, store, approvals and tokens as
//! Parlance's own API.
//!
//! | module | path | clients |
//! |---|---|---|
//! | [`openai_chat`] | `POST /v1/chat/completions` | the OpenAI SDKs, and whatever speaks OpenAI's Chat Completions |
//! | [`openai_responses`] | `POST /v1/responses` | the OpenAI SDKs' Responses API (`previous_response_id` goes on in a thread) |
//! | [`ai_sdk`] | `POST /v1/agents/{agent}/chat` | the Vercel AI SDK's `useChat` (its UI message stream; approvals answered back) |
//! | [`ag_ui`] | `POST /v1/agents/{agent}/ag-ui` | AG-UI's `HttpAgent`, CopilotKit (approvals as interrupts) |
//! | [`a2a`] | `POST /a2a/{agent}`, its card at `/a2a/{agent}/.well-known/agent-card.json` | A2A 1.0 agents and clients (tasks are runs, `input-required` a waiting run) |
//! | [`mcp`] | `/mcp` (streamable HTTP), `parlance mcp serve` (stdio) | MCP hosts: each agent a tool, approvals as forms (elicitation) |
//!
//! Each reads a run's events through `crate::streams` (live here, or from
//! the store), so a reconnect loses nothing in any of them.

pub mod a2a;
pub mod ag_ui;
pub mod ai_sdk;
pub mod mcp;
pub mod openai_chat;
pub mod openai_responses;
