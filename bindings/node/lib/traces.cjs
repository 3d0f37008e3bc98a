"use strict";
// `exportTraces`: the OpenTelemetry spans of every run (`invoke_agent`,
// `chat`, `execute_tool`, GenAI semantic conventions:
// docs/observability.md) sent to an OTLP collector over HTTP by the Rust
// core itself (`parlance_otel`), in batches from a thread of its own.

const native = require("./native.cjs");
const { ConfigError, guard, rethrow } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

/**
 * Exports every run's spans from now on, once per process. `endpoint` is
 * the collector's base URL (`http://localhost:4318`; spans go to its
 * `/v1/traces`); what is not given comes from the standard variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_SERVICE_NAME`, default `parlance`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
 * default `http/protobuf`). What is left is sent when the process exits.
 * @param {import("./index").TraceOptions} [options]
 * @returns {import("./index").Traces}
 */
function exportTraces(options = {}) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new ConfigError(`exportTraces: expected options {endpoint?, headers?, serviceName?, protocol?}, got ${describe(options)}`);
  }
  const t = guard(() => native.exportTraces(JSON.stringify(options)));
  let stopped = false;
  process.once("exit", () => {
    if (stopped) return;
    stopped = true;
    try {
      // Nothing asynchronous runs in an exit handler: it waits for the collector.
      t.shutdownBlocking();
    } catch {
      // The process is ending: nothing is left to tell.
    }
  });
  return {
    flush: async () => {
      await guard(() => t.flush()).catch(rethrow);
    },
    shutdown: async () => {
      if (stopped) return;
      stopped = true;
      await guard(() => t.shutdown()).catch(rethrow);
    },
  };
}

module.exports = { exportTraces };
