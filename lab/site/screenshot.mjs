// Screenshots of a built results page for the docs: the current matrix, a
// cell's page, a comparison and (when the host has one) the newest load
// sweep, in Debian's chromium through playwright-core.
//   node lab/site/screenshot.mjs SITE_DIR OUT_DIR [HOST] [COMPARE_QUERY]
// SITE_DIR is a results/site folder (bench-run site); HOST defaults to the
// first host; COMPARE_QUERY (e.g. "a=X&b=Y") to the page's own choice.
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [site, out, hostArg, query] = process.argv.slice(2);
if (!site || !out) {
  console.error("usage: node lab/site/screenshot.mjs SITE_DIR OUT_DIR [HOST] [COMPARE_QUERY]");
  process.exit(1);
}
const host = hostArg || readdirSync(site).find((d) => d !== "assets" && statSync(path.join(site, d)).isDirectory());
mkdirSync(out, { recursive: true });
// A fresh profile (the --user-data-dir playwright passes) in a new temporary folder.
const browser = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "kite-shot-")), {
  executablePath: process.env.KITE_CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 900 },
});
const page = await browser.newPage();
const open = (rel) => page.goto(pathToFileURL(path.join(site, host, rel)).href);
await open("index.html");
await page.screenshot({ path: path.join(out, "matrix.png") });
// The first measured cpp cell of the matrix.
const href = await page.$eval("table.matrix td.v-ok a, table.matrix td.v-partial a", (a) => a.getAttribute("href"));
await open(href);
await page.waitForSelector("#cdf[data-ready='1']", { timeout: 10000 });
await page.evaluate(() => document.querySelector("h2").scrollIntoView());
await page.screenshot({ path: path.join(out, "cell.png") });
await open("compare.html" + (query ? "?" + query : ""));
await page.waitForTimeout(200);
await page.screenshot({ path: path.join(out, "compare.png") });
const sweeps = existsSync(path.join(site, host, "sweep")) ? readdirSync(path.join(site, host, "sweep")).sort() : [];
if (sweeps.length) {
  await open("sweep/" + sweeps[sweeps.length - 1]);
  await page.waitForSelector("#sweep-rate[data-ready='1']", { timeout: 10000 });
  await page.evaluate(() => document.querySelector("#series-rate").scrollIntoView());
  await page.screenshot({ path: path.join(out, "sweep.png") });
}
await browser.close();
console.log(`${out}: matrix.png cell.png compare.png (host ${host})`);
