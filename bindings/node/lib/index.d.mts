// Generated from index.d.ts by scripts/gen-types.mjs: edit that file.
// Types of parlance-ai. The canonical format's types (Message, Block,
// ApprovalRequest...) are generated from the published JSON Schema into
// ./format.d.ts; this file holds the API's.

import type {
  ApprovalRequest,
  Block,
  Decision,
  JsonValue,
  Message,
  ResponseDocument,
  ToolSpec,
  RunError as RunErrorDocument,
  RunStatus,
  FinishReason,
  ToolStatus,
  Usage as UsageDocument,
} from "./format.js";

export type * from "./format.js";

// ---------------------------------------------------------------- schemas

/** The Standard Schema interface (zod 4, ArkType, Valibot...), as much as parlance reads of it. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** A JSON Schema object, as written by hand (`as const` is implied by `tool`). */
export type JSONSchema = { readonly [keyword: string]: unknown };

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Required_<S> = S extends { readonly required: readonly (infer R)[] } ? R : never;
type FromObject<S> = S extends { readonly properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P as K extends Required_<S> ? K : never]: FromJSONSchema<P[K]> } & {
        -readonly [K in keyof P as K extends Required_<S> ? never : K]?: FromJSONSchema<P[K]>;
      }
    >
  : { [key: string]: JsonValue };
type FromType<T, S> = T extends "string"
  ? string
  : T extends "number" | "integer"
    ? number
    : T extends "boolean"
      ? boolean
      : T extends "null"
        ? null
        : T extends "array"
          ? S extends { readonly items: infer I }
            ? FromJSONSchema<I>[]
            : JsonValue[]
          : T extends "object"
            ? FromObject<S>
            : never;

/**
 * The TypeScript type of the values a JSON Schema admits (`type`,
 * `properties`/`required`, `items`, `enum`, `const`, `anyOf`/`oneOf`);
 * anything it cannot read is `JsonValue`.
 */
export type FromJSONSchema<S> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: readonly (infer E)[] }
    ? E
    : S extends { readonly anyOf: readonly (infer A)[] }
      ? FromJSONSchema<A>
      : S extends { readonly oneOf: readonly (infer A)[] }
        ? FromJSONSchema<A>
        : S extends { readonly type: readonly (infer T)[] }
          ? FromType<T, S>
          : S extends { readonly type: infer T }
            ? FromType<T, S>
            : S extends { readonly properties: object }
              ? FromObject<S>
              : JsonValue;

/** A tool's parameters: a Standard Schema (zod 4) or a JSON Schema object. */
export type Parameters = StandardSchemaV1 | JSONSchema;

/**
 * The arguments `execute` receives: for a Standard Schema (zod), its output
 * type (what `schema.parse(args)` gives: defaults filled in, transforms and
 * coercion applied, after the engine validated the JSON); for a JSON Schema,
 * the JSON as validated.
 */
export type InferParameters<P> = P extends StandardSchemaV1<any, infer O> ? O : FromJSONSchema<P>;

/**
 * The arguments a `needsApproval` check receives: the JSON the model sent,
 * as the engine validated it (the schema's own parse runs when the call
 * does, after approval).
 */
export type InferInput<P> = P extends StandardSchemaV1<infer I, any> ? I : FromJSONSchema<P>;

// ---------------------------------------------------------------- tools

/** What a running tool knows about its call. */
export interface ToolContext<Deps = any> {
  /** The tool's name. */
  readonly toolName: string;
  /** The tool call's id. */
  readonly callId: string;
  /** The run's id. */
  readonly runId: string;
  /** The thread's id, when the run is on one. */
  readonly threadId: string | undefined;
  /**
   * The same every time this call runs again (the thread, or off a thread
   * the run, and the call's id): hand it to what the tool changes (an
   * `Idempotency-Key` header) so it happens once.
   */
  readonly idempotencyKey: string;
  /**
   * Aborted when the call times out or its run stops. JavaScript cannot be
   * stopped from outside: a tool that should stop at its timeout passes it
   * on (`fetch(url, { signal: ctx.abortSignal })`) or checks `aborted`;
   * otherwise it keeps running and its result is discarded.
   */
  readonly abortSignal: AbortSignal;
  /** The same signal as `abortSignal` (the name the OpenAI Agents SDK and `fetch` use). */
  readonly signal: AbortSignal;
  /** When the call times out (milliseconds since the epoch, like `Date.now()`). */
  readonly deadline: number;
  /** What the caller passed as `deps` to the run. */
  readonly deps: Deps;
}

/** How a tool is defined. */
export interface ToolOptions<P, R> {
  /** The name the model calls it by. */
  name: string;
  /** What the model reads about it (sent with every request). */
  description?: string;
  /** Its input: a zod 4 (Standard Schema) schema or a JSON Schema object; default: no arguments. */
  parameters?: P;
  /**
   * The function, sync or async. A string is text for the model; `undefined`
   * nothing; any other value JSON. `throw new ToolError(...)` (or return
   * one): the model reads the message (status `error`); any other throw is
   * an unexpected failure (`tool_failed`, see `onToolException`).
   */
  execute: (args: InferParameters<P>, ctx: ToolContext) => R | PromiseLike<R>;
  /** Every call waits for a human's decision, or those the function says (synchronously). */
  needsApproval?: boolean | ((args: InferInput<P>) => boolean);
  /** Its own timeout in milliseconds (default: the agent's `toolTimeout`, 60 s). */
  timeout?: number;
  /** Calls with invalid arguments it tolerates per run (default: the agent's). */
  maxInvalidArguments?: number;
}

