// Using the pages as people do: with the keyboard alone, on a phone, and
// leaving them open while others decide (live updates, no reloading).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { TOKENS, api, browser, eventually, login, startMocks, startRun, startServer } from "./harness.mjs";

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

// What has the focus: its tag, text or label, and whether its outline shows.
const focused = (page) =>
  page.evaluate(() => {
    const e = document.activeElement;
    const style = getComputedStyle(e);
    const box = e.getBoundingClientRect();
    return {
      tag: e.tagName.toLowerCase(),
      text: (e.innerText || e.value || "").trim(),
      label: e.labels?.[0]?.innerText.trim() ?? null,
      name: e.getAttribute("name"),
      invalid: e.getAttribute("aria-invalid"),
      outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
      onScreen: box.right > 0 && box.bottom > 0 && box.left < innerWidth,
    };
  });

// Presses Tab until `want(focus)` holds (at most `max` times).
async function tabTo(page, want, what, max = 30) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const f = await focused(page);
    if (want(f)) return f;
  }
  throw new Error(`Tab never reached ${what}`);
}

test("the keyboard alone: skip link, the inbox's Decide link, an invalid edit focused with its message, fixed and sent", async () => {
  const { page, context } = await login(chrome, server, "alice");
  const { thread, run } = await startRun(server, "alice", "Refund A-10001.");
  await page.locator(`#run-${run.id}`).waitFor({ timeout: 10000 });

  // The first Tab shows the skip link; Enter moves past the navigation.
  await page.keyboard.press("Tab");
  let f = await focused(page);
  assert.equal(f.text, "Skip to content");
  assert.ok(f.onScreen && f.outline, "the skip link shows when focused");
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement.id), "main");

  // Tab to this run's Decide link; its focus is visible; Enter opens it.
  f = await tabTo(page, (x) => x.tag === "a" && x.text.startsWith("Decide"), "the Decide link");
  assert.ok(f.outline, "focus is visible");
  await page.keyboard.press("Enter");
  await page.waitForURL(`**/ui/runs/${run.id}`);

  // Tab into the decision, arrow to Edit, Tab into the fields.
  f = await tabTo(page, (x) => x.name === "call.0.decision", "the decision");
  assert.match(f.label, /^Approve/);
  await page.keyboard.press("ArrowDown");
  f = await focused(page);
  assert.match(f.label, /^Edit/);
  f = await tabTo(page, (x) => x.label === "amount" || x.label?.startsWith("amount"), "the amount field");
  await page.keyboard.press("Control+A");
  await page.keyboard.type("900");
  // Enter sends the form; it is refused and the focus lands on the field
  // with the engine's message tied to it.
  await page.keyboard.press("Enter");
  await eventually(async () => (await focused(page)).invalid === "true", "the focus on the invalid field");
  f = await focused(page);
  assert.match(f.label, /^amount/);
  const described = await page.evaluate(() =>
    document.activeElement.getAttribute("aria-describedby").split(" ").map((id) => document.getElementById(id)?.innerText ?? "").join(" "));
  assert.match(described, /amount: must be at most 500, got 900/);
  assert.equal((await runStatus(run.id)).status, "requires_approval");

  await page.keyboard.press("Control+A");
  await page.keyboard.type("90");
  await eventually(async () => (await focused(page)).invalid === null, "the message to go");
  f = await tabTo(page, (x) => x.tag === "button" && x.text === "Send decisions", "Send decisions");
  assert.ok(f.outline);
  await page.keyboard.press("Enter");
  await page.waitForURL(`**/ui/threads/${thread}*`);
  await eventually(async () => (await runStatus(run.id)).status === "completed", "completion");
  assert.equal(mocks.state.refunds.filter((r) => r.order_id === "A-10001").at(-1).amount, 90);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("left open, the inbox drops a run decided elsewhere and the thread shows it go on, without reloading", async () => {
  const inbox = await login(chrome, server, "alice");
  const a = await startRun(server, "alice", "Refund A-10101.");
  const b = await startRun(server, "alice", "Refund A-10102.");
  await inbox.page.locator(`#run-${a.run.id}`).waitFor({ timeout: 10000 });
  await inbox.page.locator(`#run-${b.run.id}`).waitFor({ timeout: 10000 });
  const waiting = Number(await inbox.page.locator("#inbox [data-count]").getAttribute("data-count"));
  assert.ok(waiting >= 2);
  const threadPage = await inbox.context.newPage();
  await threadPage.goto(`${server.url}/ui/threads/${b.thread}`);
  assert.equal(await threadPage.locator(`#run-${b.run.id}`).getAttribute("data-status"), "requires_approval");
  let loads = 0;
  inbox.page.on("load", () => loads++);
  threadPage.on("load", () => loads++);

  // Decided through the API (another reviewer, another server).
  const p = (await runStatus(b.run.id)).pending[0];
  const decided = await api(server, TOKENS.alice, "POST", `/v1/runs/${b.run.id}/decisions`, {
    decisions: [{ tool_call_id: p.tool_call_id, digest: p.digest, decision: "approved" }],
  });
  assert.equal(decided.status, 200, decided.text);

  await inbox.page.locator(`#run-${b.run.id}`).waitFor({ state: "detached", timeout: 10000 });
  assert.equal(await inbox.page.locator(`#run-${a.run.id}`).count(), 1, "the other run stays");
  assert.equal(await inbox.page.title(), `(${waiting - 1}) Inbox · Parlance`);
  await eventually(async () => (await threadPage.locator(`#run-${b.run.id}`).getAttribute("data-status")) === "completed", "the thread to show the run completed");
  assert.match(await threadPage.locator("#thread").innerText(), /decision: approved/);
  assert.equal(loads, 0, "no page was reloaded");
  await inbox.context.close();
});

