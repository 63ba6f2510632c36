// The hosted payment page in a real browser (`cargo xtask browser`):
// Debian's Chromium, driven by Playwright's core, opens the page of a new
// payment link of a `serve --demo` server, takes a screenshot, types the
// card 4242 4242 4242 4242 into the form and sends it; the browser must
// land on the link's returnUrl and the API must show the link COMPLETED
// and its order SUBMITTED. Only loopback is reached.
//
// usage: node browser.mjs BASE_URL API_KEY SCREENSHOT_PATH

import { chromium } from "playwright-core";

const [base, key, screenshot] = process.argv.slice(2);
const api = async (method, path, body) => {
  const r = await fetch(`${base}/api/v2${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body && JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
};

const catalog = await api("GET", "/customers/rid_acme/product-catalog");
const offering = catalog.items.find((o) => o.name === "Mobile 10 GB").productOfferingId;
const order = await api("POST", "/orders", {
  customerId: "rid_acme",
  // (the demo has a number pool: the line leaves its number out)
  lineItems: [{ type: "SUBSCRIPTION", productOfferingId: offering, subscription: { simType: "ESIM" } }],
});
// back to this server once paid: the browser reaches nothing else
const returnUrl = `${base}/api/v2/health`;
const link = await api("POST", "/payment-links", { orderId: order.orderId, returnUrl, description: "Browser test" });

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  const shown = await page.goto(link.hostedUrl);
  if (shown.status() !== 200) throw new Error(`the page answered ${shown.status()}`);
  const total = await page.textContent("#total");
  await page.screenshot({ path: screenshot, fullPage: true });
  await page.fill("input[name=cardNumber]", "4242 4242 4242 4242");
  await page.fill("input[name=expiry]", "12/30");
  await page.fill("input[name=cvc]", "123");
  await Promise.all([page.waitForURL(returnUrl), page.click("#pay")]);
  const paid = await api("GET", `/payment-links/${link.paymentLinkId}`);
  const submitted = await api("GET", `/orders/${order.orderId}`);
  if (paid.status !== "COMPLETED" || submitted.status !== "SUBMITTED") {
    throw new Error(`after paying: link ${paid.status}, order ${submitted.status}`);
  }
  console.log(`   paid ${total.trim()} on ${link.hostedUrl.replace(/\/pay\/.*/, "/pay/…")}: link COMPLETED, order SUBMITTED, screenshot ${screenshot}`);
} finally {
  await browser.close();
}