/** A tool, made by `tool()`: `execute` takes `Args`, `needsApproval` the JSON `Input`. */
export interface Tool<Args = any, Input = Args> {
  readonly name: string;
  readonly description: string;
  /** The input JSON Schema the engine validates with (a copy). */
  readonly parameters: JSONSchema;
  readonly execute: (args: Args, ctx: ToolContext) => unknown;
  readonly needsApproval: boolean | ((args: Input) => boolean);
  readonly timeout: number | undefined;
  readonly maxInvalidArguments: number | undefined;
}

/** Defines a tool. Its schema is compiled here: a bad one throws ConfigError. */
export declare function tool<const P extends Parameters = { type: "object"; properties: {} }, R = unknown>(
  options: ToolOptions<P, R>,
): Tool<InferParameters<P>, InferInput<P>>;

/** Bytes of a media block (a Buffer or Uint8Array), or its base64 text. */
export type MediaData = Uint8Array | ArrayBuffer | string;

/**
 * Content blocks a tool returns when the model should read more than text
 * or JSON: `new Content("The chart:", Content.image({ data: png, mediaType: "image/png" }))`.
 */
export declare class Content {
  constructor(...parts: (string | Content | Block)[]);
  /** The canonical blocks. */
  readonly blocks: Block[];
  static text(text: string): Content;
  static image(media: { data?: MediaData; url?: string; mediaType?: string; detail?: "auto" | "low" | "high" }): Content;
  static audio(media: { data?: MediaData; url?: string; mediaType?: string }): Content;
  static file(media: { data?: MediaData; url?: string; mediaType?: string; filename?: string }): Content;
  static json(value: JsonValue): Content;
}

// ---------------------------------------------------------------- models

