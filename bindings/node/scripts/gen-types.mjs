#!/usr/bin/env node
// Writes lib/format.d.ts, the TypeScript types of the canonical format,
// from the published JSON Schema in schema/ (the repository's root), so
// that they cannot drift from it. `--check`: fails when the committed file
// differs from what the schemas give (run by scripts/test).
//
// The schemas use a small part of JSON Schema, all handled here: `type`
// (one or several), `properties`/`required`, `additionalProperties`,
// `items`, `oneOf`/`anyOf`, `const`, `enum`, `$ref` to `#/$defs/X` or `#`
// (alone, or beside properties: an intersection). Anything else is an
// error, not a silent `unknown`.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const schemaDir = join(here, "..", "..", "..", "schema");
const out = join(here, "..", "lib", "format.d.ts");

/** Each file's root type, named. */
const ROOTS = {
  "message.schema.json": "Message",
  "content-block.schema.json": "Block",
  "tool-spec.schema.json": "ToolSpec",
  "response.schema.json": "ResponseDocument",
  "decision.schema.json": "Decision",
};
const IGNORED = new Set(["description", "title", "$schema", "$id", "$defs", "x-parlance-format-version", "format", "minimum", "default", "unevaluatedProperties"]);
const KNOWN = new Set([...IGNORED, "type", "properties", "required", "additionalProperties", "items", "oneOf", "anyOf", "const", "enum", "$ref"]);

function doc(text, indent) {
  if (!text) return "";
  const lines = text.split("\n");
  if (lines.length === 1) return `${indent}/** ${text} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ""}`).join("\n")}\n${indent} */\n`;
}

function prop(name) {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The TypeScript type of schema `s` (`root`: the file's root type name). */
function ts(s, root, indent, where) {
  for (const k of Object.keys(s)) {
    if (!KNOWN.has(k)) throw new Error(`${where}: unsupported keyword ${k}`);
  }
  const parts = [];
  if (s.$ref !== undefined) {
    if (s.$ref === "#") parts.push(root);
    else if (s.$ref.startsWith("#/$defs/")) parts.push(s.$ref.slice("#/$defs/".length));
    else throw new Error(`${where}: unsupported $ref ${s.$ref}`);
  }
  const alts = s.oneOf ?? s.anyOf;
  if (alts) parts.push(`(${alts.map((a, i) => ts(a, root, indent, `${where}/${i}`)).join(" | ")})`);
  if (s.const !== undefined) parts.push(JSON.stringify(s.const));
  else if (s.enum) parts.push(s.enum.map((v) => JSON.stringify(v)).join(" | "));
  else if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const t = types.map((type) => {
      switch (type) {
        case "string":
          return "string";
        case "integer":
        case "number":
          return "number";
        case "boolean":
          return "boolean";
        case "null":
          return "null";
        case "array":
          return s.items ? `Array<${ts(s.items, root, indent, `${where}/items`)}>` : "JsonValue[]";
        case "object":
          return object(s, root, indent, where);
        default:
          throw new Error(`${where}: unsupported type ${type}`);
      }
    });
    parts.push(t.length > 1 ? `(${t.join(" | ")})` : t[0]);
  } else if (s.properties) {
    parts.push(object(s, root, indent, where));
  }
  if (parts.length === 0) return "JsonValue";
  return parts.join(" & ");
}

function object(s, root, indent, where) {
  const props = s.properties ?? {};
  const required = new Set(s.required ?? []);
  const inner = `${indent}  `;
  const lines = Object.entries(props).map(([name, p]) => {
    const opt = required.has(name) ? "" : "?";
    return `${doc(p.description, inner)}${inner}${prop(name)}${opt}: ${ts(p, root, inner, `${where}/${name}`)};\n`;
  });
  // Open objects (no `additionalProperties: false`) with named properties
  // get no index signature: TypeScript's structural typing already lets
  // values carry more, and a signature would have to admit every property.
  const extra = s.additionalProperties;
  if (extra === undefined || extra === true) {
    if (Object.keys(props).length === 0) return "{ [key: string]: JsonValue }";
  } else if (typeof extra === "object") {
    lines.push(`${inner}[key: string]: ${ts(extra, root, inner, `${where}/additionalProperties`)};\n`);
  }
  return `{\n${lines.join("")}${indent}}`;
}

function generate() {
  const defs = new Map();
  const roots = [];
  for (const [file, name] of Object.entries(ROOTS)) {
    const schema = JSON.parse(readFileSync(join(schemaDir, file), "utf8"));
    const rootName = file === "content-block.schema.json" ? "Block" : name;
    for (const [def, s] of Object.entries(schema.$defs ?? {})) {
      const text = `${doc(s.description, "")}export type ${def} = ${ts(s, "Block", "", `${file}#/$defs/${def}`)};\n`;
      if (defs.has(def) && defs.get(def) !== text) throw new Error(`${file}: $defs/${def} differs from another file's`);
      defs.set(def, text);
    }
    const { $defs, description, title, ...rest } = schema;
    roots.push([name, doc(description ?? title, ""), ts(rest, rootName, "", file)]);
  }
  // A root that is also another file's $def is written once (as the $def),
  // and must be the same type.
  const rootTexts = [];
  for (const [name, comment, body] of roots) {
    if (defs.has(name)) {
      if (!defs.get(name).endsWith(`export type ${name} = ${body};\n`)) {
        throw new Error(`${name}: the root schema differs from another file's $defs/${name}`);
      }
      continue;
    }
    rootTexts.push(`${comment}export type ${name} = ${body};\n`);
  }
  if (!defs.has("Block")) throw new Error("no Block type in the schemas");
  const head = [
    "// Generated by bindings/node/scripts/gen-types.mjs from the JSON Schema in",
    "// schema/ (the canonical format, version " +
      JSON.parse(readFileSync(join(schemaDir, "message.schema.json"), "utf8"))["x-parlance-format-version"] +
      "). Do not edit: run the script.",
    "",
    "/** Any JSON value. */",
    "export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };",
    "",
  ].join("\n");
  return `${head}\n${rootTexts.join("\n")}\n${[...defs.values()].join("\n")}`;
}

