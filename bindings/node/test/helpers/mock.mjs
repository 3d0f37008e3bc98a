// A local mock of the OpenAI Chat Completions API on 127.0.0.1: answers
// from a script (one reply per request, in order, or a function of the
// request), as JSON or as a stream of SSE chunks when the request asks for
// one, and keeps every request it received.
import http from "node:http";

/** An assistant reply with text; streamed, a chunk every `pace` ms if given. */
export function text(content, pace) {
  return { message: { role: "assistant", content }, finish: "stop", pace };
}

/** An assistant reply with tool calls: [[id, name, args], ...]. */
export function calls(...list) {
  return {
    message: {
      role: "assistant",
      content: null,
      tool_calls: list.map(([id, name, args]) => ({
        id,
        type: "function",
        function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
      })),
    },
    finish: "tool_calls",
  };
}

/** An HTTP error answer: `status` with OpenAI's error body, and headers. */
export function httpError(status, message, headers = {}) {
  return { status, message, headers };
}

function body(reply, model) {
  return {
    id: "chatcmpl-mock",
    object: "chat.completion",
    model,
    choices: [{ index: 0, message: reply.message, finish_reason: reply.finish }],
    usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
  };
}

function sse(reply, model) {
  const chunk = (delta, finish = null, usage) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-mock",
      object: "chat.completion.chunk",
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    })}\n\n`;
  let out = chunk({ role: "assistant" });
  const m = reply.message;
  if (m.content) {
    for (const piece of m.content.match(/.{1,8}/gsu) ?? []) out += chunk({ content: piece });
  }
  (m.tool_calls ?? []).forEach((c, index) => {
    out += chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: c.function.arguments } }] });
  });
  out += chunk({}, reply.finish);
  out += `data: ${JSON.stringify({ id: "chatcmpl-mock", object: "chat.completion.chunk", model, choices: [], usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

/**
 * Starts the mock. `script`: replies in order, or a function (request body,
 * index) → reply. Returns {url, requests, close}.
 */
export async function startMock(script) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const parsed = JSON.parse(raw);
      const index = requests.length;
      requests.push({ path: req.url, headers: req.headers, body: parsed });
      const reply = typeof script === "function" ? script(parsed, index) : script[index];
      if (reply === undefined) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `the mock has no reply #${index}` } }));
        return;
      }
      const model = parsed.model ?? "gpt-4o-mini";
      if (reply.status !== undefined) {
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        res.end(JSON.stringify({ error: { message: reply.message, type: "mock" } }));
      } else if (parsed.stream && reply.pace) {
        // A slow model: one chunk every `pace` milliseconds.
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunks = sse(reply, model).split(/(?<=\n\n)/u);
        const next = () => {
          const c = chunks.shift();
          if (c === undefined) return res.end();
          res.write(c);
          setTimeout(next, reply.pace);
        };
        next();
      } else if (parsed.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(sse(reply, model));
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(body(reply, model)));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    // The client keeps connections alive in its pool: close them too.
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

/**
 * A script: `first` for a request that does not end with tool results,
 * `then(body)` once it does (the model read the tools' results).
 */
export function afterTools(first, then) {
  return (body) => {
    const last = body.messages.at(-1);
    return last?.role === "tool" ? then(body) : first;
  };
}
