// CPU profiles of dragging a node of the 500-node, 700-edge graph, of
// opening it, and of five seconds of a loud live run, printed as the
// functions that took most time themselves, then time spent under a few
// parts of the editor. Run it on the debug site, whose wasm keeps its
// function names (docs/performance.md, "Profiling the editor"):
//   cargo xtask site && (cd end2end && npx playwright test --config playwright.profile.config.ts)
// or on the release bundle with its names kept (HEDDLE_WASM_NAMES=1 cargo xtask build --release,
// then HEDDLE_PROFILE_RELEASE=1); HEDDLE_PROFILE_OUT=file keeps the open's profile.
// "(program)" is the browser's own work: style, layout and paint.
import * as fs from "fs";
import { test, Page } from "@playwright/test";
import { atTheStartOf2000, createBig, openBig, openLoud, signIn, timeFrames } from "./support";

// At 60 Hz a frame is 16.7 ms: longer gaps are frames the page missed.
const frames = (page: Page, gesture: () => Promise<void>) => timeFrames(page, 20, gesture);

test("profile drag", async ({ page }) => {
  await signIn(page);
  const id = await createBig(page);
  await openBig(page, id);
  const node = (await page.locator('.canvas-node[data-node="n0"]').boundingBox())!;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const drag = await frames(page, async () => {
    await page.mouse.move(node.x + 40, node.y + 20);
    await page.mouse.down();
    for (let i = 1; i <= 60; i++) await page.mouse.move(node.x + 40 + i * 3, node.y + 20 + i * 2);
    await page.mouse.up();
  });
  const { profile } = await cdp.send("Profiler.stop");
  console.log(JSON.stringify(drag));
  printProfile(profile);
});