// The ES module entry's types are the CommonJS entry's, with the relative
// import written as an ES module must (with its extension).
const dts = join(here, "..", "lib", "index.d.ts");
const dmts = join(here, "..", "lib", "index.d.mts");
const mts = `// Generated from index.d.ts by scripts/gen-types.mjs: edit that file.\n${readFileSync(dts, "utf8").replaceAll('from "./format";', 'from "./format.js";')}`;

// The same for parlance-ai/testing.
const testingDts = join(here, "..", "lib", "testing.d.ts");
const testingDmts = join(here, "..", "lib", "testing.d.mts");
const testingMts = `// Generated from testing.d.ts by scripts/gen-types.mjs: edit that file.\n${readFileSync(testingDts, "utf8")
  .replaceAll('from "./format";', 'from "./format.js";')
  .replaceAll('from "./index";', 'from "./index.mjs";')}`;

const files = [
  [out, generate()],
  [dmts, mts],
  [testingDmts, testingMts],
];
if (process.argv.includes("--check")) {
  for (const [file, text] of files) {
    let committed = "";
    try {
      committed = readFileSync(file, "utf8");
    } catch {}
    if (committed !== text) {
      console.error(`${file} differs from what it is generated from: run \`node bindings/node/scripts/gen-types.mjs\` and commit`);
      process.exit(1);
    }
  }
  console.log("lib/format.d.ts matches schema/, lib/index.d.mts and lib/testing.d.mts match their .d.ts");
} else {
  for (const [file, text] of files) writeFileSync(file, text);
  console.log("wrote lib/format.d.ts, lib/index.d.mts and lib/testing.d.mts");
}
