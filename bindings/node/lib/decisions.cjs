"use strict";
// Decisions on calls waiting for approval, in the canonical shape. Each
// takes the pending request (or its call id: the digest is then taken from
// the paused response when resuming).

const { ConfigError } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

function target(what, request) {
  if (typeof request === "string") return { tool_call_id: request };
  if (request && typeof request.tool_call_id === "string") {
    const d = { tool_call_id: request.tool_call_id };
    if (typeof request.digest === "string") d.digest = request.digest;
    return d;
  }
  throw new ConfigError(`${what}: expected a pending request or its tool_call_id, got ${describe(request)}`);
}

/** Run the call as the model asked. */
function approve(request) {
  return { ...target("approve", request), decision: "approved" };
}
/** Run the call with these arguments instead (validated again). */
function edit(request, args) {
  return { ...target("edit", request), decision: "edited", arguments: args };
}
/** Do not run the call; the model reads why. */
function reject(request, reason) {
  const d = { ...target("reject", request), decision: "rejected" };
  if (reason !== undefined) d.reason = reason;
  return d;
}
/** Do not run the call; `content` (text or blocks) stands in for its result. */
function answer(request, content) {
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
  return { ...target("answer", request), decision: "answered", content: blocks };
}

/** The decisions with the digests of `pending` filled in where missing. */
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