/** Settings of a model (all optional). Timeouts in milliseconds. */
export interface ModelSettings {
  /** The API's base URL, `/v1` included for OpenAI (a proxy, a local server). */
  baseURL?: string;
  /** The API key (instead of the provider's environment variable). */
  apiKey?: string;
  /** The environment variable that holds the key. */
  apiKeyEnv?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** The User-Agent header. */
  userAgent?: string;
  connectTimeout?: number;
  firstByteTimeout?: number;
  idleTimeout?: number;
  /** When and how long to wait before trying again (milliseconds; default 2 retries, 500 ms doubling to 20 s). */
  retry?: { maxRetries?: number; initialBackoff?: number; maxBackoff?: number; maxRetryAfter?: number };
  /** Retries after the first attempt (the default policy otherwise). */
  maxRetries?: number;
  /** Azure: the API version (`2024-10-21`...). */
  apiVersion?: string;
  /** Azure: a Microsoft Entra ID token instead of a key. */
  azureAdToken?: string;
  /** Bedrock: the AWS region. */
  region?: string;
  /** Bedrock: credentials (instead of the AWS_* variables). */
  awsCredentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** What a model's `request` is told besides the messages. */
export interface ModelRequestInfo {
  /** The tools offered (canonical tool specs: `name`, `description`, `input_schema`). */
  tools: ToolSpec[];
  /** The request's settings, canonical names (`max_tokens`, `tool_choice`, `output_schema`...; only those set). */
  settings: { [option: string]: JsonValue };
  /** Aborted when the run stops waiting for the answer (the run was aborted, or failed elsewhere). */
  signal: AbortSignal;
}

/** What a model written in JavaScript answers: a canonical message (`role` optional) or a string (one text block). */
export type ModelAnswer = string | (Omit<Message, "role"> & { role?: "assistant" });

/**
 * A model written in JavaScript: any object with `request`, sync or
 * async. Its throws fail the run with a RunError `model_error` naming
 * them (a `TimeoutError` is a timeout).
 */
export interface ModelLike {
  request(messages: Message[], info: ModelRequestInfo): ModelAnswer | PromiseLike<ModelAnswer>;
  /** What it reports (default `"javascript"`). */
  readonly provider?: string;
  /** Default: its class's name. */
  readonly modelId?: string;
}

/**
 * A model an agent talks to: a provider's, or one written in JavaScript
 * (a subclass that defines `request`).
 */
export declare class Model {
  /**
   * `"openai:gpt-4o-mini"`, `"openai-responses:gpt-5"`,
   * `"anthropic:claude-sonnet-4-5"`, `"gemini:gemini-2.5-flash"`. A missing
   * key is a ConfigError here, before any request.
   */
  constructor(spec: string, settings?: ModelSettings);
  /**
   * A model written in JavaScript (a subclass defines `request`): what it
   * reports, default `"javascript"` and its class's name.
   */
  constructor(options?: { provider?: string; modelId?: string });
  readonly provider: string;
  readonly modelId: string;
  /**
   * Defined by a subclass written in JavaScript: called for every model
   * call, on Node's main thread.
   */
  request?(messages: Message[], info: ModelRequestInfo): ModelAnswer | PromiseLike<ModelAnswer>;
}

/** A provider's settings, for its models: `new OpenAI({ baseURL, apiKey }).model("gpt-4o-mini")`. */
export declare class Provider {
  constructor(settings?: ModelSettings);
  /** The provider's name in model strings (`openai`...). */
  readonly name: string;
  /** A model of this provider (a `provider:` prefix is allowed). */
  model(name: string): Model;
}
/** OpenAI's Chat Completions API (and any server that speaks it). */
export declare class OpenAI extends Provider {}
/** OpenAI's Responses API. */
export declare class OpenAIResponses extends Provider {}
/** Anthropic's Messages API. */
export declare class Anthropic extends Provider {}
/** Google's Gemini API. */
export declare class Gemini extends Provider {}
/** Azure OpenAI: `baseURL` of the resource, `apiVersion`, `apiKey` or `azureAdToken`. */
export declare class Azure extends Provider {}
/** Amazon Bedrock's Converse API: `region`, `awsCredentials`. */
export declare class Bedrock extends Provider {}
/** Mistral's API. */
export declare class Mistral extends Provider {}
/** Ollama's own API. */
export declare class Ollama extends Provider {}

// ---------------------------------------------------------------- threads

/** A stored run (what `store.runs` lists). */
export interface RunRecord {
  id: string;
  thread_id: string;
  status: string;
  [key: string]: JsonValue;
}

/** Threads in SQLite or PostgreSQL. */
/** A stored thread. */
export interface ThreadRecord {
  id: string;
  owner: string | null;
  metadata: { [key: string]: JsonValue };
  /** Milliseconds since the epoch. */
  created_at: number;
  /** Milliseconds since the epoch; moves with every message. */
  updated_at: number;
}

/** A page of a listing; pass `next` as `after` for the next one (`null` at the end). */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** A stored message and its place. */
export interface StoredMessage {
  seq: number;
  run_id: string | null;
  message: Message;
}

/** What a tool kept for operators (never sent to the model). */
export interface ArtifactRecord {
  seq: number;
  tool_call_id: string;
  artifact: JsonValue;
}

/**
 * Tools that come and go: `listTools(deps)` (sync or async), asked before
 * each model call, returns the tools to offer (made by `tool()`; the same
 * objects cost no rebuild). What it throws fails the run with
 * `tools_unavailable`, naming the toolset.
 */
export declare class Toolset<Deps = any> {
  constructor(
    listTools: (deps: Deps) => readonly Tool[] | PromiseLike<readonly Tool[]>,
    options?: { name?: string; prefix?: string },
  );
  /** Its name (in errors, and the default prefix). */
  readonly name: string;
  readonly prefix: string | undefined;
}

/** Where a guardrail runs. */
export type GuardPoint = "input" | "toolCall" | "output";

/** What a guardrail is shown. */
export interface GuardCheck {
  point: GuardPoint;
  /** The input's text, the answer's text, or a call's arguments as JSON text. */
  text: string;
  /** The call's arguments, the structured answer (or the answer's text); null for the input. */
  value: any;
  /** The input messages, or the answer (canonical JSON). */
  messages: Message[];
  /** The tool call (tool calls only). */
  call?: { id: string; name: string; arguments: any };
  /** The answer so far, while a streamed answer is checked sentence by sentence (only `allow` lets it out early). */
  partial: boolean;
  threadId?: string;
}

/** What a guardrail decides (returning nothing allows). */
export type GuardVerdict =
  | { action: "allow" }
  | { action: "block"; message: string; reason?: string }
  | { action: "replace"; value: unknown; reason?: string }
  | { action: "retry"; message: string }
  | { action: "requireApproval"; reason?: string };

/** Makes verdicts. */
export declare const Verdict: {
  /** Goes on unchanged. */
  allow(): GuardVerdict;
  /** Ends the run (RunError `blocked`): `message` for the user, `reason` for operators (recorded, never sent to a model). */
  block(message: string, options?: { reason?: string }): GuardVerdict;
  /** Goes on with `value` in place of what was checked: the input's text (or messages), the call's arguments, the answer. */
  replace(value: unknown, options?: { reason?: string }): GuardVerdict;
  /** The call does not run and the model reads why, or the answer goes back to the model (within `outputRetries`). */
  retry(message: string): GuardVerdict;
  /** The call waits for a human's decision (tool calls only). */
  requireApproval(options?: { reason?: string }): GuardVerdict;
};

/**
 * A check the engine runs at one point of each run: the input (before it
 * is stored or sent), each tool call with valid arguments (before it
 * waits or runs), the final answer (before it leaves the run). What it
 * throws fails the run with RunError `guardrail_failed`, naming it.
 */
export declare class Guardrail {
  constructor(
    point: GuardPoint,
    check: (check: GuardCheck) => GuardVerdict | null | undefined | void | PromiseLike<GuardVerdict | null | undefined | void>,
    options?: { name?: string },
  );
  static input(check: (check: GuardCheck) => GuardVerdict | null | undefined | void | PromiseLike<GuardVerdict | null | undefined | void>, options?: { name?: string }): Guardrail;
  static toolCall(check: (check: GuardCheck) => GuardVerdict | null | undefined | void | PromiseLike<GuardVerdict | null | undefined | void>, options?: { name?: string }): Guardrail;
  static output(check: (check: GuardCheck) => GuardVerdict | null | undefined | void | PromiseLike<GuardVerdict | null | undefined | void>, options?: { name?: string }): Guardrail;
  readonly point: GuardPoint;
  readonly name: string;
}

/** How an MCP server's tools are offered (stdio and HTTP alike). */
export interface McpToolOptions {
  /** Put before each tool's name with `_` (`fs` makes `fs_read_file`). */
  prefix?: string;
  /** Offer only these tools (their names on the server). */
  tools?: readonly string[];
  /** `true`: every call waits for a human's decision; or these tools' calls. */
  needsApproval?: boolean | readonly string[];
  /** Milliseconds a call may take (default: the agent's `toolTimeout`). */
  timeout?: number;
  /** Milliseconds the server has to start and list its tools (default 30 000). */
  startupTimeout?: number;
}

/** A server run as a child process. */
export interface McpStdioOptions extends McpToolOptions {
  args?: readonly string[];
  /** Variables set for it (besides HOME, LANG, LC_ALL, LOGNAME, PATH, SHELL, TERM, TMPDIR, USER). */
  env?: Readonly<Record<string, string>>;
  /** Pass this process's whole environment on (API keys included). */
  inheritEnv?: boolean;
  cwd?: string;
}

/** A server reached over streamable HTTP. */
export interface McpHttpOptions extends McpToolOptions {
  headers?: Readonly<Record<string, string>>;
  /** Sent as `Authorization: Bearer ...`. */
  bearer?: string;
  /** The environment variable holding the bearer token (read when the server is made). */
  bearerEnv?: string;
}

/** Every setting of an MCP server: `command` (stdio) or `url` (HTTP). */
export interface McpServerSettings extends McpStdioOptions, McpHttpOptions {
  name: string;
  command?: string;
  url?: string;
}

/**
 * An MCP server's tools, as the server TOML's `[[mcp]]` has them: started
 * when a run first needs them, shared by every agent given the object.
 */
/** Where a run's spans go (what is not given comes from the standard `OTEL_*` variables). */
export interface TraceOptions {
  /** The collector's base URL (`http://localhost:4318`); spans go to its `/v1/traces`. */
  endpoint?: string;
  /** Headers sent with each export (an API key...). */
  headers?: Readonly<Record<string, string>>;
  /** The `service.name` resource attribute (default `OTEL_SERVICE_NAME`, else `parlance`). */
  serviceName?: string;
  /** Default `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. */
  protocol?: "http/protobuf" | "http/json";
}

/** The running export. */
export interface Traces {
  /** Sends the spans ended so far and waits for the collector. */
  flush(): Promise<void>;
  /** Sends what is left and stops exporting (the process's exit does it too). */
  shutdown(): Promise<void>;
}

/**
 * Exports every run's spans (GenAI semantic conventions) with OTLP over
 * HTTP from now on, once per process; the runtime's logs keep reaching
 * the logger (`setLogger`). Message content is recorded only with
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
 */
export declare function exportTraces(options?: TraceOptions): Traces;

/** Fetches the default local model (`"local"`) into Parlance's model cache when it is not there (with pip); its path. */
export declare function pullLocalModel(): Promise<string>;
/** Where the default local model is kept, whether or not it is there yet (`null` in a build without it). */
export declare function localModelPath(): string | null;

export declare class McpServer {
  constructor(settings: McpServerSettings);
  /** A server run as a child process, spoken to over stdin/stdout. */
  static stdio(name: string, command: string, options?: McpStdioOptions): McpServer;
  /** A server reached over streamable HTTP at `url`. */
  static http(name: string, url: string, options?: McpHttpOptions): McpServer;
  readonly name: string;
  /** Stops it now; the next run that needs it starts it again. */
  shutdown(): Promise<void>;
}

export interface StoreOptions {
  /** Milliseconds a run holds its thread without renewing (default 30 000). */
  lease?: number;
  /** Secrets scrubbed from everything stored from now on. */
  redact?: readonly string[];
}

export declare class Store {
  /** `"sqlite://parlance.db"`, `"sqlite::memory:"`, `"postgres://..."`: opens (and migrates) in the background. */
  constructor(url: string, options?: StoreOptions);
  /** Opens now; a store that cannot be opened throws StoreError here. */
  static open(url: string, options?: StoreOptions): Promise<Store>;
  readonly url: string;
  /** A new thread; its id. `owner`: whose it is, for their budgets. */
  createThread(metadata?: { [key: string]: JsonValue }, options?: { owner?: string }): Promise<string>;
  /** What the store counted for budgets: the thread's, its owner's today and this month (UTC). */
  spent(threadId: string): Promise<ThreadSpent>;
  /** The thread (id, owner, metadata, times). */
  thread(threadId: string): Promise<ThreadRecord>;
  /** A page of threads, oldest first. */
  threads(options?: { after?: string; limit?: number }): Promise<Page<ThreadRecord>>;
  /** The thread's messages, in order. */
  messages(threadId: string): Promise<Message[]>;
  /** `limit` stored messages from position `start`. */
  messagePage(threadId: string, options?: { start?: number; limit?: number }): Promise<StoredMessage[]>;
  /** The thread's runs, oldest first. */
  runs(threadId: string): Promise<RunRecord[]>;
  /** One run's record. */
  run(runId: string): Promise<RunRecord>;
  /** The artifacts of the thread's tool results. */
  artifacts(threadId: string): Promise<ArtifactRecord[]>;
  /** Runs waiting for decisions, the most recently paused first. */
  waitingRuns(options?: { limit?: number }): Promise<RunRecord[]>;
  /** Deletes a thread (refused while a run is active on it; `force`: also when a run waits there). */
  deleteThread(threadId: string, options?: { force?: boolean }): Promise<void>;
  /** Runs whose process died (`running`, their lease run out), oldest first: each can be carried on with `agent.carryOn`. */
  deadRuns(): Promise<DeadRun[]>;
  /**
   * Carries on every dead run one of `agents` made (by the agent's name; an unnamed one by its settings),
   * concurrently, from its last committed step, and waits for their ends. Runs no agent of the list made are left alone.
   */
  resumeDeadRuns(agents: readonly Agent[], options?: { maxAttempts?: number }): Promise<ResumedRun[]>;
}

/** A run whose process died, as `store.deadRuns()` lists it. */
export interface DeadRun {
  runId: string;
  threadId: string;
  /** The name of the agent that made it (null: an unnamed agent). */
  agent: string | null;
  /** That agent's settings as recorded. */
  settings: { [key: string]: JsonValue };
}

/**
 * What `store.resumeDeadRuns()` made of one dead run: its status once carried on to its end, or
 * `not_resumed` with the reason (another process took it, it waits for decisions again, it died too
 * often at the same step). `reason` is also a failed run's error.
 */
export interface ResumedRun {
  runId: string;
  threadId: string;
  status: "completed" | "failed" | "requires_approval" | "not_resumed";
  reason: string | null;
}

/** `agent.carryOn`'s options. */
export interface CarryOnOptions {
  /** The store the dead run is in. */
  store: Store;
  /** Takeovers at the same step before the run is given up (default 3). */
  maxAttempts?: number;
  deps?: unknown;
  checkpoint?: Checkpoint;
}

// ---------------------------------------------------------------- runs

/** What an unexpected tool failure becomes (snake_case spellings accepted). */
export type OnToolException = "returnToModel" | "returnGeneric" | "fail" | "return_to_model" | "return_generic";

/** Options of model calls (canonical names: `max_tokens`, `temperature`, `tool_choice`...). */
export type ModelCallSettings = { [option: string]: JsonValue };

export interface AgentOptions {
  /**
   * A model string (`"openai:gpt-4o-mini"`), a Model, or an object with `request`; with `provider`, the model's name.
   * A list of them is a fallback: tried in order, the next asked when one is rate limited,
   * overloaded, failing or timing out (see `fallbackOn`).
   */
  model: string | Model | ModelLike | readonly (string | Model | ModelLike)[];
  /** The provider of `model` (its base URL, key...). */
  provider?: Provider;
  /** The system instructions. */
  instructions?: string;
  /** Tools made by `tool({...})`, and agents made tools by `agent.asTool(...)`. */
  tools?: readonly (Tool<any> | AgentTool)[];
  /** A name, recorded with each run. */
  name?: string;
  /** What this agent does, for the agents that hand conversations to it (their `transfer_to_NAME` tool's description). */
  description?: string;
  /**
   * Agents this one may hand the conversation to: each is offered as a tool `transfer_to_NAME`;
   * calling it gives the rest of the run, and the next turns, to that agent (`response.handoff` names it).
   */
  handoffs?: readonly Agent[];
  /** Default `"returnToModel"`. */
  onToolException?: OnToolException;
  /** Milliseconds a tool call may take (default 60 000). */
  toolTimeout?: number;
  /** Model calls per run (default 10). */
  maxModelCalls?: number;
  /** Calls with invalid arguments tolerated per run (default 3). */
  maxInvalidArguments?: number;
  /** Tool calls of one turn run at once (default: all). */
  toolConcurrency?: number;
  modelSettings?: ModelCallSettings;
  /** The final answer must be JSON satisfying this schema; it becomes `output`. */
  outputSchema?: Parameters | { name?: string; schema: Parameters };
  /** The most a tool result may hold, in bytes of JSON (default 1 MiB); beyond it the model reads a short error. */
  maxToolOutput?: number;
  /** A secret (16 bytes or more) signing the digests of calls waiting for approval. */
  approvalKey?: string;
  /** Keys retired by a rotation: digests they signed still verify (runs paused before it stay decidable); new digests use `approvalKey`. */
  previousApprovalKeys?: readonly string[];
  /**
   * With a list of models: the error kinds that move on to the next (default
   * `["rate_limited", "overloaded", "server", "timeout", "network", "context_too_long"]`;
   * `invalid_request`, `authentication`, `permission` never do).
   */
  fallbackOn?: readonly FallbackKind[];
  /**
   * A JSON price table file (genai-prices' format) for the messages'
   * `cost`, consulted before the built-in table.
   */
  prices?: string;
  /**
   * MCP servers whose tools the agent offers too, listed before each model
   * call (tools a server adds or removes are seen).
   */
  toolsets?: readonly (McpServer | Toolset)[];
  /**
   * Final answers that do not fit `outputSchema` (not JSON, refused by its
   * JSON Schema or by a Standard Schema's own checks: zod refinements) sent
   * back to the model with the problems, per run, before the run fails
   * with RunError `invalid_output` (default 1).
   */
  outputRetries?: number;
  /** Guardrails run at the input, each tool call and the final answer, in order per point. */
  guardrails?: readonly Guardrail[];
  /**
   * How a streamed answer waits for the output guardrails: `"answer"`
   * (default: all of it checked first) or `"sentence"` (each sentence once
   * the answer so far is allowed).
   */
  outputHold?: "answer" | "sentence";
  /**
   * Keeps each run's context inside the model's window. Past `trigger`
   * (default 0.8) of the window (`window`, else the price table's), the
   * run fails (`"fail"`), leaves the oldest turns out of what is sent
   * (`"drop_oldest"`), or has `model` (default: the agent's) summarize
   * them (`"compact"`); the newest turns keep `keep` (default 0.25) of the
   * window. The thread keeps every message, and one record of the cut.
   */
  context?: ContextPolicy;
  /**
   * What each run, each thread and each thread owner may spend: tokens,
   * cost (US dollars), model calls, tool calls. Checked before every model
   * call; at a limit the model answers once more without tools (unless
   * `onExhausted: "stop"`), then the run throws `RunError`
   * `budget_exhausted`. Thread and owner limits read what the store
   * counted (`store.spent(threadId)`); the owner is the one given to
   * `store.createThread(metadata, { owner })`.
   */
  budget?: Budget;
  /**
   * A store through which a list of models shares its cooldowns: a model
   * that answered `429` with a wait is skipped by every process of that
   * store until then. The store must be open (`await Store.open(url)`).
   */
  sharedCooldowns?: Store;
}

/** See {@link AgentOptions.budget}. */
export interface Budget {
  /** Each run's limits. */
  run?: BudgetLimits;
  /** Each thread's, over all its runs (counted by the store). */
  thread?: BudgetLimits;
  /** Each owner's, over all their threads, per UTC day (counted by the store). */
  ownerDay?: BudgetLimits;
  /** Each owner's, over all their threads, per UTC month (counted by the store). */
  ownerMonth?: BudgetLimits;
  /** At a limit: one closing answer without tools (default), or none. */
  onExhausted?: "answer" | "stop";
}

/** The limits of one budget scope (unset: no limit). */
export interface BudgetLimits {
  /** Input plus output tokens. */
  tokens?: number;
  /** US dollars (priced models only: give others a token limit). */
  cost?: number;
  /** Model calls. */
  modelCalls?: number;
  /** Tool calls the model asked for. */
  toolCalls?: number;
}

/** What the store counted for one scope (see {@link Store.spent}). */
export interface Spent {
  tokens: number;
  /** US dollars. */
  cost: number;
  modelCalls: number;
  toolCalls: number;
}

/** `store.spent(threadId)`: the thread's, and its owner's today and this month (UTC). */
export interface ThreadSpent {
  thread: Spent;
  ownerDay: Spent;
  ownerMonth: Spent;
}

/** See {@link AgentOptions.context}. */
export interface ContextPolicy {
  strategy: "fail" | "drop_oldest" | "compact";
  /** The model's window in tokens (default: the price table's). */
  window?: number;
  /** The share of the window past which the policy acts, in (0, 1]. */
  trigger?: number;
  /** The share of the window the newest messages keep after a cut. */
  keep?: number;
  /** The model that writes summaries (compact only). */
  model?: string | Model;
  /** The instructions summaries are written with. */
  instructions?: string;
}

/** An error kind a fallback may move on by. */
export type FallbackKind =
  | "rate_limited"
  | "overloaded"
  | "server"
  | "timeout"
  | "network"
  | "context_too_long"
  | "quota_exceeded"
  | "malformed_response"
  | "unsupported";

/** A run's input: a user message as text, a message, or messages. */
export type RunInput = string | Message | readonly Message[];

/** An earlier turn: a Response, its JSON, `{messages}`, or messages. */
export type Turn = Response | ResponseDocument | { messages: readonly Message[] } | readonly Message[];

export interface RunOptions<Deps = unknown> {
  /** Earlier turns, whose messages reach the model before the input, in order. */
  turns?: readonly Turn[];
  /** The run's id (one is made up otherwise). */
  runId?: string;
  /** The thread the run belongs to (recorded on the response, given to tools). */
  threadId?: string;
  /** Handed to every tool of the run as `ctx.deps`. */
  deps?: Deps;
  /**
   * Cancels the run when aborted: it stops at its next await point, its
   * tools' `abortSignal`s are aborted, and the promise rejects with the
   * signal's reason. Not with `store` (a run on a thread is detached).
   */
  signal?: AbortSignal;
  /**
   * Run on a stored thread (`threadId` names it): its history comes from the
   * store, each step is committed as it completes, and one run at a time
   * holds the thread (StoreError `busy` otherwise). No `turns`, no `runId`.
   */
  store?: Store;
  /**
   * Handed each step of the run as it completes (to keep its progress in
   * your own storage); the run waits for the promise it returns, and what it
   * throws fails the run (RunError `store`). Not with `store` (the store is
   * the checkpoint).
   */
  checkpoint?: Checkpoint;
}

/** A step of a run: a message added, or the last one replaced (a tool message whose approvals were decided, or whose failed calls ran again). The run's input is the caller's and is not a step. */
export interface Step {
  kind: "append" | "replaceLast";
  message: Message;
}

/** Receives each step of a run. */
export type Checkpoint = (step: Step) => void | PromiseLike<void>;

export interface ResumeOptions<Deps = unknown> {
  turns?: readonly Turn[];
  deps?: Deps;
  /** Cancels the resumed run when aborted (as in `run`). */
  signal?: AbortSignal;
  /** The paused run is the one stored on its thread (the response names it). */
  store?: Store;
  /** Handed each step of the resumed run (as in `run`). */
  checkpoint?: Checkpoint;
}

/** Token counts summed over a run. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedTokens: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/**
 * What `usage` on `model` (`"provider:model"`) cost, in US dollars; undefined
 * when the price table does not know the model. `options.prices`: a JSON
 * price table file consulted before the built-in one (genai-prices).
 */
export declare function cost(
  model: string,
  usage: Usage | UsageDocument,
  options?: { prices?: string },
): number | undefined;

/** A log record of the runtime: its level, the Rust module it comes from, the message. */
export interface LogRecord {
  level: "error" | "warn" | "info" | "debug" | "trace";
  target: string;
  message: string;
}

/**
 * Sends the runtime's log records at `level` (default `"info"`) or more
 * severe to `logger`; `null` restores the default: warnings and errors as
 * process warnings of type `ParlanceWarning` (what a request left out,
 * such as reasoning another provider cannot read, is one).
 */
export declare function setLogger(
  logger: ((record: LogRecord) => void) | null,
  options?: { level?: LogRecord["level"] | "off" },
): void;

/** A run's response, over its canonical JSON. */
export declare class Response {
  /** Reads a response from canonical JSON (text or value); throws FormatError naming the path. */
  static fromJSON(value: string | ResponseDocument): Response;
  readonly id: string | undefined;
  readonly threadId: string | undefined;
  readonly status: RunStatus;
  /** This run's messages (input, assistant's, tools'). */
  readonly messages: Message[];
  /** The final text, or the JSON value with an output schema; null unless completed. */
  readonly output: JsonValue;
  /** The answer as text. */
  readonly text: string;
  readonly usage: Usage;
  /** What the run's model calls cost, in US dollars; undefined when a model is not in the price table. */
  readonly cost: number | undefined;
  readonly finishReason: FinishReason | undefined;
  /** The agent this run handed the conversation to, if it did (the next turns are its); `null` otherwise. */
  readonly handoff: string | null;
  /** The calls waiting for a decision. */
  readonly pending: ApprovalRequest[];
  readonly error: RunErrorDocument | undefined;
  /** The canonical object (what JSON.stringify writes). */
  toJSON(): ResponseDocument;
  /** The canonical JSON text, byte-identical to the Rust core's. */
  toString(): string;
}

/** A run's events, as they happen (the HTTP API's event names). */
export type RunEvent =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  | { type: "message"; message: Message }
  | { type: "tool_call_started"; callId: string; name: string }
  | { type: "tool_call_finished"; callId: string; name: string; status: ToolStatus; elapsedMs: number }
  | { type: "approval_required"; pending: ApprovalRequest[] }
  | {
      /** The context policy cut the oldest turns; the record follows as a `message`. */
      type: "context_compacted";
      strategy: "compact" | "drop_oldest";
      /** The record stands for the thread's first `replaces` messages. */
      replaces: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  | { type: "run_completed"; response: Response };

/** A run as events; a failed run throws RunError where `run_completed` would come. */
export declare class RunStream implements AsyncIterableIterator<RunEvent> {
  next(): Promise<IteratorResult<RunEvent, undefined>>;
  return(): Promise<IteratorResult<RunEvent, undefined>>;
  [Symbol.asyncIterator](): RunStream;
  /** Skips to the end: the final Response. */
  response(): Promise<Response>;
}

/** A decision on a waiting call (made by `approve`, `edit`, `reject`, `answer`). */
export type DecisionInput = Omit<Decision, "digest"> & { digest?: string };

/** A paused run: its Response, its JSON text, or its canonical object. */
export type Paused = Response | ResponseDocument | string;

/**
 * Another agent as a tool (made by `agent.asTool(...)`): the model sends the
 * task as `input`; the agent runs it as a run of its own, and its output is
 * the call's result.
 */
export declare class AgentTool {
  private constructor();
  /** The agent it runs. */
  readonly agent: Agent;
  /** The tool's name. */
  readonly name: string;
  /** What the calling model is told it does. */
  readonly description: string;
  /** Its calls' timeout in milliseconds (else the caller's `toolTimeout`). */
  readonly timeout: number | undefined;
  /** What the model is told: name, description, input schema (`{input: string}`). */
  readonly spec: { name: string; description: string; inputSchema: { [key: string]: JsonValue } };
}

export declare class Agent {
  constructor(options: AgentOptions);
  readonly tools: readonly (Tool<any> | AgentTool)[];
  /**
   * This agent as a tool of another: the calling model sends the task; this
   * agent runs it with the caller's `deps`, and its output is the call's
   * result; what it spent rolls up into the calling run. On a store its run
   * is kept on a thread of its own, and an approval it waits for is listed in
   * the caller's `pending` (with its `run_id`): decide it through the caller.
   */
  asTool(options?: { name?: string; description?: string; timeout?: number }): AgentTool;
  /** The settings recorded with each run. */
  readonly settings: { [key: string]: JsonValue };
  /** Runs the agent; a failed run throws RunError. */
  run(input: RunInput, options?: RunOptions): Promise<Response>;
  /** The run as events (with `store`, on a stored thread). */
  stream(input: RunInput, options?: RunOptions): RunStream;
  /**
   * Runs a failed run again from its last committed step: on a stored thread
   * `retry(threadId, { store })`; without a store `retry(undefined, { turns })`,
   * the failed run's history with its Response last.
   */
  retry(threadId: string, options: { store: Store; deps?: unknown }): Promise<Response>;
  retry(threadId: undefined, options: { turns: readonly Turn[]; runId?: string; threadId?: string; deps?: unknown; signal?: AbortSignal; checkpoint?: Checkpoint }): Promise<Response>;
  /** `retry` as events. */
  retryStream(threadId: string, options: { store: Store; deps?: unknown }): RunStream;
  retryStream(threadId: undefined, options: { turns: readonly Turn[]; runId?: string; threadId?: string; deps?: unknown; checkpoint?: Checkpoint }): RunStream;
  /**
   * Takes over a run of this agent whose process died and carries it on from its last committed step
   * (calls that had not committed run again with the same idempotency key; nothing that committed runs twice).
   * Throws StoreError (`conflict`) when the run is not dead, waits for decisions again, or was given up.
   */
  carryOn(runId: string, options: CarryOnOptions): Promise<Response>;
  /** Applies decisions to a paused run and goes on; refused decisions throw DecisionError. */
  resume(paused: Paused, decisions: readonly DecisionInput[], options?: ResumeOptions): Promise<Response>;
  /** `resume` as events. */
  resumeStream(paused: Paused, decisions: readonly DecisionInput[], options?: ResumeOptions): RunStream;
}

/** Run the call as the model asked. */
export declare function approve(request: ApprovalRequest | string): DecisionInput;
/** Run the call with these arguments instead (checked against the schema again). */
export declare function edit(request: ApprovalRequest | string, args: JsonValue): DecisionInput;
/** Do not run the call; the model reads why. */
export declare function reject(request: ApprovalRequest | string, reason?: string): DecisionInput;
/** Do not run the call; `content` stands in for its result. */
export declare function answer(request: ApprovalRequest | string, content: string | Block[]): DecisionInput;

// ---------------------------------------------------------------- errors

/** The base of every error parlance throws. */
export declare class ParlanceError extends Error {}
/** Throw it in a tool: the model reads the message (status `error`). */
export declare class ToolError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
/** A run failed; under `onToolException: "fail"` the tool's error is the `cause`. */
export declare class RunError extends ParlanceError {
  /** `tool_failed`, `model_error`, `max_model_calls`, `invalid_arguments_budget`, `invalid_output`... */
  readonly code: string;
  /** The structured cause (for `tool_failed`: `{tool, error_type, message}`). */
  readonly detail: JsonValue;
  /** The failed run (its messages keep the history consistent). */
  readonly response: Response | null;
}
/** A document is not canonical; `message` is the Rust error (`path: what`). */
export declare class FormatError extends ParlanceError {
  readonly path: string;
  readonly detail: string;
}
/** A decision was refused; nothing ran. */
export declare class DecisionError extends ParlanceError {
  readonly path: string;
  readonly detail: string;
}
/** An agent, tool, model or store cannot be built as given. */
export declare class ConfigError extends ParlanceError {}
/** The store refused or failed. */
export declare class StoreError extends ParlanceError {
  readonly kind: "busy" | "not_found" | "conflict" | "lease_lost" | "corrupt" | "unstorable" | "database" | (string & {});
}

// ---------------------------------------------------------------- format

/** The kinds of canonical document. */
export type DocumentKind = "conversation" | "message" | "block" | "response" | "request" | "turn" | "decision" | "tool_spec";

/**
 * The canonical format: the Rust readers, the published schema. A document
 * is a parsed value or its JSON text (a string or a Buffer); without a
 * `kind`, its fields say which (as `parlance validate` does).
 */
export declare const format: {
  /** The canonical form of `value` read as `kind` (older shapes read into today's). */
  canonical(value: unknown, kind?: DocumentKind): JsonValue;
  /** Throws FormatError (naming the JSON path) unless `value` is a canonical document; returns the kind it was read as. */
  validate(value: unknown, kind?: DocumentKind): DocumentKind;
  /** The canonical JSON text, byte-identical to Rust's. */
  stringify(value: unknown, kind?: DocumentKind): string;
  /** Reads JSON text as `kind` (or the kind its fields say); gives its canonical form. */
  parse(jsonText: string, kind?: DocumentKind): JsonValue;
  /**
   * A request, a response or a recorded stream (text, or bytes: a Bedrock
   * ConverseStream body's binary frames) from one format to another
   * (`canonical`, a wire format: `openai-chat`, `openai-responses`,
   * `anthropic`, `gemini`, `bedrock-converse`, `mistral`, `ollama`; or a
   * provider's dialect: `deepseek`, `openrouter`, `groq`...); what is
   * dropped on the way is a process warning, or goes to `onWarning`.
   */
  convert(
    value: unknown,
    options: {
      from: string;
      to: string;
      kind?: "request" | "response" | "stream";
      model?: string;
      onWarning?: (warning: string) => void;
    },
  ): JsonValue;
  /** A published JSON Schema. */
  schema(name?: "message" | "content-block" | "tool-spec" | "response" | "decision"): { [key: string]: JsonValue };
  readonly FORMAT_VERSION: string;
};

/** The package's version. */
export declare const version: string;
