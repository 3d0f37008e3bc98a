// A Rust panic becomes a JavaScript exception, never an abort: in a call
// and in the future behind a promise. The process goes on afterwards.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { test } from "node:test";

import { format, ParlanceError } from "parlance-ai";

// The package's internals, by path (its exports do not offer them).
const require = createRequire(import.meta.url);
const lib = join(dirname(require.resolve("parlance-ai/package.json")), "lib");
const native = require(join(lib, "native.cjs"));
const { guard, rethrow } = require(join(lib, "errors.cjs"));

test("a panic in a call is an exception", () => {
  assert.throws(() => native.panicForTests("sync"), /deliberate panic \(sync\)/);
});

test("a panic in a future is a rejected promise, and the process goes on", async () => {
  await assert.rejects(
    guard(() => native.panicForTests("async")).catch(rethrow),
    (e) => {
      assert.ok(e instanceof ParlanceError, e);
      assert.equal(e.message, "a bug in parlance's Rust core: deliberate panic (async)");
      return true;
    },
  );
  format.validate([{ role: "user", content: "hi" }]);
});
