"use strict";
// Runs the tool functions on Node's main thread for the Rust engine (see
// bindings/node/src/host.rs). The engine validated the arguments; here
// the schema's own check runs (a Standard Schema's `validate`: what it
// refuses goes back as invalid arguments, what it gives is what `execute`
// receives), then the function (sync or async alike), and the outcome is
// handed back with `native.complete`. These host functions must never
// throw: a throw in a thread-safe call would end the process, so
// everything is caught.

const native = require("./native.cjs");
const { isToolError } = require("./errors.cjs");
const { problems } = require("./schema.cjs");
const { isContent } = require("./content.cjs");

/**
 * A run in flight: its `deps`, and failed tools' errors (by call id) under `fail`.
 * @typedef {{ deps: unknown, failures: Map<string, unknown> | null }} Run
 */
/** @typedef {import("./tool.cjs").ToolObject} ToolObject */

/**
 * Runs in flight, by tag.
 * @type {Map<number, Run>}
 */
const runs = new Map();
let nextTag = 1;
/**
 * Calls in flight, by token: their AbortController.
 * @type {Map<number, AbortController>}
 */
const calls = new Map();

/**
 * Registers a run; returns its tag.
 * @param {unknown} deps
 * @param {boolean} keepFailures
 * @returns {number}
 */
function beginRun(deps, keepFailures) {
  const tag = nextTag;
  nextTag = nextTag >= 0xfffffff0 ? 1 : nextTag + 1;
  runs.set(tag, { deps, failures: keepFailures ? new Map() : null });
  return tag;
}

/** System error codes of the process's own lack of resources. */
const SHORT_OF_RESOURCES = new Set(["EMFILE", "ENFILE", "ENOBUFS", "ENOMEM"]);

/**
 * Forgets a run; returns what it kept.
 * @param {number} tag
 * @returns {Run | undefined}
 */
function endRun(tag) {
  const run = runs.get(tag);
  runs.delete(tag);
  return run;
}

/**
 * @param {number} token
 * @param {unknown} value
 */
function ok(token, value) {
  calls.delete(token);
  // A returned ToolError says what a thrown one does.
  if (isToolError(value)) {
    native.complete(token, 1, String(value.message ?? ""), undefined);
    return;
  }
  let text;
  const blocks = isContent(value);
  try {
    if (blocks) text = JSON.stringify(value.blocks);
    else text = value === undefined || value === null ? undefined : JSON.stringify(value);
  } catch (e) {
    native.complete(token, 2, `the tool's return value cannot be written as JSON: ${/** @type {Error} */ (e)?.message ?? e}`, "TypeError");
    return;
  }
  native.complete(token, blocks ? 4 : 0, text, undefined);
}

/**
 * @param {number} token
 * @param {Run | undefined} run
 * @param {string} callId
 * @param {any} e what the tool threw
 */
function failed(token, run, callId, e) {
  calls.delete(token);
  if (isToolError(e)) {
    native.complete(token, 1, String(e.message ?? ""), undefined);
    return;
  }
  run?.failures?.set(callId, e);
  const isError = e instanceof Error || (e !== null && typeof e === "object" && typeof e.message === "string");
  // The process's own lack of descriptors or memory is not the tool's
  // failure: the run stops as `server_resources`, the model never reads it.
  const shortOf = isError && SHORT_OF_RESOURCES.has(e.code);
  const name = shortOf ? "server_resources" : isError ? String(e.name ?? e.constructor?.name ?? "Error") : "Error";
  const message = isError ? (shortOf ? `${e.code}: ${e.message}` : String(e.message)) : String(e);
  native.complete(token, 2, message, name);
}

/**
 * The schema refused the arguments: its issues, for the model.
 * @param {number} token
 * @param {Iterable<unknown>} issues
 */
function refused(token, issues) {
  calls.delete(token);
  native.complete(token, 3, JSON.stringify(problems(issues)), undefined);
}

/**
 * Calls `then` with `v`, now or when the promise `v` settles.
 * @param {any} v
 * @param {(value: any) => void} then
 * @param {(error: unknown) => void} fail
 */
function settle(v, then, fail) {
  if (v !== null && typeof v === "object" && typeof v.then === "function") {
    v.then(then, fail);
  } else {
    then(v);
  }
}

/**
 * The dispatcher of an agent's tools (`tools[index]`).
 * @param {readonly ToolObject[]} tools
 */
function dispatcher(tools) {
  // The native module hands the arguments over as one array.
  /** @param {[tag: number, index: number, token: number, argsJson: string, runId: string, threadId: string | null, callId: string, remainingMs: number, idempotencyKey: string]} args */
  return function call([tag, index, token, argsJson, runId, threadId, callId, remainingMs, idempotencyKey]) {
    const run = runs.get(tag);
    try {
      const t = tools[index];
      const controller = new AbortController();
      calls.set(token, controller);
      const ctx = {
        toolName: t.name,
        callId,
        runId,
        threadId: threadId ?? undefined,
        idempotencyKey,
        abortSignal: controller.signal,
        signal: controller.signal,
        deadline: Date.now() + remainingMs,
        deps: run?.deps,
      };
      const fail = (/** @type {unknown} */ e) => failed(token, run, callId, e);
      const args = JSON.parse(argsJson);
      const start = (/** @type {{ value?: unknown, issues?: Iterable<unknown> }} */ checked) => {
        if (checked.issues !== undefined) {
          refused(token, checked.issues);
          return;
        }
        settle(t.execute(checked.value, ctx), (/** @type {unknown} */ v) => ok(token, v), fail);
      };
      if (t._check === undefined) {
        start({ value: args });
      } else {
        settle(t._check(args), (/** @type {{ value?: unknown, issues?: Iterable<unknown> }} */ checked) => {
          try {
            start(checked);
          } catch (e) {
            fail(e);
          }
        }, fail);
      }
    } catch (e) {
      try {
        failed(token, run, callId, e);
      } catch {
        // Nothing is left to report to (the call was dropped meanwhile).
      }
    }
  };
}

/**
 * Aborts a call the engine gave up on (its timeout passed, or its run stopped).
 * @param {number} token
 */
function abort(token) {
  const controller = calls.get(token);
  if (controller === undefined) return;
  calls.delete(token);
  try {
    controller.abort(new DOMException("the tool call was cancelled: it timed out or its run stopped", "AbortError"));
  } catch {
    // An abort listener threw: nothing to do about it here.
  }
}

/**
 * The `needsApproval` check of an agent's tools: a failing check waits for a human.
 * @param {readonly ToolObject[]} tools
 */
function approver(tools) {
  return function approve(/** @type {[index: number, argsJson: string]} */ args) {
    const [index, argsJson] = args;
    const t = tools[index];
    try {
      const v = /** @type {(args: unknown) => any} */ (t.needsApproval)(JSON.parse(argsJson));
      if (typeof v?.then === "function") {
        process.emitWarning(`parlance: the needsApproval check of ${t.name} returned a promise (it must return a boolean); the call waits for approval`);
        return true;
      }
      return Boolean(v);
    } catch (e) {
      process.emitWarning(`parlance: the needsApproval check of ${t.name} threw (${/** @type {Error} */ (e)?.message ?? e}); the call waits for approval`);
      return true;
    }
  };
}

/**
 * The `deps` of the run tagged `tag` (undefined outside a run).
 * @param {number} tag
 * @returns {unknown}
 */
function depsOf(tag) {
  return runs.get(tag)?.deps;
}

module.exports = { beginRun, endRun, dispatcher, abort, approver, depsOf };
