// The results page in Debian's chromium, driven by playwright-core: a site
// built from the fixture sittings (tests/lab/site_fixture.hpp), opened from
// disk (file://) and through `bench-run serve`. Run by run.sh, which sets:
//   KITE_SITE_RESULTS  the results folder (its site/ built)
//   KITE_SITE_SHOTS    where the screenshots go
//   KITE_BENCH_RUN     bench-run, for `serve`
//   KITE_CHROMIUM      the browser;  KITE_SITE_PKG  lab/site (its node_modules)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(path.join(process.env.KITE_SITE_PKG, "package.json"));
const { chromium } = require("playwright-core");

const results = process.env.KITE_SITE_RESULTS;
const shots = process.env.KITE_SITE_SHOTS;
const site = path.join(results, "site");
const url = (rel) => {
  const [file, query] = rel.split("?");
  return pathToFileURL(path.join(site, file)).href + (query ? "?" + query : "");
};

// Chromium with the flags this machine needs and a fresh --user-data-dir (a new temporary folder).
function launch(options = {}) {
  return chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "kite-site-chromium-")), {
    executablePath: process.env.KITE_CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1400, height: 900 },
    ...options,
  });
}

let context;

before(async () => {
  context = await launch();
});

after(async () => {
  await context?.close();
});

