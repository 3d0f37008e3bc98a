// The documentation site (scripts/docs builds it into target/site; this
// file builds it when it is missing) in
// headless Chromium: navigation, the language tabs (a choice that sticks
// across pages and reloads), search, no broken internal link or anchor,
// pages that read at 360 px. Screenshots of three pages, desktop and
// phone: into docs/guide/screenshots with PARLANCE_UI_SCREENSHOTS=1, else
// a temporary folder (still taken, so that taking them is tested).

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { spawnSync } from "node:child_process";
import http from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { after, before, test } from "node:test";

import { browser, repo } from "./harness.mjs";

const site = join(repo, "target", "site");
const shots =
  process.env.PARLANCE_UI_SCREENSHOTS === "1" ? join(repo, "docs", "guide", "screenshots") : mkdtempSync(join(tmpdir(), "parlance-docs-shots-"));
mkdirSync(shots, { recursive: true });

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".xml": "application/xml",
};

/** The built site over HTTP on 127.0.0.1, as any static host serves it. */
function serve() {
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = normalize(join(site, path));
    if (!file.startsWith(site)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) {
      res.writeHead(404, { "content-type": TYPES[".html"] }).end(readFileSync(join(site, "404.html")));
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

let server;
let base;
let chrome;

before(async () => {
  // scripts/test builds the site first; alone, this file builds it.
  if (!existsSync(join(site, "guide", "index.html"))) {
    const r = spawnSync(join(repo, "scripts", "docs"), { encoding: "utf8", stdio: ["ignore", "inherit", "inherit"] });
    assert.equal(r.status, 0, "scripts/docs failed");
  }
  server = await serve();
  base = `http://127.0.0.1:${server.address().port}`;
  chrome = await browser();
});

after(async () => {
  await chrome?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/** A page's title (without the permalink sign mkdocs adds). */
const title = async (page) => (await page.locator("h1").first().textContent()).replace("¶", "").trim();

/** Every page of the site's navigation, as paths (`/guide/tools/`). */
async function pages() {
  const context = await chrome.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/guide/`);
  const hrefs = await page.$$eval("nav.md-nav--primary a.md-nav__link[href]", (as) => as.map((a) => a.href));
  await context.close();
  const paths = [...new Set(hrefs.map((h) => new URL(h).pathname))];
  return paths.filter((p) => p.endsWith("/"));
}

test("the root leads to the guide, and the navigation goes from page to page", async () => {
  const context = await chrome.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}/`);
  await page.waitForURL("**/guide/");
  assert.equal(await title(page), "The Parlance guide");
  await page.locator("nav.md-nav--primary").getByRole("link", { name: "Tools", exact: true }).first().click();
  await page.waitForURL("**/guide/tools/");
  assert.equal(await title(page), "Tools");
  // The footer's "next" link goes on to the next page of the guide.
  await page.locator("a.md-footer__link--next").click();
  await page.waitForURL("**/guide/approval/");
  assert.match(await title(page), /Human approval/);
  // The design records are there too, under Design.
  const all = await pages();
  for (const p of ["/guide/get-started/", "/guide/formats/", "/guide/reference/", "/format/", "/agent/", "/store/"]) {
    assert.ok(all.includes(p), `${p} is not in the navigation: ${all.join(" ")}`);
  }
  assert.ok(all.length >= 30, `${all.length} pages in the navigation`);
  await context.close();
});

test("the language chosen on one page is the one shown on the next, and after a reload", async () => {
  const context = await chrome.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}/guide/tools/`);
  const visibleCode = () => page.locator(".tabbed-block:visible code").first().textContent();
  // Python first, by default.
  assert.match(await visibleCode(), /from parlance import/);
  await page.locator(".tabbed-labels label", { hasText: "TypeScript" }).first().click();
  assert.match(await visibleCode(), /import \{ Agent, tool, ToolError \} from "parlance-ai"/);
  // Every tab set of the page switched, and so does the next page's.
  await page.locator("nav.md-nav--primary").getByRole("link", { name: "Human approval" }).first().click();
  await page.waitForURL("**/guide/approval/");
  assert.match(await visibleCode(), /from "parlance-ai"/);
  await page.locator(".tabbed-labels label", { hasText: "Rust" }).first().click();
  assert.match(await visibleCode(), /use parlance::/);
  await page.goto(`${base}/guide/threads/`);
  assert.match(await visibleCode(), /use parlance::store::\{Resumer, Store, ThreadRunner\}/);
  await page.reload();
  assert.match(await visibleCode(), /ThreadRunner/);
  await context.close();
});

test("search finds approval and timeout", async () => {
  const context = await chrome.newContext({ viewport: { width: 1280, height: 900 } });
  const results = async (word) => {
    const page = await context.newPage();
    await page.goto(`${base}/guide/`);
    const box = page.locator("input.md-search__input");
    await box.click();
    // The index loads in a worker after the page: type again until it answers.
    const items = page.locator(".md-search-result__item a");
    for (let i = 0; i < 30 && (await items.count()) === 0; i++) {
      await box.fill("");
      await box.pressSequentially(word, { delay: 20 });
      await page.waitForTimeout(500);
    }
    assert.ok((await items.count()) > 0, `no result for ${word}`);
    const hrefs = await items.evaluateAll((as) => as.map((a) => new URL(a.href).pathname));
    await page.close();
    return hrefs;
  };
  const approval = await results("approval");
  assert.ok(approval.includes("/guide/approval/"), approval.join(" "));
  const timeout = await results("timeout");
  assert.ok(timeout.includes("/guide/tools/"), timeout.join(" "));
  await context.close();
});

test("no internal link or anchor is broken", async () => {
  // Every page of the navigation, as served; its links as the browser
  // resolves them (relative to the page's URL).
  const html = new Map();
  const fetchPage = async (path) => {
    if (!html.has(path)) {
      const r = await fetch(`${base}${path}`);
      html.set(path, { status: r.status, text: r.ok ? await r.text() : "" });
    }
    return html.get(path);
  };
  const broken = [];
  let links = 0;
  for (const path of await pages()) {
    const { text } = await fetchPage(path);
    const hrefs = [...text.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1].replaceAll("&amp;", "&"));
    for (const href of new Set(hrefs)) {
      const url = new URL(href, `${base}${path}`);
      if (url.origin !== base) continue;
      links += 1;
      const target = await fetchPage(url.pathname);
      if (target.status !== 200) {
        broken.push(`${path} -> ${url.pathname}: ${target.status}`);
      } else if (url.hash && url.hash !== "#") {
        const id = decodeURIComponent(url.hash.slice(1));
        if (!target.text.includes(`id="${id}"`)) broken.push(`${path} -> ${url.pathname}${url.hash}: no such anchor`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(links > 300, `only ${links} internal links seen`);
});

test("every guide page reads at 360 px: nothing wider than the screen", async () => {
  const context = await chrome.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const wide = [];
  for (const path of (await pages()).filter((p) => p.startsWith("/guide/"))) {
    await page.goto(`${base}${path}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 0) wide.push(`${path}: ${overflow}px too wide`);
  }
  assert.deepEqual(wide, []);
  await context.close();
});

test("screenshots of three pages, desktop and phone", async () => {
  const sizes = {
    desktop: { viewport: { width: 1280, height: 900 } },
    phone: { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  };
  for (const [kind, options] of Object.entries(sizes)) {
    const context = await chrome.newContext(options);
    const page = await context.newPage();
    for (const name of ["get-started", "tools", "approval"]) {
      await page.goto(`${base}/guide/${name}/`);
      await page.locator("h1").first().waitFor();
      const path = join(shots, `${name}-${kind}.png`);
      await page.screenshot({ path, fullPage: false });
      assert.ok(statSync(path).size > 10_000, `${path} is nearly empty`);
    }
    await context.close();
  }
});
