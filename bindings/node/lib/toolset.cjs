"use strict";
// A toolset written in JavaScript: a function the agent asks before each
// model call for the tools it offers now (per customer, per feature flag,
// found at run time), given the run's `deps`. Its tools are ordinary
// `tool({...})` tools: validated, timed out and approved by the engine; a
// name the agent or another toolset also offers is prefixed with the
// toolset's `prefix` (default: its name) and `_`. The engine calls the
// function through lib/js_call.cjs (bindings/core/src/toolset.rs: the same
// tool objects are not rebuilt).

const { ConfigError } = require("./errors.cjs");
const { describe } = require("./schema.cjs");
const { isTool } = require("./tool.cjs");

class Toolset {
  /** @type {(deps: any) => unknown} */
  #list;

  /**
   * `listTools(deps)` (sync or async) returns the tools (made by `tool()`)
   * to offer for the next model call. What it throws, or a value that is
   * not a tool, fails the run with `tools_unavailable`, naming the toolset.
   * @param {(deps: any) => readonly import("./index").Tool[] | PromiseLike<readonly import("./index").Tool[]>} listTools
   * @param {{ name?: string, prefix?: string }} [options]
   */
  constructor(listTools, options = {}) {
    if (typeof listTools !== "function") {
      throw new ConfigError(`Toolset: expected a function returning tools, got ${describe(listTools)}`);
    }
    /** The toolset's name (in errors, and the default prefix). */
    this.name = options.name ?? (listTools.name || "toolset");
    /** Put with `_` before a tool name another source also offers. */
    this.prefix = options.prefix;
    this.#list = listTools;
  }

  /**
   * @internal The listing function for an agent whose tools are `registry`
   * (by index, the dispatcher's): each new tool object is added to it once.
   * @param {import("./tool.cjs").ToolObject[]} registry
   * @param {(tag: number) => unknown} depsOf
   * @returns {(arg: { tag: number }) => Promise<{ index: number, def: object }[]>}
   */
  _lister(registry, depsOf) {
    /** @type {Map<object, number>} */
    const indexes = new Map(registry.map((t, i) => [t, i]));
    return async ({ tag }) => {
      const tools = await this.#list(depsOf(tag));
      if (!Array.isArray(tools)) throw new TypeError(`expected a list of tools, got ${describe(tools)}`);
      return tools.map((t, i) => {
        if (!isTool(t)) throw new TypeError(`[${i}]: expected a tool made by tool({...}), got ${describe(t)}`);
        let index = indexes.get(t);
        if (index === undefined) {
          index = registry.length;
          registry.push(t);
          indexes.set(t, index);
        }
        return { index, def: t._def() };
      });
    };
  }
}

module.exports = { Toolset };
