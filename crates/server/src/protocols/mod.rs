//! The protocols other clients already speak, each served by a module of
//! its own over the same agents, store, approvals and tokens as
//! Parlance's own API.
//!
//! | module | path | clients |
//! |---|---|---|
//! | [`openai_chat`] | `POST /v1/chat/completions` | the OpenAI SDKs, and whatever speaks OpenAI's Chat Completions |
//! | [`openai_responses`] | `POST /v1/responses` | the OpenAI SDKs' Responses API (`previous_response_id` goes on in a thread) |

pub mod openai_chat;
pub mod openai_responses;
