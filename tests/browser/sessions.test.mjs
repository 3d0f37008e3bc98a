// Sessions that end: a logged-out cookie is refused when replayed; an
// operator ends every session of a subject from the inbox and that
// subject's open page goes to the login form; a session with too many
// live pages says so on the page (and does not reload in a loop).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { browser, eventually, login, startMocks, startRun, startServer } from "./harness.mjs";

let mocks, server, chrome;
before(async () => {
  mocks = await startMocks();
  server = await startServer(mocks, { top: "[sessions]\nmax_live_streams = 1\n" });
  chrome = await browser();
});
after(async () => {
  await chrome?.close();
  await server?.stop();
  mocks?.close();
});

test("a cookie kept after logging out is refused", async () => {
  const alice = await login(chrome, server, "alice");
  const kept = await alice.context.cookies();
  await alice.page.getByRole("button", { name: "Log out" }).click();
  await alice.page.waitForURL("**/ui/login");
  await alice.context.close();
  // Another browser, given the old cookie.
  const thief = await chrome.newContext();
  await thief.addCookies(kept);
  const page = await thief.newPage();
  await page.goto(`${server.url}/ui`);
  await page.waitForURL("**/ui/login?next=/ui");
  await thief.close();
});

test("an operator ends every session of a subject from the inbox; the subject's open page goes to the login form", async () => {
  const alice = await login(chrome, server, "alice");
  const ops = await login(chrome, server, "ops");
  await ops.page.getByLabel("End every session of").selectOption("alice");
  await ops.page.getByRole("button", { name: "End sessions" }).click();
  await ops.page.getByRole("heading", { name: "Sessions ended" }).waitFor();
  assert.match(await ops.page.locator("main").innerText(), /Every session of alice issued until now is ended/);
  // Alice's inbox, open all along: its live stream ends, the page reloads.
  await eventually(async () => alice.page.url().includes("/ui/login"), "alice's page to ask for a login", 30000);
  await ops.page.goto(`${server.url}/ui`);
  assert.equal(new URL(ops.page.url()).pathname, "/ui", "the operator's own session goes on");
  assert.deepEqual(alice.page.errors, []);
  await alice.context.close();
  await ops.context.close();
});

test("a session with too many live pages says so; closing one and reloading brings live updates back", async () => {
  const first = await login(chrome, server, "bob");
  const second = await first.context.newPage();
  await second.goto(`${server.url}/ui`);
  await eventually(
    async () => /too many live pages open/.test(await second.locator("#live-status").innerText()),
    "the second page to say it has no live updates",
  );
  assert.equal(new URL(second.url()).pathname, "/ui", "no reload loop");
  await first.page.close();
  // The slot is free once the server sees the first page's stream gone:
  // reload until a run started after the reload shows up by itself.
  for (let n = 1; ; n++) {
    await second.reload();
    const { run } = await startRun(server, "bob", `Refund A-80${n}.`);
    const outcome = await eventually(async () => {
      if ((await second.locator(`#run-${run.id}`).count()) === 1) return "live";
      if (/too many live pages/.test(await second.locator("#live-status").innerText())) return "refused";
      return null;
    }, "the second page's live stream to answer or be refused");
    if (outcome === "live") break;
    assert.ok(n < 20, "the closed page's slot was never freed");
  }
  await first.context.close();
});
