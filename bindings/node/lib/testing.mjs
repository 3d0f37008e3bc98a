// The ES module entry point of parlance-ai/testing: the same classes as
// the CommonJS one (one copy of each, so `instanceof` holds whichever way
// it was loaded).
import cjs from "./testing.cjs";

export const { TestModel, ScriptedModel, FunctionModel, Recorder, Replay } = cjs;
export default cjs;
