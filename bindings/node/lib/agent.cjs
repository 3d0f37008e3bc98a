"use strict";
// The agent: a model, instructions, tools and limits, built once by the
// Rust core. `run` and `resume` return promises of a Response; `stream`
// and `resumeStream` give the run's events as an async iterable. A failed
// run throws RunError (under `onToolException: "fail"` with the tool's own
// error as its `cause`).

const native = require("./native.cjs");
const { ConfigError, RunError, guard, rethrow } = require("./errors.cjs");
const { Response } = require("./response.cjs");
const { toNative } = require("./model.cjs");
const { Provider } = require("./providers.cjs");
const { Store } = require("./store.cjs");
const { McpServer } = require("./mcp.cjs");
const { Toolset } = require("./toolset.cjs");
const { isTool } = require("./tool.cjs");
const { toJsonSchema, describe, argumentCheck, problems } = require("./schema.cjs");
const { withDigests } = require("./decisions.cjs");
const dispatch = require("./dispatch.cjs");
const { caller, abort } = require("./js_call.cjs");
const { Guardrail, judge } = require("./guardrail.cjs");

/** @typedef {import("./index").RunOptions} RunOptions */
/** @typedef {import("./index").ResumeOptions} ResumeOptions */
/** @typedef {import("./index").Paused} Paused */
/** @typedef {import("./index").DecisionInput} DecisionInput */
/** @typedef {import("./index").RunInput} RunInput */
/** @typedef {import("./index").Turn} Turn */
/**
 * The fields of a work description (`decisions`: their JSON text).
 * @typedef {{ input?: RunInput, turns?: readonly Turn[], runId?: string, threadId?: string, paused?: Paused, decisions?: string, maxAttempts?: number }} WorkFields
 */
/**
 * What running a work description reads of a call's options (`store`: checked by onThread first).
 * @typedef {{ deps?: unknown, store?: import("./index").Store, signal?: AbortSignal, checkpoint?: import("./index").Checkpoint }} RunControl
 */
/**
 * `retry`'s options: `store` (with the thread's id), or `turns` (the failed run's history).
 * @typedef {{ store?: import("./index").Store, turns?: readonly Turn[], runId?: string, threadId?: string, deps?: unknown, signal?: AbortSignal, checkpoint?: import("./index").Checkpoint }} RetryOptions
 */

const POLICIES = new Set(["returnToModel", "return_to_model", "returnGeneric", "return_generic", "fail"]);

/**
 * Another agent as a tool (made by `agent.asTool(...)`): the model sends
 * the task as `input`; the agent runs it as a run of its own and its output
 * is the call's result.
 */
class AgentTool {
  /**
   * @param {Agent} agent
   * @param {string} name
   * @param {string} description
   * @param {number | undefined} timeout milliseconds
   */
  constructor(agent, name, description, timeout) {
    /** The agent it runs. */
    this.agent = agent;
    /** The tool's name. */
    this.name = name;
    /** What the calling model is told it does. */
    this.description = description;
    /** Its calls' timeout in milliseconds (else the caller's `toolTimeout`). */
    this.timeout = timeout;
    Object.freeze(this);
  }

  /** What the model is told: name, description, input schema. */
  get spec() {
    return {
      name: this.name,
      description: this.description,
      inputSchema: {
        type: "object",
        properties: {
          input: { type: "string", description: "The task, in full: the agent sees nothing else of this conversation." },
        },
        required: ["input"],
        additionalProperties: false,
      },
    };
  }
}

/**
 * The earlier turns as JSON text: a Response's text is used as it is.
 * @param {unknown} turns
 * @returns {string | undefined}
 */
function turnsJson(turns) {
  if (turns === undefined || turns === null) return undefined;
  if (!Array.isArray(turns)) {
    throw new ConfigError(`turns: expected a list of responses or turns, got ${describe(turns)}`);
  }
  return `[${turns.map((t) => (t instanceof Response ? t.toString() : JSON.stringify(t))).join(",")}]`;
}

/**
 * A work description for the native agent (see parlance_bindings::Work::read), as JSON text: turns and a paused response are put in as their JSON text, unparsed.
 * @param {"run" | "retry" | "resume" | "carry_on"} kind
 * @param {WorkFields} [fields]
 * @returns {string}
 */
