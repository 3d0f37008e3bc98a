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
      // A string is JSON text: the document that is a string, written out.
      () =>
        c.text !== undefined
          ? format.parse(c.text, c.kind)
          : format.validate(typeof c.input === "string" ? JSON.stringify(c.input) : c.input, c.kind),
      (e) => {
        assert.ok(e instanceof FormatError, `${c.name}: ${e}`);
        assert.equal(e.message, c.error, c.name);
        return true;
      },
      c.name,
    );
  }
});

test("validate without a kind recognises it as `parlance validate` does, from values and JSON text", () => {
  for (const c of load("valid.json")) {
    const text = JSON.stringify(c.value);
    assert.equal(format.validate(c.value), c.kind, c.name);
    assert.equal(format.validate(text), c.kind, c.name);
    assert.equal(format.validate(Buffer.from(text)), c.kind, c.name);
    assert.equal(format.stringify(text), text, c.name);
    assert.deepEqual(format.parse(text), c.value, c.name);
  }
  assert.throws(() => format.validate('{"role": "robot", "content": []}'), /^FormatError: role: unknown role "robot"/);
  assert.throws(() => format.validate('[{"role": "user",'), (e) => e.message === "(root): invalid JSON at line 1 column 17: EOF while parsing a value");
  const request = { model: "gpt-5", messages: [{ role: "user", content: "Hi" }] };
  assert.equal(format.validate(request), "request");
  assert.deepEqual(format.canonical(request).messages[0].content, [{ type: "text", text: "Hi" }]);
});

test("the published schemas, and unknown names", () => {
  const s = format.schema("message");
  assert.equal(s.title, "Parlance message");
  assert.equal(format.schema("content-block").$id.endsWith("content-block.schema.json"), true);
  assert.equal(format.FORMAT_VERSION, "1.1");
  assert.throws(() => format.schema("nope"), ConfigError);
  assert.throws(() => format.validate({}, "nope"), /unknown kind "nope"/);
});