async function open(rel, ctx = context) {
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // A failed load is reported by its response (with its URL); the browser's own favicon request is not the page's.
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
  page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`); });
  // Nothing may be fetched from the network: every request is a file of the site or the results.
  page.on("request", (r) => {
    if (!r.url().startsWith("file://") && !r.url().startsWith("http://127.0.0.1")) errors.push("fetched " + r.url());
  });
  await page.goto(typeof rel === "string" && rel.startsWith("http") ? rel : url(rel));
  page.errors = errors;
  return page;
}

async function cellTexts(page) {
  return page.$$eval("table.matrix td[data-cell]", (tds) => tds.map((td) => ({
    id: td.dataset.cell, state: td.dataset.state || "", text: td.textContent.trim(),
    p50: td.querySelector(".p50")?.textContent ?? null, verdict: td.querySelector(".verdict")?.textContent ?? null,
    cls: td.className,
  })));
}

const VERDICTS = ["ok", "partial", "saturated"];

test("the current matrix: every cell renders with its figure and verdict, or its word", async () => {
  const page = await open("alpha/index.html");
  const cells = await cellTexts(page);
  assert.ok(cells.length >= 100, `only ${cells.length} cells`);
  let measured = 0;
  for (const c of cells) {
    if (c.cls === "absent") continue;
    if (VERDICTS.includes(c.state)) {
      measured++;
      assert.match(c.p50, /^\d+\.\d+$/, `${c.id}: p50 '${c.p50}'`);
      assert.equal(c.verdict, c.state, c.id);
    } else {
      assert.equal(c.p50, null, `${c.id} (${c.state}) shows a figure`);
      assert.equal(c.verdict, c.state, c.id);
      assert.doesNotMatch(c.text, /\d+\.\d+/, `${c.id} (${c.state}) shows a number`);
    }
  }
  assert.ok(measured >= 30, `${measured} measured cells`);
  const by = Object.fromEntries(cells.map((c) => [c.id, c]));
  for (const [id, word] of [["cpp/kernel/pool/open", "refused"], ["cpp/tcpdirect/pool/closed", "nopool"],
    ["cpp/tcpdirect/shard/closed", "noshard"], ["cpp/onload/single/closed", "unmeasurable"],
    ["quickfix/vma/single/closed", "unsupported"], ["raw/vma/pool/closed", "oversubscribed"],
    ["rust-pure/kernel/single/closed", "unbuilt"], ["raw/kernel/pool/closed", "error"],
    ["quickfix/kernel/mono/open", "saturated"], ["cpp/kernel/mono/closed", "partial"]])
    assert.equal(by[id].state, word, id);
  assert.ok(by["quickfix/kernel/mono/open"].cls.includes("v-saturated"));
  const body = await page.textContent("body");
  assert.ok(!body.includes("999.99"), "a quick sitting's figure is in the current matrix");
  assert.ok(!body.includes("777.77") && !body.includes("888.88"), "an archived figure is in the current matrix");
  assert.deepEqual(page.errors, []);
  await page.screenshot({ path: path.join(shots, "matrix.png"), fullPage: true });
  await page.close();
});

test("the response/service switch changes the open cells", async () => {
  const page = await open("alpha/index.html");
  const sel = 'td[data-cell="cpp/vma/single/open"]';
  const before = await page.textContent(`${sel} .p50`);
  const { response, service } = await page.$eval(sel, (td) => ({ response: td.dataset.response, service: td.dataset.service }));
  assert.equal(before, response);
  const closedBefore = await page.textContent('td[data-cell="cpp/vma/single/closed"] .p50');
  await page.click('.switch button[data-view="service"]');
  assert.equal(await page.textContent(`${sel} .p50`), service);
  assert.notEqual(service, response);
  assert.equal(await page.textContent('td[data-cell="cpp/vma/single/closed"] .p50'), closedBefore, "a closed cell changed");
  assert.match(page.url(), /view=service/);
  await page.screenshot({ path: path.join(shots, "matrix-service.png"), fullPage: true });
  await page.click('.switch button[data-view="response"]');
  assert.equal(await page.textContent(`${sel} .p50`), response);
  await page.close();
});

test("a cell's CDF opens with its peers overlaid", async () => {
  const page = await open("alpha/index.html");
  await page.click('td[data-cell="cpp/kernel/single/closed"] a');
  await page.waitForSelector("#cdf[data-ready='1']", { timeout: 10000 });
  assert.equal(await page.getAttribute("#cdf", "data-series"), "3");
  assert.ok(await page.$("#cdf canvas"), "no chart canvas");
  const legend = await page.textContent("#cdf .u-legend");
  assert.match(legend, /cpp/);
  assert.match(legend, /quickfix \(peer\)/);
  assert.match(legend, /raw \(peer\)/);
  const body = await page.textContent("body");
  for (const s of ["Judged against", "Runs", "Effective settings", "Stamp", "Audit", "CV of p50"]) assert.ok(body.includes(s), s);
  assert.deepEqual(page.errors, []);
  await page.screenshot({ path: path.join(shots, "cell.png"), fullPage: true });
  await page.close();
});

test("a refused cell shows why and no figures", async () => {
  const page = await open("alpha/cell/cpp_kernel_pool_open.html");
  const body = await page.textContent("body");
  assert.match(body, /refused by the audit: audit: foreign-burner/);
  assert.equal(await page.$("#cdf"), null);
  assert.equal(await page.$("table.figures"), null);
  assert.match(await page.textContent("ul.violations"), /foreign-burner/);
  await page.screenshot({ path: path.join(shots, "cell-refused.png"), fullPage: true });
  await page.close();
});

test("the provenance table names the right sittings", async () => {
  const page = await open("alpha/index.html");
  const rows = await page.$$eval('table.prov[data-flavour="cpp"] tbody tr', (trs) =>
    trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const single = rows.find((r) => r[0].includes("closed kernel/single"));
  assert.ok(single, JSON.stringify(rows));
  assert.equal(single[2], "e-cpp-rerun");
  assert.match(single[3], /8813683d/);
  const vma = rows.find((r) => r[0].includes("closed vma/single"));
  assert.equal(vma[2], "c-base");
  assert.match(vma[3], /5438e44e/);
  const flags = await page.textContent("section.provenance");
  assert.match(flags, /The closed cpp column comes from 2 sittings and 2 binaries/);
  assert.match(await page.textContent("#prov-quickfix ~ p.not-control"), /not a same-sitting control/);
  await page.close();
});

test("an archive page carries its banner and no current figure", async () => {
  const page = await open("alpha/index.html");
  const links = await page.$$eval("#archives a", (as) => as.map((a) => a.getAttribute("href")));
  assert.equal(links.length, 2);
  const current = await cellTexts(page);
  const currentFigures = new Set(current.filter((c) => c.p50).map((c) => c.p50));
  await page.close();
  for (const [i, href] of links.entries()) {
    const a = await open("alpha/" + href);
    const banner = await a.textContent(".banner");
    if (i === 0) {
      assert.match(banner, /Hardware epoch boundary \(2026-09-20\)/);
      assert.match(banner, /Test CPU 6154/);
      assert.match(banner, /Test CPU 6254/);
    } else {
      assert.match(banner, /Historical method v0 archive.not the current results/);
    }
    assert.match(banner, /Open the current/);
    const cells = await cellTexts(a);
    assert.ok(cells.length > 0);
    for (const c of cells) if (c.p50) assert.ok(!currentFigures.has(c.p50), `${c.id} ${c.p50} is a current figure`);
    await a.screenshot({ path: path.join(shots, `archive-${i}.png`), fullPage: true });
    await a.click(".banner a");
    assert.match(a.url(), /alpha\/index\.html$/);
    await a.close();
  }
});

test("the comparison shows the changed verdict, by URL and by the picker", async () => {
  const page = await open("alpha/compare.html?a=c-base&b=e-cpp-rerun&flavour=cpp&peer=quickfix");
  const out = await page.textContent("#comparison");
  assert.match(out, /cpp\/kernel\/mono\/closed: ok to partial/);
  assert.match(out, /Closed, p50 in us/);
  assert.match(out, /binary 5438e44ecc8e -> 8813683d5a1f/);
  await page.screenshot({ path: path.join(shots, "compare.png"), fullPage: true });
  await page.selectOption("#pick-a", "e-cpp-rerun");
  await page.selectOption("#pick-b", "f-netns-sweep");
  const netns = await page.textContent("#comparison");
  assert.match(netns, /network loopback -> netns: every row/);
  assert.match(netns, /busy_poll_usecs 0 -> 50/);
  assert.match(page.url(), /a=e-cpp-rerun/);
  await page.screenshot({ path: path.join(shots, "compare-netns.png"), fullPage: true });
  await page.selectOption("#pick-a", "a-epoch-old");
  assert.match(await page.textContent("#comparison .refusal"), /two hardware epochs are never compared/);
  await page.selectOption("#pick-a", "b-method-old");
  assert.match(await page.textContent("#comparison .refusal"), /two method versions are never compared/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the host page and every sitting's own matrix", async () => {
  const page = await open("alpha/host.html");
  assert.equal(await page.$$eval(".coremap .core-server", (d) => d.length), 4);
  assert.equal(await page.$$eval(".coremap .core-client", (d) => d.length), 4);
  assert.equal(await page.$$eval(".coremap .core-coordinator", (d) => d.length), 1);
  assert.equal(await page.$$eval("table.eras tbody tr", (d) => d.length), 3);
  await page.screenshot({ path: path.join(shots, "host.png"), fullPage: true });
  await page.close();
  const q = await open("alpha/sitting/d-quick/index.html");
  assert.match(await q.textContent("main"), /No cell of this sitting is in the current matrix: its settings differ/);
  assert.match(await q.textContent("main"), /999\.99/);
  await q.close();
  const idx = await open("index.html");
  assert.deepEqual(await idx.$$eval("table.hosts a", (as) => as.map((a) => a.textContent)), ["alpha", "beta"]);
  await idx.close();
});

test("a load sweep: latency against rate and sessions, one line per flavour, knees ringed", async () => {
  const page = await open("alpha/index.html");
  await page.click('#sweeps a[href="sweep/h-load-sweep.html"]');
  await page.waitForSelector("#sweep-rate[data-ready='1']", { timeout: 10000 });
  await page.waitForSelector("#sweep-sessions[data-ready='1']", { timeout: 10000 });
  assert.equal(await page.getAttribute("#sweep-rate", "data-lines"), "2");
  assert.equal(await page.getAttribute("#sweep-sessions", "data-lines"), "1");
  assert.equal(await page.getAttribute("#sweep-rate", "data-figure"), "response p99");
  const legend = await page.textContent("#sweep-rate .u-legend");
  for (const s of ["cpp", "quickfix", "cpp knee", "quickfix knee"]) assert.ok(legend.includes(s), s);
  // The figure picker redraws the chart.
  await page.selectOption("#series-rate select.sweep-figure", { label: "service p50" });
  await page.waitForFunction(() => document.querySelector("#sweep-rate").dataset.figure === "service p50");
  assert.equal(await page.$$eval("#sweep-rate canvas", (c) => c.length), 1);
  assert.match(await page.textContent("#series-rate"), /saturated from 20000\/s: the client could not keep its schedule/);
  assert.equal(await page.$$eval('table.sweep-steps[data-flavour="cpp"][data-series="rate"] tr.knee', (r) => r.length), 1);
  assert.deepEqual(page.errors, []);
  await page.screenshot({ path: path.join(shots, "sweep.png"), fullPage: true });
  await page.close();
});

test("the matrix reads without scripts", async () => {
  const noJs = await launch({ javaScriptEnabled: false });
  const page = await open("alpha/index.html", noJs);
  const cells = await cellTexts(page);
  const c = cells.find((x) => x.id === "cpp/vma/single/open");
  assert.match(c.p50, /^\d+\.\d+$/);
  assert.equal(await page.$(".switch"), null, "the switch is the scripts' addition");
  await page.check("#show-tail");
  assert.ok(await page.isVisible('td[data-cell="cpp/vma/single/open"] .tail'), "p99 and max on demand without scripts");
  await page.screenshot({ path: path.join(shots, "matrix-noscript.png"), fullPage: true });
  await noJs.close();
});

test("bench-run serve gives the same page on localhost", async () => {
  const child = spawn(process.env.KITE_BENCH_RUN, ["serve", "--port", "0", "--results", results], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const base = await new Promise((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = out.match(/http:\/\/127\.0\.0\.1:\d+/);
        if (m) resolve(m[0]);
      });
      child.on("exit", (code) => reject(new Error("serve exited " + code)));
      setTimeout(() => reject(new Error("serve said nothing in 10 s")), 10000);
    });
    const page = await open(base + "/");
    assert.match(page.url(), /\/site\/index\.html$/);
    await page.goto(base + "/site/alpha/compare.html?a=c-base&b=e-cpp-rerun");
    assert.match(await page.textContent("#comparison"), /ok to partial/);
    await page.goto(base + "/site/alpha/cell/cpp_vma_single_closed.html");
    await page.waitForSelector("#cdf[data-ready='1']", { timeout: 10000 });
    assert.deepEqual(page.errors, []);
    const res = await page.goto(base + "/site/../../etc/passwd");
    assert.notEqual(res.status(), 200);
    await page.close();
  } finally {
    child.kill("SIGTERM");
  }
});
