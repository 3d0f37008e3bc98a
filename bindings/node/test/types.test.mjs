// The package's types, as a TypeScript user compiles against them: strict
// tsc on test/types (ESM and CommonJS), with expected errors that must be
// errors.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { test } from "node:test";

test("the package's types compile in strict mode, for import and require", () => {
  const require = createRequire(import.meta.url);
  const tsc = require.resolve("typescript/bin/tsc");
  const out = spawnSync(process.execPath, [tsc, "-p", "test/types/tsconfig.json"], { encoding: "utf8" });
  assert.equal(out.status, 0, `${out.stdout}${out.stderr}`);
});
