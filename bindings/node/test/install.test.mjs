// Installing the package from a clone in one command each, as the README
// says: the packed tarball carries its native module (this test folder
// installed it), and `npm install ./bindings/node` builds the module with
// cargo (the package's `prepare` script) when the folder has none.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";

const repo = process.env.PARLANCE_REPO;
const pkg = join(repo, "bindings", "node");
const module = "parlance.linux-x64-gnu.node";

/** Runs a command to its end (not blocking this process). */
function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

/** A fresh project folder (under the repository's target/, as every test file here). */
function project(name) {
  const dir = mkdtempSync(join(process.cwd(), `${name}-`));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true }));
  return dir;
}

const validate = `console.log(require("parlance-ai").format.validate({ role: "user", content: [{ type: "text", text: "hi" }] }))`;

test("the packed tarball carries the native module", () => {
  const tarball = readdirSync(".").find((f) => /^parlance-ai-.*\.tgz$/.test(f));
  assert.ok(tarball, "the tarball is in the test folder");
  const listed = spawnSync("tar", ["tzf", tarball], { encoding: "utf8" }).stdout.split("\n");
  assert.ok(listed.includes(`package/${module}`), listed.join("\n"));
  assert.ok(existsSync(createRequire(import.meta.url).resolve(`parlance-ai/package.json`).replace("package.json", module)));
});

test("npm install ./bindings/node builds the missing native module with cargo", async (t) => {
  const saved = join(pkg, `${module}.saved`);
  renameSync(join(pkg, module), saved);
  t.after(() => {
    if (!existsSync(join(pkg, module))) renameSync(saved, join(pkg, module));
    else rmSync(saved, { force: true });
  });
  const dir = project("install-from-clone");
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // The dev profile, as the test command built it: cargo has nothing to do
  // but the module is made and copied again.
  const env = { ...process.env, PARLANCE_NODE_PROFILE: "dev" };
  const install = await run("npm", ["install", "--foreground-scripts", "--no-audit", "--no-fund", "--prefer-offline", pkg], { cwd: dir, env });
  assert.equal(install.code, 0, install.out);
  assert.match(install.out, /building the native module for linux-x64-gnu with cargo \(dev profile\)/);
  assert.ok(existsSync(join(pkg, module)), install.out);
  const used = await run(process.execPath, ["-e", validate], { cwd: dir });
  assert.equal(used.out, "message\n");

  // With the module there, nothing is built.
  const again = project("install-from-clone-again");
  t.after(() => rmSync(again, { recursive: true, force: true }));
  const second = await run("npm", ["install", "--foreground-scripts", "--no-audit", "--no-fund", "--prefer-offline", pkg], { cwd: again, env });
  assert.equal(second.code, 0, second.out);
  assert.doesNotMatch(second.out, /building the native module/);
});
