// MCP servers' tools from TypeScript, through the packed package, against
// the real MCP server of the Rust tests (testdata/mcp/server.py, on the
// official Python SDK from PyPI, run by the interpreter
// scripts/mcp-test-server installs): over stdio and over streamable HTTP
// with a bearer token, arguments validated before they reach the server,
// approvals, a lazy start, shutdown, and settings that cannot work refused
// with the setting named.
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Agent, ConfigError, McpServer, RunError, approve } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";

const REPO = process.env.PARLANCE_REPO;
const SERVER = join(REPO, "testdata/mcp/server.py");
const PYTHON = process.env.PARLANCE_MCP_PYTHON ?? join(REPO, "target/mcp-venv/bin/python");
const skip = existsSync(PYTHON) ? false : "no MCP test server (scripts/mcp-test-server installs it)";
if (skip && process.env.PARLANCE_REQUIRE_MCP === "1") {
  throw new Error(`PARLANCE_REQUIRE_MCP=1 but there is no MCP test server interpreter at ${PYTHON}`);
}

function logFile(t) {
  const dir = mkdtempSync(join(tmpdir(), "parlance-mcp-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "calls");
}

/** The calls that reached the server. */
const seen = (log) =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

const call = (id, name, args) => ({ type: "tool_call", tool_call: { id, name, arguments: args } });
const results = (messages) =>
  messages.filter((m) => m.role === "tool").flatMap((m) => m.content.map((b) => b.tool_result));

/** A model that calls the given tools once, then says what it read; it keeps the tool names of each request. */
function script(...calls) {
  const offered = [];
  const model = new FunctionModel((messages, { tools }) => {
    offered.push(tools.map((t) => t.name));
    if (messages.at(-1).role !== "tool") return { content: calls };
    return results(messages.slice(-1))
      .map((r) => `${r.status ?? "ok"}: ${JSON.stringify(r.content)}`)
      .join(" | ");
  });
  return { model, offered };
}

test("stdio: tools listed, validated before they reach the server, and run", { skip }, async (t) => {
  const log = logFile(t);
  const server = McpServer.stdio("tests", PYTHON, { args: [SERVER, "--log", log], timeout: 5000 });
  t.after(() => server.shutdown());
  const { model, offered } = script(call("c1", "add", { a: 2, b: 3 }), call("c2", "add", { a: "two", b: 3 }));
  const agent = new Agent({ model, toolsets: [server] });
  assert.deepEqual(seen(log), [], "started before a run needed it");

  const r = await agent.run("add");
  assert.equal(r.status, "completed");
  assert.deepEqual(offered[0], ["add", "echo", "sleep", "fail", "pid", "die", "picture", "grow"]);
  assert.deepEqual(
    results(r.messages).map((x) => x.status ?? "ok"),
    ["ok", "invalid_arguments"],
  );
  assert.deepEqual(results(r.messages)[0].content, [{ type: "json", json: { result: 5 } }]);
  assert.deepEqual(seen(log), [{ tool: "add", args: { a: 2, b: 3 } }]);
});

test("HTTP with a bearer token, a prefix and an approval", { skip }, async (t) => {
  const log = logFile(t);
  const url = await httpServer(t, log, "s3cret");
  const server = McpServer.http("tickets", url, { bearer: "s3cret", prefix: "t", needsApproval: ["echo"] });
  t.after(() => server.shutdown());
  const agent = new Agent({ model: script(call("c1", "t_echo", { text: "close it" })).model, toolsets: [server] });

  const paused = await agent.run("echo");
  assert.equal(paused.status, "requires_approval");
  assert.deepEqual(
    paused.pending.map((p) => p.name),
    ["t_echo"],
  );
  assert.deepEqual(seen(log), [], "a call waiting for approval reached the server");

  const r = await agent.resume(paused, [approve(paused.pending[0])]);
  assert.equal(r.status, "completed");
  assert.equal(r.text, 'ok: [{"type":"text","text":"close it"}]');
  assert.deepEqual(seen(log), [{ tool: "echo", args: { text: "close it" } }]);

  const refused = McpServer.http("tickets", url, { bearer: "wrong" });
  await assert.rejects(
    new Agent({ model: script().model, toolsets: [refused] }).run("hi"),
    (e) => e instanceof RunError && /tools_unavailable/.test(e.message) && /mcp server "tickets": could not start: .*401/.test(e.message),
  );
});

test("shutdown stops the process and a later run starts it again", { skip }, async (t) => {
  const log = logFile(t);
  const pids = [];
  const server = McpServer.stdio("tests", PYTHON, { args: [SERVER, "--log", log] });
  try {
    const agent = new Agent({ model: script(call("c1", "pid", {})).model, toolsets: [server] });
    const r = await agent.run("pid");
    pids.push(results(r.messages)[0].content[0].json.result);
    await server.shutdown();
    const again = await agent.run("pid");
    pids.push(results(again.messages)[0].content[0].json.result);
  } finally {
    await server[Symbol.asyncDispose]();
  }
  assert.notEqual(pids[0], pids[1], "the same process answered after shutdown");
  for (const pid of pids) await waitGone(pid);
});

test("settings that cannot work are refused, naming the setting", () => {
  const refused = (f, re) => assert.throws(f, (e) => e instanceof ConfigError && re.test(e.message));
  refused(() => new McpServer({ name: "x", comand: "python3" }), /mcp server "x": unknown setting "comand" \(known: name, command,/);
  refused(() => new McpServer({ name: "x", inherit_env: true, command: "x" }), /unknown setting "inherit_env" \(known: .*inheritEnv/);
  refused(() => McpServer.stdio("x", "python3", { timeout: -1 }), /mcp server "x": timeout: expected a positive number of milliseconds, got -1/);
  refused(() => new McpServer({ name: "x" }), /mcp server "x": /);
  refused(() => new McpServer("python3 server.py"), /McpServer: expected an object of settings/);
  refused(() => new Agent({ model: script().model, toolsets: ["python3 server.py"] }), /toolsets\[0\]: expected an McpServer or a Toolset/);
});

async function waitGone(pid) {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) assert.fail(`process ${pid} still runs after shutdown`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The test server over streamable HTTP on a free port of 127.0.0.1; its URL. */
async function httpServer(t, log, token) {
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
  const proc = spawn(PYTHON, [SERVER, "--log", log, "--http", String(port), "--token", token], { stdio: "ignore" });
  t.after(() => proc.kill("SIGKILL"));
  const deadline = Date.now() + 30000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const c = connect(port, "127.0.0.1", () => {
        c.end();
        resolve(true);
      });
      c.on("error", () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error("the MCP test server did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return `http://127.0.0.1:${port}/mcp`;
}