test("profile open", async ({ page }) => {
  await signIn(page);
  const id = await createBig(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const started = Date.now();
  await openBig(page, id);
  console.log(`open ${Date.now() - started} ms`);
  const { profile } = await cdp.send("Profiler.stop");
  // HEDDLE_PROFILE_OUT=file.cpuprofile keeps the profile (DevTools opens it).
  if (process.env.HEDDLE_PROFILE_OUT) fs.writeFileSync(process.env.HEDDLE_PROFILE_OUT, JSON.stringify(profile));
  printProfile(profile);
});

// Panning the 2,000-node graph at its start (issue 39: no frame over 20
// ms), as editor.bench.ts pans it: the window moves and nodes join and
// leave the page a few a frame. Prints the frames over 20 ms as well.
test("profile pan of 2,000 nodes", async ({ page }) => {
  test.setTimeout(600_000);
  const gesture = await atTheStartOf2000(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const pan = await frames(page, gesture);
  const { profile } = await cdp.send("Profiler.stop");
  if (process.env.HEDDLE_PROFILE_OUT) fs.writeFileSync(process.env.HEDDLE_PROFILE_OUT, JSON.stringify(profile));
  console.log(JSON.stringify(pan));
  printProfile(profile);
  printBusyStretches(profile, 15);
});

/** Prints each stretch of a CPU profile busy (not idle) for over `over` ms
 * without a break, with our functions inside it (inclusive): the long
 * tasks behind missed frames. */
function printBusyStretches(profile: any, over: number) {
  const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const dt: number[] = profile.timeDeltas || [];
  let t = profile.startTime;
  let stretch: { start: number; samples: [number, number][] } | null = null;
  const flush = (end: number) => {
    if (stretch && (end - stretch.start) / 1000 > over) {
      const ours = new Map<string, number>();
      for (const [s, d] of stretch.samples) {
        const seen = new Set<string>();
        for (let cur: number | undefined = s; cur !== undefined; cur = parent.get(cur)) {
          const name = (byId.get(cur).callFrame.functionName || "").replace(/::h[0-9a-f]{16}$/, "");
          const key = name.includes("heddle_app") ? name : name === "(program)" || name === "(garbage collector)" ? name : "";
          if (key && !seen.has(key)) {
            seen.add(key);
            ours.set(key, (ours.get(key) || 0) + d / 1000);
          }
        }
      }
      console.log(`busy ${((end - stretch.start) / 1000).toFixed(1)} ms:`);
      const self = new Map<string, number>();
      for (const [s, d] of stretch.samples) {
        const name = (byId.get(s).callFrame.functionName || "(anon)").replace(/::h[0-9a-f]{16}$/, "");
        self.set(name, (self.get(name) || 0) + d / 1000);
      }
      for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log("  self", v.toFixed(1).padStart(6), k.slice(0, 140));
      for (const [k, v] of [...ours.entries()].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(v.toFixed(1).padStart(8), k.slice(0, 150));
    }
    stretch = null;
  };
  (profile.samples || []).forEach((s: number, i: number) => {
    t += dt[i] || 0;
    const idle = byId.get(s).callFrame.functionName === "(idle)";
    if (idle) flush(t);
    else (stretch ??= { start: t, samples: [] }).samples.push([s, dt[i + 1] || 0]);
  });
  flush(t);
}

// The first drag's press and its drop, each profiled on its own: the two
// moments of a drag that do more than move a node (select it; commit the
// move and draw the inspector's form).
test("profile a drag's press and drop", async ({ page }) => {
  await signIn(page);
  const id = await createBig(page);
  await openBig(page, id);
  await page.waitForTimeout(500);
  const node = (await page.locator('.canvas-node[data-node="n0"]').boundingBox())!;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  const profiled = async (what: string, act: () => Promise<void>) => {
    await cdp.send("Profiler.start");
    await act();
    await page.waitForTimeout(300);
    const { profile } = await cdp.send("Profiler.stop");
    console.log(`--- ${what}`);
    printProfile(profile);
  };
  await page.mouse.move(node.x + 40, node.y + 20);
  await profiled("press", () => page.mouse.down());
  for (let i = 1; i <= 10; i++) await page.mouse.move(node.x + 40 + i * 3, node.y + 20 + i * 2);
  await profiled("drop", () => page.mouse.up());
});

// Five seconds of live.bench.ts's loud run (1,000 events a second, in
// bursts), watched with the event log open.
test("profile the live view", async ({ page }) => {
  await signIn(page);
  const id = await openLoud(page);
  await page.request.post(`/api/v1/graphs/${id}/runs`, { data: { input: {} } });
  await page.waitForTimeout(1000);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const live = await timeFrames(page, 16, () => page.waitForTimeout(5000));
  const { profile } = await cdp.send("Profiler.stop");
  console.log(JSON.stringify(live));
  printProfile(profile);
});

/** Prints where a CPU profile's time went: by function (self time), then under a few parts of the editor. */
function printProfile(profile: any) {
  const self = new Map<string, number>();
  const dt = profile.timeDeltas || [];
  const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
  (profile.samples || []).forEach((s: number, i: number) => {
    const n = byId.get(s);
    const name = n.callFrame.functionName || n.callFrame.url || "(anon)";
    self.set(name, (self.get(name) || 0) + (dt[i] || 0) / 1000);
  }
);
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 45);
  for (const [name, ms] of top) console.log(ms.toFixed(1).padStart(8), name.slice(0, 160));
  // Inclusive time under functions whose names hold these words.
  const keys = ["hydrate", "Hydrate", "from_document", "validate", "problems", "fit", "deserialize", "loop_routes", "edge_route", "routing", "minimap", "Minimap", "forward_edge", "loops", "Memo", "memo", "set_attribute", "pointermove", "Effect", "RenderEffect", "drop_in_place", "PartialEq", "dlmalloc", "hash"];
  const total = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  (profile.samples || []).forEach((s: number, i: number) => {
    const seen = new Set<string>();
    let cur: number | undefined = s;
    while (cur !== undefined) {
      const name = byId.get(cur).callFrame.functionName || "";
      for (const key of keys) {
        if (name.includes(key) && !seen.has(key)) {
          seen.add(key);
          total.set(key, (total.get(key) || 0) + (dt[i] || 0) / 1000);
        }
      }
      cur = parent.get(cur);
    }
  });
  console.log("inclusive:");
  for (const [k, v] of [...total.entries()].sort((a, b) => b[1] - a[1])) console.log(v.toFixed(1).padStart(8), k);
  // Inclusive time of our own functions (heddle_app), the largest first.
  const ours = new Map<string, number>();
  (profile.samples || []).forEach((s: number, i: number) => {
    const seen = new Set<string>();
    for (let cur: number | undefined = s; cur !== undefined; cur = parent.get(cur)) {
      const name = (byId.get(cur).callFrame.functionName || "").replace(/::h[0-9a-f]{16}$/, "");
      if (name.includes("heddle_app") && !seen.has(name)) {
        seen.add(name);
        ours.set(name, (ours.get(name) || 0) + (dt[i] || 0) / 1000);
      }
    }
  });
  console.log("ours, inclusive:");
  for (const [k, v] of [...ours.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(v.toFixed(1).padStart(8), k.slice(0, 150));
}
