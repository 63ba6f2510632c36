// The reference pages in a real browser (`cargo xtask browser`): Debian's
// Chromium, driven by Playwright's core, opens `/api/v2/docs` of a `serve
// --demo` server; every operationId and every event type of the document
// `/api/v2/openapi.json` must be an element of the rendered page (by its
// anchor id); it takes a full-page screenshot (its first 10,000 pixels:
// see below), follows the revision switcher to each other revision's page
// and checks that one against its own document. The pages may make no
// request to anywhere but the server (each request is watched), and the
// browser may refuse nothing of them (a console error, as a
// Content-Security-Policy refusal is, fails).
//
// usage: node reference.mjs BASE_URL SCREENSHOT_PATH

import { chromium } from "playwright-core";

const [base, screenshot] = process.argv.slice(2);
const own = new URL(base);

const fetchJson = async (path) => {
  const r = await fetch(`${base}${path}`);
  if (!r.ok) throw new Error(`GET ${path}: ${r.status}`);
  return r.json();
};

// The anchor ids a revision's page must have: `op-{operationId}` and `event-{type}`.
const expected = (doc) => {
  const ops = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => `op-${op.operationId}`));
  const events = Object.keys(doc["x-webhooks"] ?? {}).map((t) => `event-${t}`);
  return { ops, events };
};

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const elsewhere = [];
const refused = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && (url.protocol !== own.protocol || url.host !== own.host)) elsewhere.push(request.url());
  });
  page.on("console", (message) => {
    if (message.type() === "error") refused.push(message.text());
  });
  page.on("pageerror", (error) => refused.push(String(error)));

  // Opens nothing: checks the page shown now against `doc`.
  const check = async (doc) => {
    const name = doc.info.version;
    const { ops, events } = expected(doc);
    const missing = await page.evaluate((ids) => ids.filter((id) => !document.getElementById(id)), [...ops, ...events]);
    if (missing.length) throw new Error(`${name}: the page lacks ${missing.length} anchors: ${missing.slice(0, 10).join(", ")}`);
    const marked = (await page.textContent("nav.switcher [aria-current=page]"))?.trim();
    if (marked !== name) throw new Error(`${name}: the switcher marks ${marked}`);
    console.log(`   ${page.url().replace(base, "")}: ${ops.length} operations and ${events.length} event types, each under its anchor`);
    return name;
  };

  const shown = await page.goto(`${base}/api/v2/docs`);
  if (shown.status() !== 200) throw new Error(`/api/v2/docs answered ${shown.status()}`);
  const current = await check(await fetchJson("/api/v2/openapi.json"));
  // the whole width, and the first 10,000 pixels of the height: the page
  // is about 200,000 tall, and Chromium paints a full-page picture only to
  // about 100,000 (blank below), which would read as nothing anyway
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.screenshot({ path: screenshot, fullPage: true, clip: { x: 0, y: 0, width, height: Math.min(height, 10000) } });

  // the switcher: each other revision's page, reached by its link
  const others = await page.$$eval("nav.switcher a", (links) => links.map((a) => a.textContent.trim()));
  if (!others.length) throw new Error("the switcher links no other revision");
  for (const name of others) {
    await page.goto(`${base}/api/v2/docs`);
    await Promise.all([page.waitForURL(`${base}/api/v2/docs/${name}`), page.click(`nav.switcher a:text-is("${name}")`)]);
    await check(await fetchJson(`/api/v2/openapi/${name}.json`));
  }
  if (elsewhere.length) throw new Error(`the pages asked for what is not on the server: ${elsewhere.join(", ")}`);
  if (refused.length) throw new Error(`the browser refused or failed: ${refused.join(" | ")}`);
  console.log(`   the pages of ${[current, ...others].join(" and ")} asked nothing of anywhere else; screenshot ${screenshot}`);
} finally {
  await browser.close();
}
