// SPDX-License-Identifier: MIT
// Headless-Chromium checks of perfkit's exports (driven by playwright-core):
//  1. the HTML flame graph: no console errors, root total, hover, click-to-zoom, search
//     share, icicle toggle, event selector; screenshots into the build tree;
//  2. the speedscope export loaded into speedscope's own web app (npm package, offline);
//  3. the Gecko (Firefox Profiler) export checked against the format's documented shape
//     (the Firefox Profiler itself is not available offline), then loaded into speedscope's
//     web app through its Firefox-profile importer, which reads the Gecko profile inside
//     the envelope the old Firefox DevTools performance panel saved (see below).
//
// usage: node browser-test.mjs --html F --folded F --samples N [--speedscope F]
//                              [--gecko F] [--out DIR]
// Expected values come from outside the page: the sample count from `perf script`, the
// search share from the folded stacks.
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const out = args.out || ".";
let failures = 0, checks = 0;
function check(cond, what, detail) {
  checks++;
  if (cond) console.log("ok   " + what);
  else { failures++; console.log("FAIL " + what + (detail !== undefined ? ": " + detail : "")); }
}

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "pk-chromium-"));
// a fresh profile directory (playwright passes it as --user-data-dir)
const browser = await chromium.launchPersistentContext(userDir, {
  executablePath: process.env.PK_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

try {
  // ---------------------------------------------------------------- flame graph
  {
    const page = await browser.newPage();
    const errors = [], requests = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) requests.push(r.url()); });
    await page.goto(pathToFileURL(path.resolve(args.html)).href);
    await page.waitForFunction(() => window.perfkitFlame && window.perfkitFlame.root());
    check(errors.length === 0, "flame graph: no console errors", errors.join(" | "));
    check(requests.length === 0, "flame graph: no network requests", requests.join(" "));

    const root = await page.evaluate(() => window.perfkitFlame.root());
    check(root.name === "all", "flame graph: root frame is 'all'", root.name);
    check(root.samples === Number(args.samples), "flame graph: root total is perf's sample count",
      `page ${root.samples}, perf script ${args.samples}`);
    const info = await page.textContent("#info");
    check(info.startsWith(Number(args.samples).toLocaleString("en-US") + " samples"),
      "flame graph: page shows the sample total", info);
    check(/merged into their callers|no frames pruned/.test(info) && /%/.test(info),
      "flame graph: pruning threshold shown on the page", info);
    await page.screenshot({ path: path.join(out, "flamegraph.png"), fullPage: true });

    // hover: tooltip with name, DSO, samples, percent
    const r = await page.evaluate(() => window.perfkitFlame.frameRect("hot_loop_a"));
    check(r && r.width > 20, "flame graph: hot_loop_a is drawn", JSON.stringify(r));
    const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
    await page.mouse.move(cx, cy);
    const tip = await page.textContent("#tip");
    const tipShown = await page.evaluate(() => getComputedStyle(document.getElementById("tip")).display);
    check(tipShown === "block" && /^hot_loop_a {2}\[.*demo-workload\]\n[\d,]+ samples, .*[\d.]+% of all/.test(tip),
      "flame graph: hover tooltip shows name, DSO, samples, percent", JSON.stringify(tip));

    // search share, computed here from the folded stacks: lines with a hot_loop frame
    const folded = fs.readFileSync(args.folded, "utf8").trim().split("\n");
    let all = 0, hit = 0;
    for (const l of folded) {
      const sp = l.lastIndexOf(" "), w = Number(l.slice(sp + 1));
      all += w;
      if (l.slice(0, sp).split(";").slice(1).some((f) => /hot_loop/i.test(f))) hit += w;
    }
    const want = 100 * hit / all;
    await page.fill("#search", "hot_loop");
    const match = await page.textContent("#match");
    const got = parseFloat((match.match(/Matched: ([\d.]+)%/) || [])[1]);
    check(Math.abs(got - want) < 0.01, "flame graph: search shows the matched share",
      `page "${match}", folded stacks ${want.toFixed(3)}%`);
    await page.screenshot({ path: path.join(out, "flamegraph-search.png"), fullPage: true });
    await page.fill("#search", "");

    // click zooms into the frame; the zoomed frame spans the width; click again zooms out
    // (typing in the search box scrolled the page: locate the frame again)
    const r2 = await page.evaluate(() => window.perfkitFlame.frameRect("hot_loop_a"));
    await page.mouse.click(r2.x + r2.width / 2, r2.y + r2.height / 2);
    const z = await page.evaluate(() => window.perfkitFlame.zoomed());
    check(z.name === "hot_loop_a", "flame graph: click zooms into the frame", z.name);
    const zr = await page.evaluate(() => window.perfkitFlame.frameRect("hot_loop_a"));
    const cw = await page.evaluate(() => document.getElementById("flame").clientWidth);
    check(zr && Math.abs(zr.width - cw) < 2, "flame graph: zoomed frame spans the full width",
      `${zr && zr.width} of ${cw}`);
    const ztext = await page.textContent("#zoom");
    check(/^Zoomed into hot_loop_a \([\d.]+%\)/.test(ztext), "flame graph: zoom shown", ztext);
    check(!(await page.isDisabled("#reset")), "flame graph: reset enabled while zoomed");
    await page.screenshot({ path: path.join(out, "flamegraph-zoom.png"), fullPage: true });
    await page.mouse.click(zr.x + zr.width / 2, zr.y + zr.height / 2);
    const z2 = await page.evaluate(() => window.perfkitFlame.zoomed());
    check(z2.name !== "hot_loop_a", "flame graph: clicking the zoomed frame zooms out", z2.name);
    await page.click("#reset");
    check((await page.evaluate(() => window.perfkitFlame.zoomed())).name === "all",
      "flame graph: reset returns to the root");

    // flame/icicle toggle: the root moves from the bottom to the top
    const before = await page.evaluate(() => window.perfkitFlame.frameRect("all"));
    await page.click("#orient");
    const after = await page.evaluate(() => window.perfkitFlame.frameRect("all"));
    check(await page.evaluate(() => window.perfkitFlame.icicle()) && after.y < before.y,
      "flame graph: icicle toggle puts the root on top", `${before.y} -> ${after.y}`);
    await page.screenshot({ path: path.join(out, "flamegraph-icicle.png"), fullPage: true });

    // event selector lists every event
    const nopt = await page.locator("#event option").count();
    check(nopt >= 1, "flame graph: event selector filled", nopt);
    check(errors.length === 0, "flame graph: still no console errors", errors.join(" | "));
    await page.close();
  }

  // ---------------------------------------------------------------- deep stacks, legend
  // Issue #16: a 100-frame-deep profile at 1400x900 opens with its root in the window
  // (it used to be below the fold), the controls stay reachable, and every colour drawn
  // is in the legend: the frame's hue lies in the hue range of its class's swatch (user
  // frames go from red to yellow; the legend showed one orange).
  for (const [what, file] of [["flame graph", args.html], ["deep flame graph", args.deep]]) {
    if (!file) continue;
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(path.resolve(file)).href);
    await page.waitForFunction(() => window.perfkitFlame && window.perfkitFlame.root());
    await page.waitForTimeout(100);
    const v = await page.evaluate(() => {
      const c = document.getElementById("flame").getBoundingClientRect(), h = parseFloat(document.getElementById("flame").style.height);
      const ice = window.perfkitFlame.icicle(), top = ice ? c.top : c.top + h - 4 - 17;
      const hdr = document.querySelector("header").getBoundingClientRect();
      const depth = Math.max(...window.perfkitFlame.frames().map((f) => f.depth));
      return { top, bottom: top + 16, inner: window.innerHeight, hdrTop: hdr.top, hdrBottom: hdr.bottom, depth };
    });
    if (what === "deep flame graph")
      check(v.depth >= 100, what + ": the profile is at least 100 frames deep", v.depth);
    check(v.top >= v.hdrBottom && v.bottom <= v.inner,
      what + ": the root is in the 1400x900 window when the page opens", JSON.stringify(v));
    check(v.hdrTop === 0, what + ": the controls are on screen", v.hdrTop);
    const legend = await page.evaluate(() => [...document.querySelectorAll("#legend span")].map((s) => {
      const cs = getComputedStyle(s);
      return { label: s.nextSibling ? s.nextSibling.textContent.trim() : "", bg: cs.backgroundImage + " " + cs.backgroundColor };
    }));
    const drawn = await page.evaluate(() => window.perfkitFlame.drawn ? window.perfkitFlame.drawn() : []);
    // hue, saturation of "rgb(r, g, b)" or "hsl(h,s%,l%)"
    const hs = (c) => {
      let m = /hsl\((\d+),(\d+)%/.exec(c);
      if (m) return [+m[1], +m[2]];
      m = /rgba?\((\d+), (\d+), (\d+)/.exec(c);
      const [r, g, b] = [+m[1] / 255, +m[2] / 255, +m[3] / 255], mx = Math.max(r, g, b), mn = Math.min(r, g, b), d = mx - mn;
      if (d < 1e-3) return [0, 0];
      const h = mx === r ? ((g - b) / d + 6) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
      return [Math.round(h * 60), Math.round(100 * d / (1 - Math.abs(mx + mn - 1)))];
    };
    const cls = { user: "user", kernel: "kernel", jit: "JIT", unknown: "other", comm: "other" };
    const ranges = {};
    for (const l of legend) {
      const stops = (l.bg.match(/rgba?\([^)]*\)/g) || []).filter((c) => !/, 0\)$/.test(c)).map(hs);
      if (stops.length) ranges[l.label] = { lo: Math.min(...stops.map((x) => x[0])), hi: Math.max(...stops.map((x) => x[0])), grey: stops.every((x) => x[1] === 0) };
    }
    const bad = new Set();
    for (const f of drawn) {
      const r = ranges[cls[f.kind]], [h, s] = hs(f.colour);
      if (!r || (r.grey ? s !== 0 : s === 0 || h < r.lo - 2 || h > r.hi + 2)) bad.add(f.kind + " " + f.colour);
    }
    check(drawn.length > 0 && bad.size === 0, what + ": every colour drawn is in the legend (" +
      Object.keys(ranges).map((k) => k + " " + ranges[k].lo + "-" + ranges[k].hi).join(", ") + ")", [...bad].slice(0, 5).join(" | "));
    check(errors.length === 0, what + ": no page errors", errors.join(" | "));
    await page.screenshot({ path: path.join(out, what.replace(/ /g, "-") + "-open.png") });
    await page.close();
  }

  // ---------------------------------------------------------------- speedscope
  if (args.speedscope) {
    const app = path.join(here, "node_modules/speedscope/dist/release/index.html");
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    await page.goto(pathToFileURL(app).href);
    await page.setInputFiles("input#file", args.speedscope);
    // once a profile is imported speedscope names the page after it and draws a canvas
    let loaded = true;
    try {
      await page.waitForFunction(() => /speedscope/.test(document.title) && !/^speedscope$/.test(document.title.trim()), null, { timeout: 20000 });
    } catch (e) { loaded = false; }
    const title = await page.title();
    const body = await page.textContent("body");
    check(loaded && !/Something went wrong|Unrecognized format|Failed to/i.test(body),
      "speedscope: its web app imports our file", `title "${title}"`);
    const canvases = await page.locator("canvas").count();
    check(canvases > 0, "speedscope: profile is drawn", canvases);
    // the viewer's own frame list must show our hottest function
    const sp = JSON.parse(fs.readFileSync(args.speedscope, "utf8"));
    check(sp.shared.frames.some((f) => f.name === "hot_loop_a"), "speedscope: frames include hot_loop_a");
    check(body.includes(sp.profiles[0].name), "speedscope: shows our first profile by name", sp.profiles[0].name);
    await page.keyboard.press("2"); // left-heavy view
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(out, "speedscope.png") });
    check(errors.length === 0, "speedscope: no console errors", errors.join(" | "));
    await page.close();
  }

  // ---------------------------------------------------------------- gecko in speedscope
  // speedscope's Firefox importer takes a Gecko profile the way the old Firefox DevTools
  // performance panel saved it: {systemHost: {name: "Firefox"}, duration, profile: <Gecko
  // profile>} (the Firefox Profiler unwraps the same envelope), reads one thread (the only
  // one, else "GeckoMain"), keeps frames whose location reads "name (file...)" (ours:
  // "function (in library)") and wants the stack empty after the last sample (DevTools
  // profiles end outside JS). The test adds exactly that envelope and one closing sample
  // with a null stack to one of our threads; its samples, stackTable, frameTable and
  // stringTable are ours, unchanged.
  if (args.gecko) {
    const g = JSON.parse(fs.readFileSync(args.gecko, "utf8"));
    // the thread with the most samples in hot_loop_a (the demo's main thread)
    const leafLoc = (t, st) => st === null ? "" : t.stringTable[t.frameTable.data[
      t.stackTable.data[st][t.stackTable.schema.frame]][t.frameTable.schema.location]];
    const hotRows = (t) => t.samples.data.filter((r) => /^hot_loop_a \(in /.test(leafLoc(t, r[t.samples.schema.stack]))).length;
    const th = g.threads.reduce((a, b) => (hotRows(b) > hotRows(a) ? b : a));
    const S = th.samples.schema;
    const rows = th.samples.data;
    const end = rows[rows.length - 1][S.time] + g.meta.interval;
    const closing = [];
    closing[S.stack] = null;
    closing[S.time] = end;
    const wrapped = path.join(out, "rec.gecko-devtools.json");
    fs.writeFileSync(wrapped, JSON.stringify({
      systemHost: { name: "Firefox" }, duration: end,
      profile: { ...g, threads: [{ ...th, samples: { ...th.samples, data: [...rows, closing] } }] },
    }));
    // expected self time of hot_loop_a as speedscope measures it: a sample's leaf runs
    // from its time to the next sample's
    let hotSelf = 0;
    for (let i = 0; i < rows.length; i++) {
      const next = i + 1 < rows.length ? rows[i + 1][S.time] : end;
      if (/^hot_loop_a \(in /.test(leafLoc(th, rows[i][S.stack]))) hotSelf += next - rows[i][S.time];
    }
    const want = 100 * hotSelf / end;

    const app = path.join(here, "node_modules/speedscope/dist/release/index.html");
    const page = await browser.newPage();
    const errors = [], logs = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => {
      logs.push(m.text());
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto(pathToFileURL(app).href);
    await page.setInputFiles("input#file", wrapped);
    let loaded = true;
    try {
      await page.waitForFunction(() => /rec\.gecko-devtools\.json - speedscope/.test(document.title), null, { timeout: 20000 });
    } catch (e) { loaded = false; }
    const body = await page.textContent("body");
    check(loaded && logs.some((l) => /Importing as Firefox profile/.test(l)) &&
      !/Something went wrong|Unrecognized format/i.test(body) && !logs.some((l) => /Failed to load/.test(l)),
      "gecko: speedscope's Firefox importer imports our file",
      `title "${await page.title()}"; ${logs.filter((l) => /Import|Failed/.test(l)).join(" | ")}`);
    check((await page.locator("canvas").count()) > 0, "gecko: speedscope draws the profile");
    await page.screenshot({ path: path.join(out, "gecko-speedscope.png") });
    // the sandwich view lists the viewer's own functions with their self share
    await page.keyboard.press("3");
    await page.waitForTimeout(300);
    const table = await page.evaluate(() => [...document.querySelectorAll("tr")].map((tr) => {
      const td = tr.querySelectorAll("td");
      if (td.length < 3) return null;
      const bar = td[1].querySelector("[style*=width]"); // the self bar, width = share
      return { name: td[2].textContent, lib: td[2].getAttribute("title"),
        self: bar ? parseFloat(bar.style.width) : NaN };
    }).filter((r) => r));
    const hot = table.find((r) => r.name === "hot_loop_a");
    check(hot && hot.lib === "in demo-workload", "gecko: speedscope lists hot_loop_a of demo-workload",
      JSON.stringify(hot || table.slice(0, 3)));
    check(hot && Math.abs(hot.self - want) < 0.01, "gecko: speedscope's self share of hot_loop_a matches our samples",
      `speedscope ${hot && hot.self}%, samples ${want.toFixed(4)}%`);
    check(table.length > 0 && table[0].name === "hot_loop_a", "gecko: hot_loop_a tops speedscope's self list",
      table.length ? table[0].name : "empty");
    await page.screenshot({ path: path.join(out, "gecko-speedscope-sandwich.png") });
    check(errors.length === 0, "gecko: no console errors in speedscope", errors.join(" | "));
    await page.close();
  }
} finally {
  await browser.close();
  fs.rmSync(userDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- gecko (shape)
if (args.gecko) {
  const g = JSON.parse(fs.readFileSync(args.gecko, "utf8"));
  const m = g.meta || {};
  check(typeof m.version === "number" && typeof m.interval === "number" && typeof m.startTime === "number",
    "gecko: meta has version, interval, startTime");
  check(Array.isArray(m.categories) && m.categories.every((c) => typeof c.name === "string" && typeof c.color === "string" && Array.isArray(c.subcategories)),
    "gecko: meta.categories are {name, color, subcategories}");
  check(Array.isArray(g.libs) && Array.isArray(g.threads) && g.threads.length > 0 && Array.isArray(g.processes),
    "gecko: libs, threads, processes");
  let ok = true, why = "", nsamples = 0;
  for (const t of g.threads) {
    const S = t.samples.schema, ST = t.stackTable.schema, F = t.frameTable.schema;
    if (![S.stack, S.time, ST.prefix, ST.frame, F.location, F.category].every(Number.isInteger)) { ok = false; why = "schema"; break; }
    if (typeof t.name !== "string" || t.tid === undefined || t.pid === undefined) { ok = false; why = "thread ids"; break; }
    let last = -Infinity;
    for (const row of t.samples.data) {
      const st = row[S.stack], tm = row[S.time];
      if (!(st === null || (st >= 0 && st < t.stackTable.data.length))) { ok = false; why = "sample stack " + st; }
      if (!(tm >= last)) { ok = false; why = "sample times not sorted"; }
      last = tm;
      nsamples++;
    }
    t.stackTable.data.forEach((row, i) => {
      const pre = row[ST.prefix], fr = row[ST.frame];
      if (!(pre === null || (pre >= 0 && pre < i))) { ok = false; why = "prefix " + pre + " at " + i; }
      if (!(fr >= 0 && fr < t.frameTable.data.length)) { ok = false; why = "frame " + fr; }
    });
    for (const row of t.frameTable.data) {
      const loc = row[F.location], cat = row[F.category];
      if (!(loc >= 0 && loc < t.stringTable.length)) { ok = false; why = "location " + loc; }
      if (!(cat >= 0 && cat < m.categories.length)) { ok = false; why = "category " + cat; }
    }
  }
  check(ok, "gecko: samples, stackTable, frameTable and stringTable are consistent", why);
  check(nsamples === Number(args.samples), "gecko: every sample is there", `${nsamples} vs ${args.samples}`);
  check(g.threads.some((t) => t.stringTable.some((l) => /^hot_loop_a \(in demo-workload\)$/.test(l))),
    "gecko: hot_loop_a is named as 'function (in library)'");
}

console.log(`${checks - failures} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
