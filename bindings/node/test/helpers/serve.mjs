// `parlance serve` (the repository's built command) for the tests that
// are its clients: started on 127.0.0.1:0, stopped after the test.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * Starts `parlance serve --config config` with `env` added; its URL, or
 * undefined (the test skipped) when the command is not built and the run
 * does not require it.
 */
export async function startServe(t, config, env) {
  const repo = process.env.PARLANCE_REPO;
  const binary = process.env.PARLANCE_BIN ?? join(repo, "target", "debug", "parlance");
  if (!existsSync(binary)) {
    assert.ok(!process.env.PARLANCE_REQUIRE_MODEL, `no parlance command at ${binary} (cargo build -p parlance-cli)`);
    t.skip(`no parlance command at ${binary}`);
    return undefined;
  }
  const server = spawn(binary, ["serve", "--config", config], {
    env: { ...process.env, PARLANCE_LISTEN: "127.0.0.1:0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => server.kill());
  return new Promise((resolve, reject) => {
    let seen = "";
    server.stdout.on("data", (c) => {
      seen += c;
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    server.on("exit", (code) => reject(new Error(`parlance serve exited (${code}): ${seen}`)));
  });
}
