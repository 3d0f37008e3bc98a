// The approval inbox, driven in headless Chromium: runs appear live, the
// four decisions, several calls at once, a call decided elsewhere.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { TOKENS, api, browser, docs, eventually, login, startMocks, startRun, startServer } from "./harness.mjs";

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

const runStatus = async (id) => (await api(server, TOKENS.alice, "GET", `/v1/runs/${id}`)).json;

test("a paused run appears without reloading; an invalid edit shows the engine's message; fixed and approved, the run completes", async () => {
  const { page, context } = await login(chrome, server, "alice");
  await page.getByRole("heading", { name: "Inbox" }).waitFor();
  assert.match(await page.locator("#inbox").innerText(), /Nothing is waiting/);

  const { thread, run } = await startRun(server, "alice", "Please refund order A-1001, it arrived broken.");
  assert.equal(run.status, "requires_approval");
  // No reload: the live list brings it.
  const card = page.locator(`#run-${run.id}`);
  await card.waitFor({ timeout: 10000 });
  const cardText = await card.innerText();
  assert.match(cardText, /refund/);
  assert.match(cardText, /Refund an order to the customer's card\./);
  assert.match(cardText, /amount\s+300/);
  assert.match(cardText, /Agent support/);
  assert.equal(await page.title(), "(1) Inbox · Parlance");
  // Raw JSON on demand.
  await card.getByText("Raw JSON").click();
  assert.match(await card.locator("details.raw pre").innerText(), /"amount": 300/);
  await page.screenshot({ path: join(docs, "ui-inbox.png"), fullPage: true });

  await card.getByRole("link", { name: "Decide" }).click();
  await page.waitForURL(`**/ui/runs/${run.id}`);
  await page.getByLabel("Edit — run it with other arguments").check();
  const amount = page.getByLabel("amount");
  await amount.fill("9000");
  // Checked as typed, with the engine's own words at the field.
  const amountError = page.locator('p.error[data-ptr="/amount"]');
  await eventually(async () => (await amountError.innerText()).includes("amount: must be at most 500, got 9000"), "the engine's message");
  assert.equal(await amount.getAttribute("aria-invalid"), "true");
  // Sending is refused while it is invalid: nothing reaches the server.
  await page.getByRole("button", { name: "Send decisions" }).click();
  await eventually(async () => (await amountError.innerText()).includes("must be at most 500"), "the message after sending");
  assert.equal((await runStatus(run.id)).status, "requires_approval");
  await page.screenshot({ path: join(docs, "ui-decide.png"), fullPage: true });

  await amount.fill("250");
  await eventually(async () => (await amountError.innerText()) === "", "the message to go");
  assert.equal(await amount.getAttribute("aria-invalid"), null);
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.waitForURL(`**/ui/threads/${thread}*`);
  // The thread follows the run live to its end.
  const runSection = page.locator(`#run-${run.id}`);
  await eventually(async () => (await runSection.getAttribute("data-status")) === "completed", "the run to complete");
  const threadText = await page.locator("#thread").innerText();
  assert.match(threadText, /decision: edited/);
  assert.match(threadText, /Done\. The tools said: .*"refunded":250/);
  assert.match(threadText, /240 in, 60 out/);
  assert.deepEqual(mocks.state.refunds.at(-1), { order_id: "A-1001", amount: 250, note: "customer asked twice" });
  assert.equal((await runStatus(run.id)).status, "completed");
  await page.locator("details.thinking, details.raw").first().waitFor();
  await page.screenshot({ path: join(docs, "ui-thread.png"), fullPage: true });
  // Gone from the inbox.
  await page.goto(`${server.url}/ui`);
  assert.match(await page.locator("#inbox").innerText(), /Nothing is waiting/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("reject with a reason, chosen with the keyboard alone", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { thread, run } = await startRun(server, "alice", "Refund A-1002 please.");
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  // Tab to the decision radios, arrows to "Reject", type the reason, Enter.
  await page.getByLabel("Approve — run it as the model asked").focus();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.getByLabel("Reject — do not run it; the model reads your reason").isChecked(), true);
  await page.keyboard.press("Tab");
  await page.keyboard.type("Over the limit without a manager.");
  assert.equal(await page.getByLabel("Reason (the model reads it)").inputValue(), "Over the limit without a manager.");
  await page.getByRole("button", { name: "Send decisions" }).focus();
  await page.keyboard.press("Enter");
  await page.waitForURL(`**/ui/threads/${thread}*`);
  await eventually(async () => (await page.locator(`#run-${run.id}`).getAttribute("data-status")) === "completed", "completion");
  const t = await page.locator("#thread").innerText();
  assert.match(t, /rejected/);
  assert.match(t, /The reviewer rejected this call: Over the limit without a manager\./);
  assert.ok(!mocks.state.refunds.some((r) => r.order_id === "A-1002"), "a rejected call does not run");
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("answer in place of the tool", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { run } = await startRun(server, "alice", "Refund A-1003.");
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  await page.getByLabel("Answer — do not run it; your answer is its result").check();
  // An empty answer is refused at its field.
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.locator('p.error[data-ptr="#answer"]').getByText("Write the answer").waitFor();
  await page.getByLabel("Answer (the model reads it as the tool's result)").fill("Refunded by hand at the till.");
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.waitForURL("**/ui/threads/**");
  await eventually(async () => (await page.locator(`#run-${run.id}`).getAttribute("data-status")) === "completed", "completion");
  const t = await page.locator("#thread").innerText();
  assert.match(t, /decision: answered/);
  assert.match(t, /Done\. The tools said: Refunded by hand at the till\./);
  assert.ok(!mocks.state.refunds.some((r) => r.order_id === "A-1003"));
  await context.close();
});

test("several calls of one turn are decided together", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { run } = await startRun(server, "alice", "Do two refunds: A-2001 and A-2002.");
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  const cards = page.locator("section.call");
  assert.equal(await cards.count(), 2);
  // Nothing chosen for the second: refused, named at that call.
  await cards.nth(0).getByLabel("Approve — run it as the model asked").check();
  await page.getByRole("button", { name: "Send decisions" }).click();
  await cards.nth(1).getByText("Choose a decision").waitFor();
  assert.equal((await runStatus(run.id)).status, "requires_approval");
  await cards.nth(1).getByLabel("Reject — do not run it; the model reads your reason").check();
  await cards.nth(1).getByLabel("Reason (the model reads it)").fill("Duplicate.");
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.waitForURL("**/ui/threads/**");
  await eventually(async () => (await runStatus(run.id)).status === "completed", "completion");
  const done = await runStatus(run.id);
  const results = done.messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result").map((b) => b.tool_result);
  assert.deepEqual(results.map((r) => [r.approval.decision, r.status ?? "ok"]), [["approved", "ok"], ["rejected", "rejected"]]);
  assert.ok(mocks.state.refunds.some((r) => r.order_id === "A-2001"));
  assert.ok(!mocks.state.refunds.some((r) => r.order_id === "A-2002"));
  await context.close();
});

test("a call decided elsewhere meanwhile shows as such, and is not decided twice", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { run } = await startRun(server, "alice", "Do two refunds: A-3001 and A-3002.");
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  const cards = page.locator("section.call");
  await cards.nth(0).getByLabel("Approve — run it as the model asked").check();
  await cards.nth(1).getByLabel("Approve — run it as the model asked").check();
  // Meanwhile the first call is decided through the API (another reviewer).
  const pending = (await runStatus(run.id)).pending;
  const first = pending[0];
  const decided = await api(server, TOKENS.alice, "POST", `/v1/runs/${run.id}/decisions`, {
    decisions: [{ tool_call_id: first.tool_call_id, digest: first.digest, decision: "rejected", reason: "by the API" }],
  });
  assert.equal(decided.status, 200, decided.text);
  assert.equal(decided.json.status, "requires_approval");
  // The page says so without reloading, and the call can no longer be decided here.
  await cards.nth(0).getByText("Decided elsewhere meanwhile: rejected").waitFor({ timeout: 10000 });
  assert.equal(await cards.nth(0).getByLabel("Approve — run it as the model asked").isDisabled(), true);
  // The other call is still decided here, once.
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.waitForURL("**/ui/threads/**");
  await eventually(async () => (await runStatus(run.id)).status === "completed", "completion");
  const results = (await runStatus(run.id)).messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
  assert.deepEqual(results.map((b) => b.tool_result.approval.decision), ["rejected", "approved"]);
  assert.equal(mocks.state.refunds.filter((r) => r.order_id === "A-3001").length, 0);
  assert.equal(mocks.state.refunds.filter((r) => r.order_id === "A-3002").length, 1);

  // A stale form sent after the run was decided elsewhere: nothing sent twice.
  const { run: other } = await startRun(server, "alice", "Refund A-3003.");
  await page.goto(`${server.url}/ui/runs/${other.id}`);
  await page.getByLabel("Approve — run it as the model asked").check();
  const p = (await runStatus(other.id)).pending[0];
  await api(server, TOKENS.alice, "POST", `/v1/runs/${other.id}/decisions`, {
    decisions: [{ tool_call_id: p.tool_call_id, digest: p.digest, decision: "approved" }],
  });
  // Sent by a page that has not heard yet (its script is bypassed).
  await page.evaluate(() => HTMLFormElement.prototype.submit.call(document.getElementById("decide")));
  await page.waitForLoadState();
  await page.getByText("Nothing was sent").or(page.getByText("not waiting for decisions")).first().waitFor();
  assert.equal(mocks.state.refunds.filter((r) => r.order_id === "A-3003").length, 1);
  await context.close();
});

test("the edit form has a field for each kind the schema names (a choice, true/false, a nested object, an array), and the tool gets typed values", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { thread, run } = await startRun(server, "alice", "Please ship order A-1.");
  assert.equal(run.status, "requires_approval", JSON.stringify(run));
  await page.goto(`${server.url}/ui/runs/${run.id}`);
  await page.getByLabel("Edit — run it with other arguments").check();
  await page.getByLabel("carrier").selectOption({ label: "ups" });
  await page.getByLabel("express").selectOption({ label: "true" });
  const zip = page.getByLabel("zip");
  assert.equal(await zip.inputValue(), "69001");
  await zip.fill("6900");
  const zipError = page.locator('p.error[data-ptr="/address/zip"]');
  await eventually(async () => /address\.zip: /.test(await zipError.innerText()), "the engine's message at address.zip");
  assert.equal(await zip.getAttribute("aria-invalid"), "true");
  await page.getByRole("button", { name: "Send decisions" }).click();
  await eventually(async () => /address\.zip: /.test(await zipError.innerText()), "the message after sending");
  assert.equal((await runStatus(run.id)).status, "requires_approval");
  await zip.fill("75001");
  await page.getByLabel("parcels").fill("[1, 3]");
  await eventually(async () => (await zipError.innerText()) === "", "the message to go");
  await page.getByRole("button", { name: "Send decisions" }).click();
  await page.waitForURL(`**/ui/threads/${thread}*`);
  await eventually(async () => (await runStatus(run.id)).status === "completed", "completion");
  assert.deepEqual(mocks.state.shipments.at(-1), {
    order_id: "A-1", carrier: "ups", express: true, address: { city: "Lyon", zip: "75001" }, parcels: [1, 3],
  });
  assert.deepEqual(page.errors, []);
  await context.close();
});
