"use strict";
// The runtime's logs: each record (`level`, `target`: the Rust module,
// `message`) goes to the logger given to `setLogger`, or, by default,
// warnings and errors become process warnings of type `ParlanceWarning`
// (what a request left out, e.g. reasoning another provider cannot read).

const native = require("./native.cjs");

/** @typedef {"error" | "warn" | "info" | "debug" | "trace"} LogLevel */
/** @typedef {{ level: LogLevel, target: string, message: string }} LogRecord */

/** @type {((record: LogRecord) => void) | null} */
let logger = null;

native.setLogSink(
  /** @param {[level: string, target: string, message: string]} record */
  (record) => {
    const [level, target, message] = record;
    if (logger) {
      logger({ level: /** @type {LogLevel} */ (level), target, message });
    } else {
      process.emitWarning(message, { type: "ParlanceWarning", code: target });
    }
  },
  "warn",
);

/**
 * Sends the runtime's log records at `level` or more severe to `fn`
 * (`null`: back to the default, warnings and errors as process warnings).
 * @param {((record: LogRecord) => void) | null} fn
 * @param {{ level?: LogLevel | "off" }} [options]
 */
function setLogger(fn, { level = "info" } = {}) {
  logger = fn;
  native.setLogLevel(fn ? level : "warn");
}

module.exports = { setLogger };