function workJson(kind, { input, turns, runId, threadId, paused, decisions, maxAttempts } = {}) {
  const parts = [`"kind":"${kind}"`];
  if (input !== undefined) parts.push(`"input":${JSON.stringify(input)}`);
  const t = turnsJson(turns);
  if (t !== undefined) parts.push(`"turns":${t}`);
  if (runId !== undefined) parts.push(`"runId":${JSON.stringify(runId)}`);
  if (threadId !== undefined) parts.push(`"threadId":${JSON.stringify(threadId)}`);
  if (paused !== undefined) parts.push(`"paused":${pausedJson(paused)}`);
  if (decisions !== undefined) parts.push(`"decisions":${decisions}`);
  if (maxAttempts !== undefined) parts.push(`"maxAttempts":${JSON.stringify(maxAttempts)}`);
  return `{${parts.join(",")}}`;
}

/**
 * A paused run's JSON text (a Response's own), or a JSON string of its text.
 * @param {Paused} paused
 * @returns {string}
 */
function pausedJson(paused) {
  if (paused instanceof Response) return paused.toString();
  // JSON text of a response goes in as a string: the core reads it (and names its syntax errors).
  return JSON.stringify(paused);
}

/**
 * @param {Paused} paused
 * @returns {import("./index").ApprovalRequest[]}
 */
function pendingOf(paused) {
  if (paused instanceof Response) return paused.pending;
  try {
    const v = typeof paused === "string" ? JSON.parse(paused) : paused;
    return Array.isArray(v?.pending) ? v.pending : [];
  } catch {
    return [];
  }
}

/**
 * Stops run `tag` when `signal` aborts (its future is dropped: the run stops
 * at its next await, its tools' AbortSignals are aborted); returns the
 * function that stops listening.
 * @param {AbortSignal | undefined} signal
 * @param {number} tag
 * @returns {() => void}
 */
function cancelOn(signal, tag) {
  if (signal === undefined) return () => {};
  const onAbort = () => native.cancelRun(tag);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/**
 * Checks the options of a run on a stored thread.
 * @param {unknown} store
 * @param {unknown} threadId
 * @param {unknown} turns
 * @param {unknown} runId
 * @returns {asserts store is Store}
 */
function onThread(store, threadId, turns, runId) {
  if (!(store instanceof Store)) throw new ConfigError(`store: expected a Store, got ${describe(store)}`);
  if (typeof threadId !== "string") {
    throw new ConfigError(`threadId: a run on a store needs its thread's id, got ${describe(threadId)}`);
  }
  if (turns !== undefined) throw new ConfigError("turns: a run on a stored thread takes its history from the store");
  if (runId !== undefined) throw new ConfigError("runId: a run on a stored thread gets its id from the store");
}

/**
 * The id of a paused run (a Response, its JSON text or object).
 * @param {Paused} paused
 * @returns {string}
 */
function idOf(paused) {
  /** @type {unknown} */
  let id;
  if (paused instanceof Response) id = paused.id;
  else {
    try {
      id = (typeof paused === "string" ? JSON.parse(paused) : paused)?.id;
    } catch {
      id = undefined;
    }
  }
  if (typeof id !== "string") throw new ConfigError("paused: a stored run is named by its response's id, and this one has none");
  return id;
}

/**
 * The call whose unexpected failure stopped the run (its error is the cause).
 * @param {import("./index").ResponseDocument} doc
 * @returns {string | undefined}
 */
function firstFailedCall(doc) {
  const messages = doc.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== "tool") continue;
    for (const b of messages[i].content ?? []) {
      if (b.type === "tool_result" && b.tool_result.status === "tool_failed") return b.tool_result.tool_call_id;
    }
    return undefined;
  }
  return undefined;
}

/**
 * A run's response for the caller: a failed run throws RunError.
 * @param {string} text
 * @param {import("./dispatch.cjs").Run | undefined} run
 * @returns {Response}
 */
function finish(text, run) {
  const response = new Response(text);
  if (response.status !== "failed") return response;
  const error = response.error ?? { code: "failed", message: "the run failed without saying why" };
  /** @type {unknown} */
  let cause;
  if (error.code === "tool_failed" && run?.failures) {
    const id = firstFailedCall(response.toJSON());
    if (id !== undefined && run.failures.has(id)) cause = run.failures.get(id);
  }
  throw new RunError(error.message, { code: error.code, detail: error.cause ?? null, response, cause });
}

class Agent {
  /** @type {any} */
  #native;
  /** @type {readonly (import("./tool.cjs").ToolObject | AgentTool)[]} */
  #tools;
  /** @type {boolean} */
  #keepFailures;

