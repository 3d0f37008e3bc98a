// Generated from testing.d.ts by scripts/gen-types.mjs: edit that file.
// Types of parlance-ai/testing: models for your own tests, no network and
// no key. The models are the Rust core's (parlance::testing): a cassette
// recorded in one language replays in the others.

import type { JsonValue, Message, ToolSpec } from "./format.js";
import { Model } from "./index.mjs";
import type { ModelAnswer, ModelLike, ModelRequestInfo } from "./index.mjs";

/** A request a test model received, as a request document (the canonical format). */
export interface RequestDocument {
  messages: Message[];
  /** The tools offered (left out when none). */
  tools?: ToolSpec[];
  /** The request's settings, canonical names (left out when none). */
  options?: { [option: string]: JsonValue };
}

export interface TestModelOptions {
  /** The tools it calls: `"all"` (the default, in the order offered) or these, in this order (`[]`: none). */
  callTools?: "all" | readonly string[];
  /** The final answer's text. */
  text?: string;
  /** The final answer when the run has an output schema (default: a value made from the schema). */
  output?: JsonValue;
  /** Varies the made-up values (0, the default, gives the simplest). */
  seed?: number;
}

/**
 * Calls the tools it is offered with arguments made from their JSON
 * Schemas (valid against them), then answers: with `text`, a value of the
 * output schema, or the tools' results as JSON (`{"tool": "result"}`).
 * As Pydantic AI's TestModel.
 */
export declare class TestModel extends Model {
  constructor(options?: TestModelOptions);
  /** Which tools it calls. */
  readonly callTools: "all" | string[];
  /** Every request received so far. */
  readonly received: RequestDocument[];
  /** The last request received (undefined before the first). */
  readonly lastRequest: RequestDocument | undefined;
}

/** Answers with these messages (or strings: one text block each), in order, and keeps every request. */
export declare class ScriptedModel extends Model {
  constructor(messages: readonly ModelAnswer[]);
  /** Every request received so far. */
  readonly received: RequestDocument[];
  /** How many answers are left. */
  readonly remaining: number;
}

/** The function of a FunctionModel. */
export type ModelFunction = (messages: Message[], info: ModelRequestInfo) => ModelAnswer | PromiseLike<ModelAnswer>;

/**
 * Answers with your function of the messages and the request's tools and
 * settings (sync or async). What it throws fails the run with a RunError
 * `model_error` naming it.
 */
export declare class FunctionModel extends Model {
  /** `modelId` defaults to the function's name, `provider` to `"function"`. */
  constructor(fn: ModelFunction, options?: { provider?: string; modelId?: string });
  request(messages: Message[], info: ModelRequestInfo): ModelAnswer | PromiseLike<ModelAnswer>;
}

/**
 * Wraps a model and writes each exchange to the cassette file at `path`
 * (JSON Lines, the canonical format), emptied first unless `append`.
 */
export declare class Recorder extends Model {
  constructor(model: string | Model | ModelLike, path: string, options?: { append?: boolean });
  /** The cassette file. */
  readonly path: string;
}

/**
 * Serves a cassette's exchanges in order, offline, each request checked
 * against the recorded one: one that differs fails the run with a
 * RunError `model_error` naming the exchange and the first difference. A
 * file that is not a cassette is a ConfigError here.
 */
export declare class Replay extends Model {
  constructor(path: string);
  /** How many exchanges are left to serve. */
  readonly remaining: number;
  /** The cassette file. */
  readonly path: string;
}
