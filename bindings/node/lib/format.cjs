"use strict";
// The canonical format from JavaScript: the Rust readers themselves (same
// results, same error strings as Rust and Python), the published JSON
// Schema, and conversion between the canonical format and providers' wire
// formats.

const native = require("./native.cjs");
const { guard } = require("./errors.cjs");

function text(value) {
  const t = JSON.stringify(value);
  // undefined, a function...: not JSON at all; the reader says what it got.
  return t === undefined ? "null" : t;
}

/**
 * The canonical form of `value` (a parsed JSON value) read as
 * `kind`: conversation (default), message, block, response, turn,
 * decision, tool_spec. Older shapes are read into today's. Throws
 * FormatError naming the JSON path of the first problem.
 */
function canonical(value, kind = "conversation") {
  return JSON.parse(guard(() => native.canonical(kind, text(value))));
}

/** Checks `value` as a `kind` document; throws FormatError when it is not canonical. */
function validate(value, kind = "conversation") {
  guard(() => native.canonical(kind, text(value)));
}

/** The canonical JSON text of `value`, byte-identical to the Rust core's. */
function stringify(value, kind = "conversation") {
  return guard(() => native.canonical(kind, text(value)));
}

/**
 * Reads JSON text as a `kind` document and gives its canonical form; JSON
 * syntax errors are worded as in Rust (`(root): invalid JSON at line 1
 * column 17: ...`).
 */
function parse(jsonText, kind = "conversation") {
  return JSON.parse(guard(() => native.canonical(kind, String(jsonText))));
}

/**
 * A request or a response from one format to another: canonical,
 * openai-chat, openai-responses, anthropic, gemini, bedrock-converse,
 * mistral, ollama (what `parlance
 * convert` does). Writing a provider's request needs `model` (or a model
 * named by the input). Anything dropped on the way is a process warning
 * (`ParlanceConvertWarning`); `onWarning` receives them instead.
 */
function convert(value, { from, to, kind = "request", model, onWarning } = {}) {
  const { output, warnings } = JSON.parse(
    guard(() => native.convert(text(value), String(from), String(to), String(kind), model)),
  );
  for (const w of warnings) {
    if (onWarning) onWarning(w);
    else process.emitWarning(w, "ParlanceConvertWarning");
  }
  return output;
}

/** A published JSON Schema: message (default), content-block, tool-spec, response, decision. */
function schema(name = "message") {
  return JSON.parse(guard(() => native.schema(name)));
}

const FORMAT_VERSION = native.formatVersion();

module.exports = { canonical, validate, stringify, parse, convert, schema, FORMAT_VERSION };