test("on a phone: the inbox, a decision and a thread fit the screen, with a long unbroken argument; controls are big enough to tap", async () => {
  const { thread, run } = await startRun(server, "alice", "Refund A-10201 with a long note.");
  const { page, context } = await login(chrome, server, "alice", { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.locator(`#run-${run.id}`).waitFor({ timeout: 10000 });
  assert.ok((await overflow()) <= 0, `the inbox is ${await overflow()}px wider than the screen`);
  await page.locator(`#run-${run.id}`).getByText("Raw JSON").click();
  assert.ok((await overflow()) <= 0, "with the raw JSON open too");

  await page.goto(`${server.url}/ui/runs/${run.id}`);
  await page.getByLabel("Edit — run it with other arguments").check();
  assert.ok((await overflow()) <= 0, `the decision page is ${await overflow()}px wider than the screen`);
  // Tap targets: the decisions' labels and the send button, 24 px at least
  // (WCAG 2.2); text fields at 16 px, so that phones do not zoom in.
  for (const el of [page.getByLabel("Approve — run it as the model asked"), page.getByRole("button", { name: "Send decisions" })]) {
    const box = await (await el.evaluateHandle((e) => e.labels?.[0] ?? e)).asElement().boundingBox();
    assert.ok(box.height >= 24 && box.width >= 24, JSON.stringify(box));
  }
  const fontSize = await page.getByLabel("amount").evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
  assert.ok(fontSize >= 16, `text fields at ${fontSize}px`);
  await page.getByRole("button", { name: "Send decisions" }).tap();
  await page.waitForURL(`**/ui/threads/${thread}*`);
  await eventually(async () => (await page.locator(`#run-${run.id}`).getAttribute("data-status")) === "completed", "completion");
  assert.ok((await overflow()) <= 0, `the thread is ${await overflow()}px wider than the screen`);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a thread as people read it: thinking folded, a timed-out call with its status, usage per run", async () => {
  const { thread, run } = await startRun(server, "alice", "Check A-1 please.", "thinker");
  assert.equal(run.status, "completed", JSON.stringify(run.error));
  const { page, context } = await login(chrome, server, "alice");
  await page.goto(`${server.url}/ui/threads/${thread}`);
  const section = page.locator(`#run-${run.id}`);
  // Thinking: folded, one click (or Enter) away.
  const thinking = section.locator("details.thinking");
  assert.equal(await thinking.count(), 1);
  assert.equal(await thinking.getAttribute("open"), null, "folded");
  const thought = thinking.getByText("The customer wants order A-1 checked");
  assert.equal(await thought.isVisible(), false);
  await thinking.locator("summary").focus();
  await page.keyboard.press("Enter");
  assert.equal(await thought.isVisible(), true);
  // The call, its arguments, its status.
  const result = section.locator('.tool-call .tool-result[data-status="timeout"]');
  assert.equal(await result.count(), 1);
  assert.match(await result.innerText(), /Result\s+timeout/);
  assert.match(await section.locator(".tool-call").innerText(), /slow_lookup[\s\S]*id\s+A-1/);
  // Usage summed over the run's two model calls.
  assert.match(await section.locator(".run-head").innerText(), /160 in, 40 out tokens/);
  assert.match(await section.innerText(), /The lookup said: /);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("two servers sharing one store: a page on one marks a call decided through the other, live", async () => {
  const other = await startServer(mocks, { store: server.store });
  try {
    const { page, context } = await login(chrome, server, "alice");
    const { run } = await startRun(other, "alice", "Do two refunds: A-10301 and A-10302.");
    // Started on the other server, listed here.
    await page.locator(`#run-${run.id}`).waitFor({ timeout: 10000 });
    await page.goto(`${server.url}/ui/runs/${run.id}`);
    const cards = page.locator("section.call");
    assert.equal(await cards.count(), 2);
    const first = run.pending[0];
    const decided = await api(other, TOKENS.alice, "POST", `/v1/runs/${run.id}/decisions`, {
      decisions: [{ tool_call_id: first.tool_call_id, digest: first.digest, decision: "rejected", reason: "by the other server" }],
    });
    assert.equal(decided.status, 200, decided.text);
    await cards.nth(0).getByText("Decided elsewhere meanwhile: rejected").waitFor({ timeout: 10000 });
    await cards.nth(1).getByLabel("Approve — run it as the model asked").check();
    await page.getByRole("button", { name: "Send decisions" }).click();
    await page.waitForURL("**/ui/threads/**");
    await eventually(async () => (await runStatus(run.id)).status === "completed", "completion");
    assert.equal(mocks.state.refunds.filter((r) => r.order_id === "A-10301").length, 0);
    assert.equal(mocks.state.refunds.filter((r) => r.order_id === "A-10302").length, 1);
    assert.deepEqual(page.errors, []);
    await context.close();
  } finally {
    await other.stop();
  }
});
