// Who sees what, and hostile input: tenants, artifacts, escaping, the
// session cookie, CSRF; a failed run retried from its thread; a phone.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { TOKENS, XSS, api, browser, docs, eventually, login, startMocks, startRun, startServer } from "./harness.mjs";

let mocks, server, chrome;
before(async () => {
  mocks = await startMocks();
  server = await startServer(mocks);
  chrome = await browser();
});
after(async () => {
  await chrome?.close();
  await server?.stop();
  mocks?.close();
});

test("a non-operator sees neither another tenant's runs nor artifacts; an operator sees both", async () => {
  // Alice: one run waiting, and a thread whose tool failed (its details
  // are an artifact, for operators).
  const { thread: aliceThread, run } = await startRun(server, "alice", "Refund A-4001.");
  mocks.state.lookupFailures = 1;
  const failed = await startRun(server, "alice", "Please look up A-4002.", "careful");
  assert.equal(failed.run.status, "completed");
  const ops = await api(server, TOKENS.ops, "GET", `/v1/threads/${failed.thread}`);
  assert.equal(ops.json.artifacts.length, 1, ops.text);

  const bob = await login(chrome, server, "bob");
  assert.match(await bob.page.locator("#inbox").innerText(), /Nothing is waiting/);
  assert.equal(await bob.page.locator(`#run-${run.id}`).count(), 0);
  for (const path of [`/ui/runs/${run.id}`, `/ui/threads/${aliceThread}`, `/ui/threads/${failed.thread}`]) {
    const resp = await bob.page.goto(`${server.url}${path}`);
    assert.equal(resp.status(), 404, path);
    assert.match(await bob.page.locator("main").innerText(), /was not found/);
  }
  await bob.page.goto(`${server.url}/ui/threads`);
  assert.doesNotMatch(await bob.page.locator("main").innerText(), new RegExp(aliceThread));
  // Deciding another tenant's run is refused like a missing one.
  const csrf = await bob.page.goto(`${server.url}/ui`).then(() => bob.page.locator('input[name="csrf"]').first().inputValue());
  const post = await bob.page.request.post(`${server.url}/ui/runs/${run.id}/decide`, {
    form: { csrf, "call.0.id": "x", "call.0.decision": "approve" },
    headers: { origin: server.url },
  });
  assert.equal(post.status(), 404);
  assert.equal((await api(server, TOKENS.alice, "GET", `/v1/runs/${run.id}`)).json.status, "requires_approval");
  await bob.context.close();

  // Alice reads her thread, without the artifact.
  const alice = await login(chrome, server, "alice");
  await alice.page.goto(`${server.url}/ui/threads/${failed.thread}`);
  const mine = await alice.page.locator("#thread").innerText();
  assert.match(mine, /tool_failed|tool failed/);
  assert.doesNotMatch(mine, /Artifact/);
  assert.equal(await alice.page.locator("details.artifact").count(), 0);
  await alice.context.close();

  // The operator sees every tenant's waiting runs, and the artifact.
  const op = await login(chrome, server, "ops");
  await op.page.locator(`#run-${run.id}`).waitFor();
  assert.match(await op.page.locator(`#run-${run.id}`).innerText(), /owner alice/);
  await op.page.goto(`${server.url}/ui/threads/${failed.thread}`);
  await op.page.getByText("Artifact (operators only)").click();
  assert.match(await op.page.locator("details.artifact pre").innerText(), /503/);
  await op.context.close();
});

test("tool arguments and model text are shown as text, never run", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { thread, run } = await startRun(server, "alice", `Refund A-5001 (xss test) ${XSS}`);
  await page.locator(`#run-${run.id}`).waitFor({ timeout: 10000 });
  assert.match(await page.locator(`#run-${run.id}`).innerText(), /<img src=x onerror=/);
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  assert.match(await page.locator("main").innerText(), /<script>window.__xss='script'<\/script>/);
  await page.getByLabel("Edit — run it with other arguments").check();
  assert.equal(await page.getByLabel("note").inputValue(), XSS);
  await page.getByLabel("amount").fill("10");
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.waitForURL(`**/ui/threads/${thread}*`);
  await eventually(async () => (await page.locator(`#run-${run.id}`).getAttribute("data-status")) === "completed", "completion");
  const t = await page.locator("#thread").innerText();
  assert.ok(t.includes(`Refunding now. ${XSS}`), t);
  assert.equal(await page.locator("#thread img").count(), 0);
  assert.equal(await page.locator("#thread script").count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a failed run has a retry button; retried, it completes", async () => {
  mocks.state.lookupFailures = 1;
  const { thread, run } = await startRun(server, "alice", "Please look up A-6001.");
  assert.equal(run.status, "failed");
  assert.equal(run.error.code, "tool_failed");
  const { page, context } = await login(chrome, server, "alice");
  await page.goto(`${server.url}/ui/threads/${thread}`);
  const section = page.locator(`#run-${run.id}`);
  assert.match(await section.innerText(), /tool_failed/);
  await page.getByRole("button", { name: "Retry this run" }).click();
  await page.waitForURL(`**/ui/threads/${thread}*`);
  await eventually(async () => {
    const runs = (await api(server, TOKENS.alice, "GET", `/v1/threads/${thread}`)).json.runs;
    return runs.length === 2 && runs[1].status === "completed";
  }, "the retry to complete");
  await eventually(async () => /"status":"shipped"/.test(await page.locator("#thread").innerText()), "the page to show it");
  assert.equal(await page.getByRole("button", { name: "Retry this run" }).count(), 0);
  await context.close();
});

test("the session cookie is out of scripts' reach; forms need their CSRF token and our origin; a wrong token is named", async () => {
  const context = await chrome.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/ui/threads`);
  await page.waitForURL("**/ui/login?next=/ui/threads");
  await page.getByLabel("API token").fill("not-a-token");
  await page.getByRole("button", { name: "Log in" }).click();
  assert.match(await page.locator("#token-error").innerText(), /token: unknown token/);
  await page.getByLabel("API token").fill(TOKENS.alice);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL("**/ui/threads");
  const [cookie] = await context.cookies();
  assert.equal(cookie.name, "parlance_ui");
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, "Strict");
  assert.ok(!cookie.value.includes(TOKENS.alice));
  assert.equal(await page.evaluate(() => document.cookie), "");

  const { run } = await startRun(server, "alice", "Refund A-7001.");
  const path = `/ui/runs/${run.id}/decide`;
  const noToken = await page.request.post(`${server.url}${path}`, { form: { "call.0.decision": "approve" }, headers: { origin: server.url } });
  assert.equal(noToken.status(), 403);
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  const csrf = await page.locator('input[name="csrf"]').first().inputValue();
  const crossSite = await page.request.post(`${server.url}${path}`, {
    form: { csrf, "call.0.decision": "approve" },
    headers: { origin: "http://evil.example" },
  });
  assert.equal(crossSite.status(), 403);
  assert.equal((await api(server, TOKENS.alice, "GET", `/v1/runs/${run.id}`)).json.status, "requires_approval");
  // Logged out, the page asks to log in again.
  await page.getByRole("button", { name: "Log out" }).click();
  await page.waitForURL("**/ui/login");
  await page.goto(`${server.url}/ui`);
  await page.waitForURL("**/ui/login?next=/ui");
  await context.close();
});

test("readable on a phone", async () => {
  const { run } = await startRun(server, "alice", "Refund A-8001.");
  const { page, context } = await login(chrome, server, "alice", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  await page.getByLabel("Edit — run it with other arguments").check();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await page.screenshot({ path: join(docs, "ui-phone.png"), fullPage: false });
  await context.close();
});
