"use strict";
// The canonical format from JavaScript: the Rust readers themselves (same
// results, same error strings as Rust and Python), the published JSON
// Schema, and conversion between the canonical format and providers' wire
// formats.

const native = require("./native.cjs");
const { guard } = require("./errors.cjs");

/** @typedef {import("./index").DocumentKind} DocumentKind */

/**
 * @param {unknown} value
 * @returns {string}
 */
function text(value) {
  const t = JSON.stringify(value);
  // undefined, a function...: not JSON at all; the reader says what it got.
  return t === undefined ? "null" : t;
}

/**
 * The document as JSON text: a string is JSON text already, a Buffer its UTF-8.
 * @param {unknown} value
 * @returns {string}
 */
function documentText(value) {
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("utf8");
  return text(value);
}

/**
 * Reads a document (value or JSON text) as `kind`, or the kind its fields say.
 * @param {unknown} value
 * @param {DocumentKind | undefined} kind
 * @returns {{ kind: DocumentKind, canonical: string }}
 */
function read(value, kind) {
  return guard(() => native.canonical(kind ?? undefined, documentText(value)));
}

/**
 * The canonical form of `value` (a parsed JSON value, or JSON text) read
 * as `kind` — conversation, message, block, response, request, turn,
 * decision, tool_spec — or, without a kind, as the kind its fields say (as
 * `parlance validate` does). Older shapes are read into today's. Throws
 * FormatError naming the JSON path of the first problem.
 * @param {unknown} value
 * @param {DocumentKind} [kind]
 * @returns {import("./index").JsonValue}
 */
function canonical(value, kind) {
  return JSON.parse(read(value, kind).canonical);
}

/**
 * Checks `value` (parsed, or JSON text) as a `kind` document, or as the
 * kind its fields say; throws FormatError when it is not canonical.
 * Returns the kind it was read as.
 * @param {unknown} value
 * @param {DocumentKind} [kind]
 * @returns {DocumentKind}
 */
function validate(value, kind) {
  return read(value, kind).kind;
}

/**
 * The canonical JSON text of `value`, byte-identical to the Rust core's.
 * @param {unknown} value
 * @param {DocumentKind} [kind]
 * @returns {string}
 */
function stringify(value, kind) {
  return read(value, kind).canonical;
}

/**
 * Reads JSON text as a `kind` document (or the kind its fields say) and
 * gives its canonical form; JSON syntax errors are worded as in Rust
 * (`(root): invalid JSON at line 1 column 17: ...`).
 * @param {string} jsonText
 * @param {DocumentKind} [kind]
 * @returns {import("./index").JsonValue}
 */
function parse(jsonText, kind) {
  return JSON.parse(read(String(jsonText), kind).canonical);
}

/**
 * A request, a response or a recorded stream (SSE text, JSON lines, a
 * list of events, or the bytes of a Bedrock ConverseStream body; to
 * canonical only) from one format to another: canonical, a wire format
 * (openai-chat, openai-responses, anthropic, gemini, bedrock-converse,
 * mistral, ollama) or a provider's dialect (deepseek, openrouter, groq...;
 * what `parlance convert` does). Writing a provider's request needs `model` (or a model
 * named by the input). Anything dropped on the way is a process warning
 * (`ParlanceConvertWarning`); `onWarning` receives them instead.
 * @param {unknown} value
 * @param {{ from?: string, to?: string, kind?: "request" | "response" | "stream", model?: string, onWarning?: (warning: string) => void }} [options]
 * @returns {import("./index").JsonValue}
 */
function convert(value, { from, to, kind = "request", model, onWarning } = {}) {
  // A recorded stream may be its raw text (SSE, or JSON lines), or bytes
  // (that text, or a Bedrock ConverseStream body's binary frames).
  const input =
    kind === "stream" && value instanceof Uint8Array
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : kind === "stream" && typeof value === "string"
        ? value
        : text(value);
  const { output, warnings } = JSON.parse(
    guard(() => native.convert(input, String(from), String(to), String(kind), model)),
  );
  for (const w of /** @type {string[]} */ (warnings)) {
    if (onWarning) onWarning(w);
    else process.emitWarning(w, "ParlanceConvertWarning");
  }
  return output;
}

/**
 * A published JSON Schema: message (default), content-block, tool-spec, response, decision.
 * @param {string} [name]
 * @returns {{ [key: string]: import("./index").JsonValue }}
 */
function schema(name = "message") {
  return JSON.parse(guard(() => native.schema(name)));
}

const FORMAT_VERSION = native.formatVersion();

module.exports = { canonical, validate, stringify, parse, convert, schema, FORMAT_VERSION };