  /** @param {import("./index").AgentOptions} options */
  constructor(options) {
    if (options === null || typeof options !== "object") {
      throw new ConfigError(`Agent: expected options {model, instructions?, tools?...}, got ${describe(options)}`);
    }
    const {
      model,
      provider,
      instructions,
      tools = [],
      name,
      onToolException = "returnToModel",
      toolTimeout,
      maxModelCalls,
      maxInvalidArguments,
      toolConcurrency,
      modelSettings,
      outputSchema,
      maxToolOutput,
      approvalKey,
      previousApprovalKeys,
      fallbackOn,
      prices,
      toolsets = [],
      outputRetries,
      guardrails = [],
      outputHold,
      context,
      budget,
      sharedCooldowns,
      description,
      handoffs = [],
      ...unknown
    } = /** @type {import("./index").AgentOptions & { [key: string]: unknown }} */ (options);
    const extra = Object.keys(unknown);
    if (extra.length > 0) {
      throw new ConfigError(
        `Agent: unknown option ${JSON.stringify(extra[0])} (expected: model, provider, instructions, tools, name, onToolException, toolTimeout, maxModelCalls, maxInvalidArguments, toolConcurrency, modelSettings, outputSchema, maxToolOutput, approvalKey, previousApprovalKeys, fallbackOn, prices, toolsets, outputRetries, guardrails, outputHold, context, budget, sharedCooldowns, description, handoffs)`,
      );
    }
    if (!Array.isArray(tools)) throw new ConfigError(`tools: expected a list of tools, got ${describe(tools)}`);
    tools.forEach((t, i) => {
      if (!isTool(t) && !(t instanceof AgentTool)) {
        throw new ConfigError(`tools[${i}]: expected a tool made by tool({...}) or agent.asTool(...), got ${describe(t)}`);
      }
    });
    // Agents used as tools run in the native core; the others here.
    const jsTools = tools.filter((t) => !(t instanceof AgentTool));
    const links = new native.NativeAgentLinks();
    for (const t of tools) {
      if (t instanceof AgentTool) guard(() => links.push(t.agent.#native, t.name, t.description, t.timeout));
    }
    if (!Array.isArray(handoffs)) throw new ConfigError(`handoffs: expected a list of Agent, got ${describe(handoffs)}`);
    handoffs.forEach((h, i) => {
      if (!(h instanceof Agent)) throw new ConfigError(`handoffs[${i}]: expected an Agent, got ${describe(h)}`);
      links.pushHandoff(h.#native);
    });
    if (!POLICIES.has(onToolException)) {
      throw new ConfigError(
        `onToolException: expected one of "returnToModel", "returnGeneric", "fail" (or their snake_case spellings), got ${JSON.stringify(onToolException)}`,
      );
    }
    if (!Array.isArray(guardrails)) {
      throw new ConfigError(`guardrails: expected a list of Guardrail, got ${describe(guardrails)}`);
    }
    guardrails.forEach((g, i) => {
      if (!(g instanceof Guardrail)) throw new ConfigError(`guardrails[${i}]: expected a Guardrail, got ${describe(g)}`);
    });
    if (!Array.isArray(toolsets)) {
      throw new ConfigError(`toolsets: expected a list of McpServer or Toolset, got ${describe(toolsets)}`);
    }
    // The dispatcher's tools, by index: the agent's, then each toolset's as first listed.
    const registry = [.../** @type {import("./tool.cjs").ToolObject[]} */ (jsTools)];
    const nativeToolsets = new native.NativeToolsetList();
    toolsets.forEach((t, i) => {
      if (t instanceof McpServer) {
        nativeToolsets.push(t._native());
      } else if (t instanceof Toolset) {
        guard(() => nativeToolsets.pushHosted(t.name, t.prefix, caller(t._lister(registry, dispatch.depsOf)), abort));
      } else {
        throw new ConfigError(`toolsets[${i}]: expected an McpServer or a Toolset, got ${describe(t)}`);
      }
    });
    /** @type {unknown} */
    let nativeModel;
    if (provider !== undefined) {
      if (!(provider instanceof Provider)) {
        throw new ConfigError(`provider: expected a provider (new OpenAI({...})...), got ${describe(provider)}`);
      }
      if (typeof model !== "string") {
        throw new ConfigError(`model: with a provider, expected the model's name ("gpt-4o-mini"), got ${describe(model)}`);
      }
      nativeModel = provider.model(model)._native;
    } else if (Array.isArray(model)) {
      // A fallback: tried in order; each entry's error names its index.
      const list = new native.NativeModelList();
      model.forEach((m, i) => {
        const n = toNative(m);
        if (n === undefined) {
          throw new ConfigError(
            `model[${i}]: expected a model string ("openai:gpt-4o-mini"), a Model, or an object with a request(messages, { tools, settings, signal }) method, got ${describe(m)}`,
          );
        }
        guard(() => list.push(n, i));
      });
      nativeModel = list;
    } else {
      nativeModel = toNative(model);
      if (nativeModel === undefined) {
        throw new ConfigError(
          `model: expected a model string ("openai:gpt-4o-mini"), a Model, an object with a request(messages, { tools, settings, signal }) method, or a list of them, got ${describe(model)}`,
        );
      }
    }
    /** @type {unknown} the open native store a list of models shares its cooldowns through */
    let cooldownStore;
    if (sharedCooldowns !== undefined) {
      if (!(sharedCooldowns instanceof Store)) {
        throw new ConfigError(`sharedCooldowns: expected a Store, got ${describe(sharedCooldowns)}`);
      }
      cooldownStore = sharedCooldowns._nativeNow();
      if (cooldownStore === undefined) {
        throw new ConfigError("sharedCooldowns: the store is not open yet: give one from `await Store.open(url)`");
      }
    }
    // The context policy's settings go as JSON; its summaries' model apart.
    /** @type {object | undefined} */
    let contextSettings;
    /** @type {unknown} */
    let contextModel;
    if (context !== undefined) {
      if (context === null || typeof context !== "object" || Array.isArray(context)) {
        throw new ConfigError(
          `context: expected {strategy: "fail" | "drop_oldest" | "compact", window?, trigger?, keep?, model?, instructions?}, got ${describe(context)}`,
        );
      }
      const { model: writer, ...rest } = /** @type {{ model?: unknown }} */ (context);
      contextSettings = rest;
      if (writer !== undefined) {
        contextModel = toNative(writer);
        if (contextModel === undefined) {
          throw new ConfigError(`context.model: expected a model string ("openai:gpt-4o-mini") or a Model, got ${describe(writer)}`);
        }
      }
    }
    const settings = {
      name,
      instructions,
      description,
      onToolException,
      toolTimeout,
      maxModelCalls,
      maxInvalidArguments,
      toolConcurrency,
      modelSettings,
      maxToolOutput,
      approvalKey,
      previousApprovalKeys,
      fallbackOn,
      prices,
      outputRetries,
      outputHold,
      context: contextSettings,
      budget,
      outputSchema:
        outputSchema === undefined
          ? undefined
          : {
              name: /** @type {{ name?: string }} */ (outputSchema).name ?? "output",
              schema: toJsonSchema(/** @type {{ schema?: unknown }} */ (outputSchema).schema ?? outputSchema, "outputSchema"),
            },
    };
    // A Standard Schema (zod...) checks the answer inside the run too: its
    // refinements' issues go back to the model like the JSON Schema's.
    const validate =
      outputSchema === undefined
        ? undefined
        : argumentCheck(/** @type {{ schema?: unknown }} */ (outputSchema).schema ?? outputSchema);
    const check =
      validate === undefined
        ? undefined
        : async (/** @type {unknown} */ value) => {
            const r = /** @type {{ issues?: Iterable<unknown> }} */ (await validate(value));
            return r.issues === undefined ? null : problems(r.issues);
          };
    this.#tools = /** @type {readonly (import("./tool.cjs").ToolObject | AgentTool)[]} */ (tools);
    this.#keepFailures = onToolException === "fail";
    this.#native = guard(
      () =>
        new native.NativeAgent(
          JSON.stringify(settings),
          nativeModel,
          /** @type {readonly import("./tool.cjs").ToolObject[]} */ (jsTools).map((t) => t._def()),
          dispatch.dispatcher(registry),
          dispatch.abort,
          dispatch.approver(registry),
          nativeToolsets,
          check === undefined ? undefined : caller(check),
          check === undefined ? undefined : abort,
          guardrails.map((g) => ({ name: g.name, point: g.point })),
          guardrails.length === 0 ? undefined : caller(judge(guardrails), "verdict"),
          guardrails.length === 0 ? undefined : abort,
          contextModel,
          cooldownStore,
          links,
        ),
    );
  }

  /**
   * This agent as a tool of another: the calling agent's model sends the
   * task (`{input: "..."}`); this agent runs it as a run of its own, with
   * the caller's `deps`, and its output is the call's result. What it spent
   * rolls up into the calling run. On a store, its run is kept on a thread
   * of its own; if it waits for approval, the caller waits with it and
   * lists its calls in `pending` (each with its `run_id`): decide them
   * through the caller's run (`resume(paused, decisions, {store})`).
   * Without a store it cannot wait: such a call fails, saying so.
   * @param {{ name?: string, description?: string, timeout?: number }} [options] `name` (default: the agent's), `description` (what the calling model is told), `timeout` (milliseconds; default: the caller's `toolTimeout`)
   * @returns {AgentTool}
   */
  asTool(options = {}) {
    if (options === null || typeof options !== "object" || Array.isArray(options)) {
      throw new ConfigError(`asTool: expected options {name?, description?, timeout?}, got ${describe(options)}`);
    }
    const { name, description, timeout, ...unknown } = /** @type {{ name?: unknown, description?: unknown, timeout?: unknown }} */ (options);
    const extra = Object.keys(unknown);
    if (extra.length > 0) {
      throw new ConfigError(`asTool: unknown option ${JSON.stringify(extra[0])} (expected: name, description, timeout)`);
    }
    const toolName = name ?? this.settings.name;
    if (typeof toolName !== "string" || toolName === "") {
      throw new ConfigError("asTool: give the tool a name (or the agent one: new Agent({name, ...}))");
    }
    if (description !== undefined && typeof description !== "string") {
      throw new ConfigError(`asTool: description: expected a string, got ${describe(description)}`);
    }
    if (timeout !== undefined && !(typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0)) {
      throw new ConfigError(`asTool: timeout: expected a positive number of milliseconds, got ${describe(timeout)}`);
    }
    return new AgentTool(this, toolName, description ?? `The ${toolName} agent: send it the whole task.`, timeout);
  }

  /** The agent's tools. */
  get tools() {
    return this.#tools;
  }

  /** The agent's settings as recorded with each run. */
  get settings() {
    return JSON.parse(this.#native.settings);
  }

  /**
   * Runs a work description to its end; `store` (a Store) runs it on a stored thread.
   * @param {"run" | "retry" | "resume" | "carry_on"} kind
   * @param {WorkFields} fields
   * @param {RunControl} control
   * @returns {Promise<Response>}
   */
  async #go(kind, fields, { deps, store, signal, checkpoint }) {
    if (store !== undefined && signal !== undefined) {
      throw new ConfigError("signal: a run on a stored thread goes on to its end (it is detached); it cannot be cancelled");
    }
    signal?.throwIfAborted();
    const work = workJson(kind, fields);
    const nativeCp = checkpointOf(checkpoint);
    const nativeStore = store === undefined ? undefined : await /** @type {Store} */ (store)._native();
    const tag = dispatch.beginRun(deps, this.#keepFailures);
    const stop = cancelOn(signal, tag);
    try {
      const text = await guard(() => this.#native.run(tag, work, nativeStore, signal !== undefined, nativeCp)).catch(rethrow);
      return finish(text, dispatch.endRun(tag));
    } catch (e) {
      throw signal?.aborted ? signal.reason : e;
    } finally {
      stop();
      dispatch.endRun(tag);
    }
  }

  /**
   * A work description as events; on a stored thread, the store opens first.
   * @param {"run" | "retry" | "resume" | "carry_on"} kind
   * @param {WorkFields} fields
   * @param {RunControl} control
   * @returns {RunStream}
   */
  #events(kind, fields, { deps, store, checkpoint }) {
    const work = workJson(kind, fields);
    const nativeCp = checkpointOf(checkpoint);
    const tag = dispatch.beginRun(deps, this.#keepFailures);
    try {
      const open =
        store === undefined
          ? guard(() => this.#native.stream(tag, work, undefined, nativeCp))
          : /** @type {Store} */ (store)._native().then((s) => guard(() => this.#native.stream(tag, work, s, nativeCp)));
      return new RunStream(open, tag);
    } catch (e) {
      dispatch.endRun(tag);
      throw e;
    }
  }

  /**
   * Runs the agent on `input` (a string, a message, or messages). Options:
   * `turns` (earlier responses or turns), `runId`, `threadId`, `deps` (handed
   * to every tool as `ctx.deps`), `signal` (an AbortSignal). With `store` and
   * `threadId`, the run is on a stored thread: its history comes from the
   * store, each step is committed as it completes.
   * @param {RunInput} input
   * @param {RunOptions} [options]
   * @returns {Promise<Response>}
   */
  async run(input, options = {}) {
    const { turns, runId, threadId, store } = options;
    if (store !== undefined) onThread(store, threadId, turns, runId);
    return this.#go("run", { input, turns, runId, threadId }, options);
  }

  /**
   * Runs a failed run again from its last committed step: a tool call that
   * failed it runs again (the model never reads the failure), a failed model
   * request is sent again. On a stored thread: `retry(threadId, { store })`
   * (refused with StoreError `conflict` unless its last run failed). Without
   * a store: `retry(undefined, { turns })`, the failed run's history, its
   * Response last.
   * @param {string | undefined} threadId
   * @param {RetryOptions} [options]
   * @returns {Promise<Response>}
   */
  async retry(threadId, options = {}) {
    const { store, turns, runId } = options;
    return this.#go("retry", this.#retryFields(threadId, store, turns, runId), options);
  }

  /**
   * @param {string | undefined} threadId
   * @param {import("./index").Store | undefined} store
   * @param {readonly Turn[] | undefined} turns
   * @param {string | undefined} runId
   * @returns {WorkFields}
   */
  #retryFields(threadId, store, turns, runId) {
    if (store !== undefined) {
      onThread(store, threadId, turns, runId);
      return { threadId };
    }
    if (turns === undefined) {
      throw new ConfigError("turns: a retry needs the failed run's history (or a store and the thread's id)");
    }
    return { turns, runId, threadId };
  }

  /**
   * The run as events (`for await (const e of agent.stream(input))`); with `store`, on a stored thread.
   * @param {RunInput} input
   * @param {RunOptions} [options]
   * @returns {RunStream}
   */
  stream(input, options = {}) {
    const { turns, runId, threadId, store } = options;
    if (store !== undefined) onThread(store, threadId, turns, runId);
    return this.#events("run", { input, turns, runId, threadId }, options);
  }

  /**
   * Takes over a run of this agent whose process died (its lease ran out:
   * see `store.deadRuns()`) and carries it on from its last committed step:
   * a model step that had not committed is asked again, tool calls that had
   * not committed run again (with the same `ctx.idempotencyKey`), nothing
   * that committed runs twice. The same run goes on (same id) and ends as
   * any run. Throws StoreError (`conflict`) when the run is not dead (alive,
   * ended, taken over by another process), when it died after its decisions
   * were taken (it waits for them again), or when it died more than
   * `maxAttempts` (default 3) times at the same step (it is then given up:
   * failed, `interrupted`). `store.resumeDeadRuns()` does this for every dead
   * run of a list of agents.
   * @param {string} runId
   * @param {import("./index").CarryOnOptions} options
   * @returns {Promise<Response>}
   */
  async carryOn(runId, options) {
    const { store, maxAttempts } = options ?? {};
    if (!(store instanceof Store)) throw new ConfigError(`store: carryOn needs the Store the run is in, got ${describe(store)}`);
    if (typeof runId !== "string") throw new ConfigError(`runId: expected the dead run's id, got ${describe(runId)}`);
    return this.#go("carry_on", { runId, maxAttempts }, /** @type {RunControl} */ (options));
  }

  /**
   * `retry` as events.
   * @param {string | undefined} threadId
   * @param {RetryOptions} [options]
   * @returns {RunStream}
   */
  retryStream(threadId, options = {}) {
    const { store, turns, runId } = options;
    return this.#events("retry", this.#retryFields(threadId, store, turns, runId), options);
  }

  /**
   * Applies decisions to a paused run and goes on: `approve(request)`,
   * `edit(request, args)`, `reject(request, why)`, `answer(request, content)`.
   * `paused` is the paused Response, its JSON text or its object. Refused
   * decisions throw DecisionError and nothing runs. With `store`, the paused
   * run is the one stored on its thread (the response names it).
   * @param {Paused} paused
   * @param {readonly DecisionInput[]} decisions
   * @param {ResumeOptions} [options]
   * @returns {Promise<Response>}
   */
  async resume(paused, decisions, options = {}) {
    return this.#go("resume", this.#resumeFields(paused, decisions, options), options);
  }

  /**
   * @param {Paused} paused
   * @param {readonly DecisionInput[]} decisions
   * @param {ResumeOptions} options
   * @returns {WorkFields}
   */
  #resumeFields(paused, decisions, { turns, store }) {
    const d = JSON.stringify(withDigests(decisions, pendingOf(paused)));
    if (store === undefined) return { paused, decisions: d, turns };
    onThread(store, "(from the paused run)", turns, undefined);
    return { runId: idOf(paused), decisions: d };
  }

  /**
   * `resume` as events.
   * @param {Paused} paused
   * @param {readonly DecisionInput[]} decisions
   * @param {ResumeOptions} [options]
   * @returns {RunStream}
   */
  resumeStream(paused, decisions, options = {}) {
    return this.#events("resume", this.#resumeFields(paused, decisions, options), options);
  }

  /** @internal The native agent (runs on threads). */
  get _native() {
    return this.#native;
  }
  /** @internal */
  get _keepFailures() {
    return this.#keepFailures;
  }
}

/**
 * The native checkpoint calling `checkpoint` with each step (none without one).
 * @param {unknown} checkpoint
 * @returns {object | undefined}
 */
function checkpointOf(checkpoint) {
  if (checkpoint === undefined) return undefined;
  if (typeof checkpoint !== "function") {
    throw new ConfigError(`checkpoint: expected a function of each step, got ${describe(checkpoint)}`);
  }
  const f = /** @type {(step: unknown) => unknown} */ (checkpoint);
  return guard(() => native.hostCheckpoint(caller((step) => f(step)), abort));
}

/**
 * A run's events, as they happen: `text_delta`, `thinking_delta`, `message`,
 * `tool_call_started`, `tool_call_finished`, `approval_required`,
 * `context_compacted`, and last
 * `run_completed` with the Response. A failed run throws RunError where
 * `run_completed` would come. Breaking out of the loop does not stop the
 * run: it finishes, so that what it stores stays consistent.
 */
class RunStream {
  /** @type {any} */
  #native;
  /** @type {number} */
  #tag;
  #done = false;

  /**
   * @param {any} nativeStream
   * @param {number} tag
   */
  constructor(nativeStream, tag) {
    // A native stream, or a promise of one (a store still opening).
    this.#native = Promise.resolve(nativeStream);
    this.#native.catch(() => {});
    this.#tag = tag;
  }

  /** @returns {Promise<IteratorResult<import("./index").RunEvent, undefined>>} */
  async next() {
    if (this.#done) return { done: true, value: undefined };
    /** @type {string | null | undefined} */
    let text;
    try {
      text = await (await this.#native).next().catch(rethrow);
    } catch (e) {
      this.#close();
      throw e;
    }
    if (text === null || text === undefined) {
      this.#close();
      return { done: true, value: undefined };
    }
    if (text.startsWith('{"type":"run_completed"')) {
      const run = dispatch.endRun(this.#tag);
      this.#done = true;
      const responseText = text.slice('{"type":"run_completed","response":'.length, -1);
      return { done: false, value: { type: "run_completed", response: finish(responseText, run) } };
    }
    return { done: false, value: JSON.parse(text) };
  }

  /**
   * Leaving the loop early: the run goes on; its events are read to the end in the background.
   * @returns {Promise<IteratorResult<import("./index").RunEvent, undefined>>}
   */
  async return() {
    if (!this.#done) {
      this.#done = true;
      const drain = async () => {
        try {
          const s = await this.#native;
          while ((await s.next()) != null);
        } catch {
          // The run's end is stored or reported elsewhere; nobody listens here.
        }
        dispatch.endRun(this.#tag);
      };
      drain();
    }
    return { done: true, value: undefined };
  }

  #close() {
    this.#done = true;
    dispatch.endRun(this.#tag);
  }

  /** @returns {RunStream} */
  [Symbol.asyncIterator]() {
    return this;
  }

  /**
   * Skips to the end: the final Response (throws RunError for a failed run).
   * @returns {Promise<Response>}
   */
  async response() {
    for await (const e of this) {
      // The Response of index.d.ts is this one (response.cjs).
      if (e.type === "run_completed") return /** @type {Response} */ (/** @type {unknown} */ (e.response));
    }
    throw new RunError("the run ended without a response", { code: "run_aborted" });
  }
}

module.exports = { Agent, AgentTool, RunStream, finish };
