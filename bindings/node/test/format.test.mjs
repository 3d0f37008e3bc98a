// The shared vectors in testdata/format/: the same results and the same
// error strings as Rust (crates/format/tests/vectors.rs) and Python.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { format, FormatError, ConfigError } from "parlance-ai";

const load = (name) => JSON.parse(readFileSync(join(process.env.PARLANCE_REPO, "testdata/format", name), "utf8"));

test("valid documents come back byte-identical", () => {
  const cases = load("valid.json");
  assert.ok(cases.length >= 20);
  for (const c of cases) {
    const text = JSON.stringify(c.value);
    assert.equal(format.stringify(c.value, c.kind), text, c.name);
    assert.deepEqual(format.parse(text, c.kind), c.value, c.name);
    format.validate(c.value, c.kind);
  }
});

test("older shapes read into the canonical form", () => {
  for (const c of load("legacy.json")) {
    assert.deepEqual(format.canonical(c.input, c.kind), c.expected, c.name);
  }
});

test("invalid documents fail with the exact error", () => {
  const cases = load("invalid.json");
  assert.ok(cases.length >= 40);
  for (const c of cases) {
    assert.throws(
      () => (c.text !== undefined ? format.parse(c.text, c.kind) : format.validate(c.input, c.kind)),
      (e) => {
        assert.ok(e instanceof FormatError, `${c.name}: ${e}`);
        assert.equal(e.message, c.error, c.name);
        return true;
      },
      c.name,
    );
  }
});

test("the published schemas, and unknown names", () => {
  const s = format.schema("message");
  assert.equal(s.title, "Parlance message");
  assert.equal(format.schema("content-block").$id.endsWith("content-block.schema.json"), true);
  assert.equal(format.FORMAT_VERSION, "1.1");
  assert.throws(() => format.schema("nope"), ConfigError);
  assert.throws(() => format.validate({}, "nope"), /unknown kind "nope"/);
});
