// Parlance's approval inbox: what the pages do with a script (they work
// without it: forms post, pages reload).
// - times in the reader's time zone and as "3 min ago";
// - live parts ([data-live]): server-sent events redraw the inbox and the
//   thread, and mark calls decided elsewhere on a decision page;
// - the decision form: only the chosen decision's fields are shown, and
//   edited arguments are checked by the server (the engine's own rules) as
//   they are typed and before the form is sent, the engine's message shown
//   at the field it names.
// Messages are set with textContent; HTML comes only from our own server,
// which escapes every value.

document.documentElement.classList.add("js");

const ago = (date) => {
  const s = Math.round((Date.now() - date.getTime()) / 1000);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return date.toLocaleDateString();
};

function times(root = document) {
  for (const t of root.querySelectorAll("time[data-ago]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (Number.isNaN(d.getTime())) continue;
    t.title = d.toLocaleString();
    t.textContent = ago(d);
  }
}

// Redraws `el` with `html`, keeping the focus, the open <details> and
// the scroll position.
function redraw(el, html) {
  const focused = document.activeElement && el.contains(document.activeElement) ? document.activeElement.id : null;
  const open = new Set([...el.querySelectorAll("details[open]")].map(d => d.id || d.closest("[id]")?.id).filter(Boolean));
  const y = window.scrollY;
  el.innerHTML = html;
  for (const d of el.querySelectorAll("details")) {
    const key = d.id || d.closest("[id]")?.id;
    if (key && open.has(key)) d.open = true;
  }
  if (focused) document.getElementById(focused)?.focus();
  window.scrollTo(0, y);
  times(el);
}

function status(text) {
  const s = document.getElementById("live-status");
  if (s) s.textContent = text;
}

function live(el) {
  const name = el.dataset.event;
  const source = new EventSource(el.dataset.live);
  source.addEventListener(name, (e) => {
    status("");
    if (name === "run") return runChanged(JSON.parse(e.data));
    redraw(el, e.data);
    if (name === "inbox") {
      const n = el.querySelector("[data-count]")?.dataset.count ?? "0";
      document.title = (n === "0" ? "" : `(${n}) `) + "Inbox · Parlance";
    }
  });
  source.addEventListener("error", async () => {
    if (source.readyState !== EventSource.CLOSED) {
      status("Reconnecting…");
      return;
    }
    // Refused: the session ended (reloading shows the login form), or it
    // holds too many live pages (reloading would be refused again).
    const probe = new AbortController();
    const resp = await fetch(el.dataset.live, { signal: probe.signal }).catch(() => null);
    probe.abort();
    if (resp?.status === 429) {
      status("Live updates off: this session has too many live pages open. Close one, then reload this page.");
      return;
    }
    status("Live updates stopped: reloading…");
    setTimeout(() => location.reload(), 3000);
  });
  addEventListener("pagehide", () => source.close());
}

// --- the decision form -------------------------------------------------

const form = document.getElementById("decide");

function showChosen(card) {
  const chosen = card.querySelector('input[type="radio"]:checked')?.value;
  for (const w of card.querySelectorAll("[data-when]")) w.hidden = w.dataset.when !== chosen;
  const mode = card.querySelector("select[data-mode-select]")?.value;
  if (mode) for (const m of card.querySelectorAll("[data-mode]")) m.hidden = m.dataset.mode !== mode;
}

function encoded(f) {
  const body = new URLSearchParams();
  for (const [k, v] of new FormData(f)) body.append(k, v);
  return body;
}

// Puts the messages of a check at their slots; `which` limits it to the
// slots of some calls, `decisions` also fills the choice slots.
function showErrors(result, { which = null, decisions = true } = {}) {
  for (const card of form.querySelectorAll(".call[data-n]")) {
    const n = card.dataset.n;
    if (which && !which.has(n)) continue;
    const errors = result.calls?.[n] ?? {};
    for (const slot of card.querySelectorAll("p.error[data-ptr]")) {
      const key = slot.dataset.ptr;
      if (!decisions && key.startsWith("#")) continue;
      const lines = errors[key] ?? [];
      slot.textContent = lines.join("\n");
      // Matched by value, not by a selector: a slot's id comes from the
      // schema's keys, which may hold any character (`"`, `]`...).
      const inputs = [...card.querySelectorAll("[aria-describedby]")]
        .filter((el) => el.getAttribute("aria-describedby").split(/\s+/).includes(slot.id));
      for (const input of inputs) {
        if (lines.length) input.setAttribute("aria-invalid", "true");
        else input.removeAttribute("aria-invalid");
      }
    }
    const how = result.conflicts?.[n];
    if (how) decidedElsewhere(card, how);
  }
  const general = document.getElementById("general-errors");
  if (general && (!which || result.general?.length)) general.textContent = (result.general ?? []).join("\n");
}

async function check() {
  const resp = await fetch(form.dataset.check, {
    method: "POST",
    body: encoded(form),
    headers: { "content-type": "application/x-www-form-urlencoded" },
    credentials: "same-origin",
  });
  if (!resp.ok) throw new Error(`check: HTTP ${resp.status}`);
  return resp.json();
}

function decidedElsewhere(card, how) {
  if (card.classList.contains("elsewhere") || card.classList.contains("done")) return;
  card.classList.add("elsewhere");
  const note = card.querySelector(".decided-elsewhere");
  if (note) {
    note.hidden = false;
    note.textContent = `Decided elsewhere meanwhile: ${how}. This call can no longer be decided here.`;
  }
  const badge = card.querySelector(".state");
  if (badge) {
    badge.textContent = how;
    badge.className = "badge neutral state";
  }
  for (const input of card.querySelectorAll("input, select, textarea")) input.disabled = true;
  for (const w of card.querySelectorAll("[data-when]")) w.hidden = true;
}

function runChanged(data) {
  if (!form) return;
  for (const c of data.calls) {
    const card = form.querySelector(`.call[data-n="${c.n}"]`);
    if (card && !c.pending) decidedElsewhere(card, c.how);
  }
  const open = [...form.querySelectorAll(".call[data-n]")].filter(c => !c.classList.contains("done") && !c.classList.contains("elsewhere"));
  const notices = document.getElementById("notices");
  if (data.status !== "requires_approval" && notices && !notices.querySelector(".gone")) {
    const p = document.createElement("p");
    p.className = "notice warn gone";
    p.textContent = `This run is no longer waiting for decisions (it is ${data.status.replaceAll("_", " ")}). `;
    const a = document.createElement("a");
    a.href = `/ui/threads/${encodeURIComponent(data.thread)}`;
    a.textContent = "Open its thread";
    p.append(a);
    notices.append(p);
  }
  const submit = form.querySelector('button[type="submit"]');
  if (submit && (data.status !== "requires_approval" || open.length === 0)) submit.disabled = true;
}

if (form) {
  for (const card of form.querySelectorAll(".call[data-n]")) {
    showChosen(card);
    card.addEventListener("change", (e) => {
      if (e.target.matches('input[type="radio"], select[data-mode-select]')) showChosen(card);
    });
    let timer = null;
    card.addEventListener("input", (e) => {
      if (!e.target.closest('[data-when="edit"]')) return;
      clearTimeout(timer);
      timer = setTimeout(async () => {
        try {
          showErrors(await check(), { which: new Set([card.dataset.n]), decisions: false });
        } catch { /* the check on sending will say */ }
      }, 300);
    });
  }
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const submit = form.querySelector('button[type="submit"]');
    submit.disabled = true;
    try {
      const result = await check();
      if (result.ok) return form.submit();
      showErrors(result);
      const first = form.querySelector('[aria-invalid="true"]') ?? form.querySelector("p.error:not(:empty)");
      first?.focus?.();
      first?.scrollIntoView?.({ block: "center" });
    } catch {
      return form.submit();
    }
    submit.disabled = false;
  });
}

times();
setInterval(times, 30000);
for (const el of document.querySelectorAll("[data-live]")) live(el);
