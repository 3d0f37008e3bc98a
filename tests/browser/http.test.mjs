// The inbox's HTTP edges, without a browser (plain fetch with a session
// cookie, as a script or a second reviewer would send): live streams
// refused for what the viewer may not see, two reviewers sending at once,
// retry refused or started once.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { TOKENS, api, eventually, startMocks, startRun, startServer } from "./harness.mjs";

let mocks, server;
before(async () => {
  mocks = await startMocks();
  server = await startServer(mocks);
});
after(async () => {
  await server?.stop();
  mocks?.close();
});

// A logged-in session of `who`: its cookie, and requests that carry it.
async function session(who) {
  const resp = await fetch(`${server.url}/ui/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ token: TOKENS[who], next: "/ui" }),
  });
  assert.equal(resp.status, 303);
  const cookie = resp.headers.get("set-cookie").split(";")[0];
  const get = (path, init = {}) => fetch(`${server.url}${path}`, { ...init, redirect: "manual", headers: { cookie, ...init.headers } });
  const post = (path, form) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form),
    });
  // The hidden fields of a page's form (the CSRF token, the calls' ids and digests).
  const fields = async (path) => {
    const html = await (await get(path)).text();
    return Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  };
  return { get, post, fields };
}

// The first `n` events of a live stream (or fewer, if it ends first), and
// whether it ended.
async function events(resp, n, ms = 10000) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timer = setTimeout(() => reader.cancel(), ms);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { events: text.split("\n\n").filter(Boolean), ended: true };
      text += decoder.decode(value);
      const got = text.split("\n\n").filter((e) => e.includes("data:"));
      if (got.length >= n) {
        await reader.cancel();
        return { events: got, ended: false };
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

test("live streams: another tenant's or a missing run or thread is 404, nothing without a session; a deleted thread's stream ends", async () => {
  const alice = await session("alice");
  const bob = await session("bob");
  const { thread, run } = await startRun(server, "alice", "Refund A-9001.");
  assert.equal(run.status, "requires_approval");

  for (const path of [`/ui/threads/${thread}/events`, `/ui/runs/${run.id}/events`, "/ui/threads/thr_missing/events", "/ui/runs/run_missing/events"]) {
    const resp = await bob.get(path);
    assert.equal(resp.status, 404, `bob: ${path}`);
    assert.match(await resp.text(), /was not found/, "like a missing one");
  }
  for (const path of ["/ui/events", `/ui/threads/${thread}/events`, `/ui/runs/${run.id}/events`]) {
    const resp = await fetch(`${server.url}${path}`, { redirect: "manual" });
    assert.equal(resp.status, 401, `no session: ${path}`);
  }
  // Alice's streams start with what the pages show.
  const own = await alice.get(`/ui/runs/${run.id}/events`);
  assert.equal(own.status, 200);
  assert.match(own.headers.get("content-type"), /text\/event-stream/);
  const [first] = (await events(own, 1)).events;
  assert.match(first, /^event: run\ndata: /);
  const data = JSON.parse(first.split("data: ")[1]);
  assert.deepEqual(data, { status: "requires_approval", thread, calls: [{ n: 0, id: data.calls[0].id, pending: true, how: "waiting" }] });
  const [aliceInbox] = (await events(await alice.get("/ui/events"), 1)).events;
  assert.ok(aliceInbox.includes(`run-${run.id}`));
  // Bob's inbox stream never carries Alice's run.
  const [bobInbox] = (await events(await bob.get("/ui/events"), 1)).events;
  assert.ok(!bobInbox.includes(run.id), bobInbox);
  assert.match(bobInbox, /Nothing is waiting/);

  // A thread deleted while its page is open: the stream ends.
  const empty = (await api(server, TOKENS.alice, "POST", "/v1/threads", {})).json.id;
  const stream = await alice.get(`/ui/threads/${empty}/events`);
  assert.equal(stream.status, 200);
  const reading = events(stream, 2);
  await new Promise((r) => setTimeout(r, 700));
  assert.equal((await api(server, TOKENS.alice, "DELETE", `/v1/threads/${empty}`)).status, 204);
  const read = await reading;
  assert.equal(read.ended, true, "the stream of a deleted thread ends");
  assert.equal(read.events.length, 1);
});

test("two reviewers send decisions for the same call at once: one is taken, the other is told; the tool runs once", async () => {
  const { run } = await startRun(server, "alice", "Refund A-9101.");
  const alice = await session("alice");
  const ops = await session("ops");
  const forms = await Promise.all([alice, ops].map((s) => s.fields(`/ui/runs/${run.id}`)));
  for (const f of forms) {
    assert.ok(f.csrf && f["call.0.id"] && f["call.0.digest"], JSON.stringify(f));
  }
  const [a, o] = await Promise.all([
    alice.post(`/ui/runs/${run.id}/decide`, { ...forms[0], "call.0.decision": "approve" }),
    ops.post(`/ui/runs/${run.id}/decide`, { ...forms[1], "call.0.decision": "reject", "call.0.reason": "no" }),
  ]);
  const statuses = [a.status, o.status].sort();
  assert.deepEqual(statuses, [303, 409], `alice ${a.status}, ops ${o.status}`);
  const loser = a.status === 409 ? a : o;
  assert.match(await loser.text(), /Nothing was sent|not waiting for decisions/);
  const done = await eventually(async () => {
    const r = (await api(server, TOKENS.alice, "GET", `/v1/runs/${run.id}`)).json;
    return r.status === "completed" && r;
  }, "the run to complete");
  const results = done.messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
  assert.equal(results.length, 1, "one decision, one result");
  const refunds = mocks.state.refunds.filter((r) => r.order_id === "A-9101").length;
  assert.equal(refunds, results[0].tool_result.approval.decision === "approved" ? 1 : 0);
});

test("retry: another tenant's thread is 404, a post without the form's token 403, two at once start one retry, a thread whose last run did not fail is told why", async () => {
  mocks.state.lookupFailures = 1;
  const { thread, run } = await startRun(server, "alice", "Please look up A-9201.");
  assert.equal(run.status, "failed");
  const alice = await session("alice");
  const bob = await session("bob");
  const bobForm = await bob.fields("/ui/threads");
  assert.equal((await bob.post(`/ui/threads/${thread}/retry`, { csrf: bobForm.csrf })).status, 404);
  assert.equal((await alice.post(`/ui/threads/${thread}/retry`, {})).status, 403);
  assert.equal((await alice.post(`/ui/threads/${thread}/retry`, { csrf: "0".repeat(64) })).status, 403);
  const runs = async () => (await api(server, TOKENS.alice, "GET", `/v1/threads/${thread}`)).json.runs;
  assert.equal((await runs()).length, 1, "nothing refused started a run");

  const { csrf } = await alice.fields(`/ui/threads/${thread}`);
  const both = await Promise.all([1, 2].map(() => alice.post(`/ui/threads/${thread}/retry`, { csrf })));
  assert.deepEqual(both.map((r) => r.status).sort(), [303, 409]);
  const refused = both.find((r) => r.status === 409);
  assert.match(await refused.text(), /Not retried: /);
  await eventually(async () => {
    const r = await runs();
    return r.length === 2 && r[1].status === "completed";
  }, "one retry, completed");
  const again = await alice.post(`/ui/threads/${thread}/retry`, { csrf });
  assert.equal(again.status, 409);
  assert.match(await again.text(), /Not retried: .*completed|Not retried: /);
  assert.equal((await runs()).length, 2);
});

test("with no token configured, the pages open as the API's anonymous caller; that session is worth nothing on a server with tokens", async () => {
  const open = await startServer(mocks, { anonymous: true });
  try {
    const call = async (method, path, body) => {
      const r = await fetch(`${open.url}${path}`, { method, headers: { "content-type": "application/json" }, body: body && JSON.stringify(body) });
      return r.json();
    };
    const thread = (await call("POST", "/v1/threads", {})).id;
    const run = await call("POST", "/v1/runs", { agent: "support", input: "Refund A-9301.", thread_id: thread });
    assert.equal(run.status, "requires_approval");

    // The login form is not needed: /ui gives an anonymous session.
    const first = await fetch(`${open.url}/ui`, { redirect: "manual" });
    assert.equal(first.status, 303);
    assert.equal(first.headers.get("location"), "/ui/session?next=/ui");
    assert.equal((await fetch(`${open.url}/ui/login`, { redirect: "manual" })).headers.get("location"), "/ui/session?next=/ui");
    const session = await fetch(`${open.url}/ui/session?next=/ui`, { redirect: "manual" });
    assert.equal(session.status, 303);
    const cookie = session.headers.get("set-cookie").split(";")[0];
    assert.match(cookie, /^parlance_ui=v2\.[0-9a-f]{32}\.\d+\.\d+\.anon\.[0-9a-f]{64}$/);
    const inbox = await fetch(`${open.url}/ui`, { headers: { cookie } });
    assert.equal(inbox.status, 200);
    const html = await inbox.text();
    assert.ok(html.includes(`run-${run.id}`), "the anonymous caller's run is in the inbox");
    assert.match(html, /anonymous/);
    assert.doesNotMatch(html, /Log out/, "nothing to log out of");

    // A forged anonymous cookie is not taken.
    const forged = cookie.replace(/[0-9a-f]{64}$/, "0".repeat(64));
    assert.equal((await fetch(`${open.url}/ui`, { headers: { cookie: forged }, redirect: "manual" })).status, 303);
    // The same secret, but tokens configured: an anonymous session is refused.
    const refused = await fetch(`${server.url}/ui`, { headers: { cookie }, redirect: "manual" });
    assert.equal(refused.status, 303);
    assert.equal(refused.headers.get("location"), "/ui/login?next=/ui");
    const events = await fetch(`${server.url}/ui/events`, { headers: { cookie } });
    assert.equal(events.status, 401);

    // A page left open does not hold the server's shutdown open: its
    // stream ends, and the server exits.
    const live = await fetch(`${open.url}/ui/events`, { headers: { cookie } });
    assert.equal(live.status, 200);
    const reader = live.body.getReader();
    await reader.read();
    const stopped = open.stop().then(() => "stopped");
    const late = new Promise((r) => setTimeout(() => r("still running after 10 s"), 10000));
    assert.equal(await Promise.race([stopped, late]), "stopped");
    for (;;) if ((await reader.read()).done) break;
  } finally {
    await open.stop();
  }
});

test("a run of an inline agent (given with the API request) is listed, but decided through the API: the page says so and sends nothing", async () => {
  const inline = { model: "mock:gpt-test", instructions: "You handle refunds.", tools: ["refund"] };
  const thread = (await api(server, TOKENS.alice, "POST", "/v1/threads", {})).json.id;
  const run = (await api(server, TOKENS.alice, "POST", "/v1/runs", { agent: inline, input: "Refund A-9401.", thread_id: thread })).json;
  assert.equal(run.status, "requires_approval", JSON.stringify(run));
  const alice = await session("alice");
  const inbox = await (await alice.get("/ui")).text();
  assert.ok(inbox.includes(`run-${run.id}`));
  assert.match(inbox, /Agent <strong>\(inline\)<\/strong>/);
  const form = await alice.fields(`/ui/runs/${run.id}`);
  const page = await (await alice.get(`/ui/runs/${run.id}`)).text();
  assert.match(page, /not configured on this server/);
  const sent = await alice.post(`/ui/runs/${run.id}/decide`, { ...form, "call.0.decision": "approve" });
  assert.equal(sent.status, 409);
  assert.match(await sent.text(), /decide it through the API/);
  assert.equal((await api(server, TOKENS.alice, "GET", `/v1/runs/${run.id}`)).json.status, "requires_approval");
  assert.ok(!mocks.state.refunds.some((r) => r.order_id === "A-9401"), "nothing ran");
  // The API, given the same agent, decides it.
  const p = run.pending[0];
  const decided = await api(server, TOKENS.alice, "POST", `/v1/runs/${run.id}/decisions`, {
    agent: inline,
    decisions: [{ tool_call_id: p.tool_call_id, digest: p.digest, decision: "approved" }],
  });
  assert.equal(decided.status, 200, decided.text);
  assert.equal(decided.json.status, "completed");
});
