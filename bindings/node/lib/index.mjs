// The ES module entry point: the same objects as the CommonJS one (one
// copy of each class, so `instanceof` holds whichever way it was loaded).
import cjs from "./index.cjs";

export const {
  Agent,
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
  Response,
  cost,
  approve,
  edit,
  reject,
  answer,
  format,
  setLogger,
  ToolError,
  ParlanceError,
  RunError,
  FormatError,
  DecisionError,
  ConfigError,
  StoreError,
  version,
} = cjs;
export default cjs;
