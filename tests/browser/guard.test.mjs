// The server against pages of other sites, in headless Chromium: a page
// of another origin posting to a server without tokens (a script-less
// form, a no-cors fetch, a JSON fetch), a name re-pointed at 127.0.0.1
// (DNS rebinding), and live validation of fields whose schema keys no
// CSS selector holds unescaped.

import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import { after, before, test } from "node:test";
import { browser, eventually, login, startMocks, startRun, startServer } from "./harness.mjs";

let mocks, open, allowing, evil, chrome;
// The other site: one page, whatever it is asked for (`page` is set per test).
let page = "";
before(async () => {
  mocks = await startMocks();
  evil = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(page);
  });
  evil.listen(0, "127.0.0.1");
  await once(evil, "listening");
  evil.url = `http://127.0.0.1:${evil.address().port}`;
  open = await startServer(mocks, { anonymous: true });
  // The same site, allowed by configuration.
  allowing = await startServer(mocks, { anonymous: true, top: `allowed_origins = ["${evil.url}"]` });
  chrome = await browser(["--host-resolver-rules=MAP rebind.test 127.0.0.1"]);
});
after(async () => {
  await chrome?.close();
  await open?.stop();
  await allowing?.stop();
  evil?.close();
  mocks?.close();
});

// Anonymous API calls (a server without tokens), as its own client makes them.
const anon = async (server, method, path, body) => {
  const resp = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: resp.status, json: await resp.json() };
};

test("a page of another origin cannot start runs or plant threads on a server without tokens", async () => {
  const thread = (await anon(open, "POST", "/v1/threads", {})).json.id;
  const before = (await anon(open, "GET", "/v1/threads")).json.items.length;
  const run = JSON.stringify({ agent: "support", input: "Refund A-1.", thread_id: thread });
  // A script-less form: text/plain carries a JSON body (name + "=" + value).
  page = `<!doctype html><title>evil</title>
    <form id="f" method="post" action="${open.url}/v1/threads" enctype="text/plain">
      <input type="hidden" name='{"metadata": {"planted": "' value='"}}'>
      <button>Win a prize</button>
    </form>
    <script>
      window.tries = Promise.all([
        fetch(${JSON.stringify(`${open.url}/v1/runs`)}, { method: "POST", mode: "no-cors", body: ${JSON.stringify(run)} }).then(() => "sent", (e) => "error: " + e),
        fetch(${JSON.stringify(`${open.url}/v1/runs`)}, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(run)} }).then(() => "read", (e) => "blocked"),
      ]);
    </script>`;
  const context = await chrome.newContext();
  const tab = await context.newPage();
  await tab.goto(`${evil.url}/`);
  const [noCors, json] = await tab.evaluate(() => window.tries);
  assert.equal(noCors, "sent", "the browser sends a no-cors post");
  assert.equal(json, "blocked", "a JSON post needs a preflight, which is not granted");
  const [resp] = await Promise.all([tab.waitForNavigation(), tab.getByRole("button", { name: "Win a prize" }).click()]);
  assert.equal(resp.status(), 403);
  const refusal = JSON.parse(await tab.locator("body").innerText());
  assert.equal(refusal.error.code, "cross_site");
  assert.match(refusal.error.message, /another site's page/);
  assert.match(refusal.error.message, /allowed_origins/);
  await context.close();

  assert.equal((await anon(open, "GET", "/v1/threads")).json.items.length, before, "no thread planted");
  const t = (await anon(open, "GET", `/v1/threads/${thread}`)).json;
  assert.deepEqual(t.runs, [], "no run started");
  assert.deepEqual(t.messages, []);
});

test("an allowed origin gets past the origin check, and JSON endpoints still take application/json only", async () => {
  const before = (await anon(allowing, "GET", "/v1/threads")).json.items.length;
  page = `<!doctype html><title>app</title>
    <form method="post" action="${allowing.url}/v1/threads" enctype="text/plain">
      <input type="hidden" name='{"metadata": {"planted": "' value='"}}'>
      <button>Send</button>
    </form>`;
  const context = await chrome.newContext();
  const tab = await context.newPage();
  await tab.goto(`${evil.url}/`);
  const [resp] = await Promise.all([tab.waitForNavigation(), tab.getByRole("button", { name: "Send" }).click()]);
  assert.equal(resp.status(), 415);
  const refusal = JSON.parse(await tab.locator("body").innerText());
  assert.equal(refusal.error.code, "unsupported_media_type");
  assert.match(refusal.error.message, /expected Content-Type: application\/json, got "text\/plain"/);
  await context.close();
  assert.equal((await anon(allowing, "GET", "/v1/threads")).json.items.length, before);
});

test("a name re-pointed at 127.0.0.1 (DNS rebinding) gets nothing; localhost and the address do", async () => {
  const port = new URL(open.url).port;
  const context = await chrome.newContext();
  const tab = await context.newPage();
  for (const path of ["/v1/threads", "/ui", "/healthz"]) {
    const resp = await tab.goto(`http://rebind.test:${port}${path}`);
    assert.equal(resp.status(), 421, path);
    const body = JSON.parse(await tab.locator("body").innerText());
    assert.equal(body.error.code, "misdirected_host");
    assert.match(body.error.message, /Host "rebind\.test:\d+" is not a name this server answers to/);
  }
  for (const host of ["localhost", "127.0.0.1"]) {
    const resp = await tab.goto(`http://${host}:${port}/v1/threads`);
    assert.equal(resp.status(), 200, host);
  }
  // The inbox itself, through its own name: a session, and the page.
  const resp = await tab.goto(`http://localhost:${port}/ui`);
  assert.equal(resp.status(), 200);
  await tab.getByRole("heading", { name: "Inbox" }).waitFor();
  await context.close();
});

test("live validation finds fields whose schema keys hold \" and ]", async () => {
  const server = await startServer(mocks);
  try {
    const { page: tab, context } = await login(chrome, server, "alice");
    const { run } = await startRun(server, "alice", "Please tag it: order A-7.");
    assert.equal(run.status, "requires_approval");
    await tab.goto(`${server.url}/ui/runs/${run.id}`);
    await tab.getByLabel("Edit — run it with other arguments").check();
    const odd = tab.locator('textarea[name="call.0.f.s./q\\"]k"], input[name="call.0.f.s./q\\"]k"]');
    const zone = tab.locator('input[name="call.0.f.s./zone"]');
    await odd.fill("too long");
    await zone.fill("far too long");
    const oddError = tab.locator('p.error[data-ptr="/q\\"]k"]');
    const zoneError = tab.locator('p.error[data-ptr="/zone"]');
    await eventually(async () => (await oddError.innerText()).length > 0 && (await zoneError.innerText()).length > 0, "both messages while typing");
    assert.match(await oddError.innerText(), /at most 3/);
    assert.equal(await odd.getAttribute("aria-invalid"), "true");
    assert.equal(await zone.getAttribute("aria-invalid"), "true");
    await odd.fill("ok");
    await zone.fill("z");
    await eventually(async () => (await oddError.innerText()) === "" && (await zoneError.innerText()) === "", "the messages to go");
    assert.equal(await odd.getAttribute("aria-invalid"), null);
    assert.deepEqual(tab.errors, []);
    await context.close();
  } finally {
    await server.stop();
  }
});
