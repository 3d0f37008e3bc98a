"use strict";
// An MCP server's tools for an agent (`new Agent({ toolsets: [server] })`).
// The settings are the server TOML's `[[mcp]]` ones, in camelCase with
// durations in milliseconds, checked by the same Rust code
// (`parlance_bindings::mcp`); the tools are validated, timed out, approved
// and run by the engine exactly as `tool({...})` tools are.

const native = require("./native.cjs");
const { ConfigError, guard, rethrow } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

class McpServer {
  /** @type {any} the native server */
  #native;

  /**
   * A server from all its settings (`name`, and `command`/`args` or `url`);
   * `McpServer.stdio` and `McpServer.http` are the usual ways to make one.
   * It starts when a run first needs its tools, and is shared by every
   * agent it is given to: one process or one HTTP session per object.
   * @param {import("./index").McpServerSettings} settings
   */
  constructor(settings) {
    if (settings === null || typeof settings !== "object" || Array.isArray(settings)) {
      throw new ConfigError(`McpServer: expected an object of settings, got ${describe(settings)}`);
    }
    this.#native = guard(() => new native.NativeMcpServer(JSON.stringify(settings)));
  }

  /**
   * A server run as a child process, spoken to over its stdin/stdout. Only
   * `HOME`, `LANG`, `LC_ALL`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `TMPDIR`, `USER` and
   * `env` reach it (so that API keys do not reach every server);
   * `inheritEnv: true` passes this process's whole environment on.
   * @param {string} name
   * @param {string} command
   * @param {import("./index").McpStdioOptions} [options]
   * @returns {McpServer}
   */
  static stdio(name, command, options = {}) {
    return new McpServer({ ...options, name, command });
  }

  /**
   * A server reached over streamable HTTP at `url`; `bearer` (or the
   * variable `bearerEnv` names, read now) is sent as `Authorization: Bearer
   * ...`, `headers` with every request.
   * @param {string} name
   * @param {string} url
   * @param {import("./index").McpHttpOptions} [options]
   * @returns {McpServer}
   */
  static http(name, url, options = {}) {
    return new McpServer({ ...options, name, url });
  }

  /** The server's name. */
  get name() {
    return /** @type {string} */ (this.#native.name);
  }

  /**
   * Stops the server now (its process ends, its HTTP session closes); the
   * next run that needs it starts it again.
   * @returns {Promise<void>}
   */
  async shutdown() {
    await guard(() => this.#native.shutdown()).catch(rethrow);
  }

  /** `await using server = McpServer.stdio(...)` stops it at the end of the block. */
  async [Symbol.asyncDispose]() {
    await this.shutdown();
  }

  /** @internal */
  _native() {
    return this.#native;
  }
}

module.exports = { McpServer };
