"use strict";
// Decisions on calls waiting for approval, in the canonical shape. Each
// takes the pending request (or its call id: the digest is then taken from
// the paused response when resuming).

const { ConfigError } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

/** @typedef {import("./index").DecisionInput} DecisionInput */
/** @typedef {import("./index").ApprovalRequest} ApprovalRequest */

/**
 * @param {string} what
 * @param {unknown} request
 * @returns {{ tool_call_id: string, digest?: string }}
 */
function target(what, request) {
  if (typeof request === "string") return { tool_call_id: request };
  if (isRequest(request)) {
    /** @type {{ tool_call_id: string, digest?: string }} */
    const d = { tool_call_id: request.tool_call_id };
    if (typeof request.digest === "string") d.digest = request.digest;
    return d;
  }
  throw new ConfigError(`${what}: expected a pending request or its tool_call_id, got ${describe(request)}`);
}

/**
 * @param {unknown} v
 * @returns {v is { tool_call_id: string, digest?: unknown }}
 */
function isRequest(v) {
  return Boolean(v) && typeof (/** @type {{ tool_call_id?: unknown }} */ (v).tool_call_id) === "string";
}

/**
 * Run the call as the model asked.
 * @param {ApprovalRequest | string} request
 * @returns {DecisionInput}
 */
function approve(request) {
  return { ...target("approve", request), decision: "approved" };
}
/**
 * Run the call with these arguments instead (validated again).
 * @param {ApprovalRequest | string} request
 * @param {import("./index").JsonValue} args
 * @returns {DecisionInput}
 */
function edit(request, args) {
  return { ...target("edit", request), decision: "edited", arguments: args };
}
/**
 * Do not run the call; the model reads why.
 * @param {ApprovalRequest | string} request
 * @param {string} [reason]
 * @returns {DecisionInput}
 */
function reject(request, reason) {
  /** @type {DecisionInput} */
  const d = { ...target("reject", request), decision: "rejected" };
  if (reason !== undefined) d.reason = reason;
  return d;
}
/**
 * Do not run the call; `content` (text or blocks) stands in for its result.
 * @param {ApprovalRequest | string} request
 * @param {string | import("./index").Block[]} content
 * @returns {DecisionInput}
 */
function answer(request, content) {
  /** @type {import("./index").Block[]} */
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
  return { ...target("answer", request), decision: "answered", content: blocks };
}

/**
 * The decisions with the digests of `pending` filled in where missing.
 * @param {unknown} decisions
 * @param {readonly ApprovalRequest[]} pending
 * @returns {unknown[]}
 */
function withDigests(decisions, pending) {
  if (!Array.isArray(decisions)) {
    throw new ConfigError(`decisions: expected a list of decisions, got ${describe(decisions)}`);
  }
  const digests = new Map(pending.map((p) => [p.tool_call_id, p.digest]));
  return decisions.map((d) =>
    d && typeof d === "object" && d.digest === undefined && typeof d.tool_call_id === "string"
      ? // A call that is not pending has no digest: the agent's check then
        // says so ("no pending call has id ...", or already decided).
        { ...d, digest: digests.get(d.tool_call_id) ?? "none" }
      : d,
  );
}

module.exports = { approve, edit, reject, answer, withDigests };
