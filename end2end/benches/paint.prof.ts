// A Chrome timeline trace (not a CPU profile) of opening, dragging and
// panning the 500-node, 700-edge graph, printed as the time the browser's
// threads spent per kind of work: script, style, layout, paint, raster,
// compositing. It splits what the CPU profile calls "(program)". Run it like
// drag.prof.ts (docs/performance.md, "Profiling the editor"). Prints; asserts nothing.
import { test, Page, Browser } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";
import { atTheStartOf2000, createBig, openBig, openLoud, panGesture, signIn, timeFrames } from "./support";

const CATEGORIES = [
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "disabled-by-default-devtools.timeline.frame",
  "blink",
  "cc",
  "gpu",
  "viz",
  "v8.execute",
  ...(process.env.HEDDLE_TRACE_MORE ? ["disabled-by-default-blink.debug", "disabled-by-default-cc.debug", "blink.debug", "disabled-by-default-cc.debug.display_items", "benchmark", "disabled-by-default-blink.invalidation"] : []),
].join(",");

/** The kinds of work printed, by the trace event that holds each. */
const PARTS: Record<string, string> = {
  script: "FunctionCall",
  microtasks: "RunMicrotasks",
  hit_test: "HitTest",
  style: "UpdateLayoutTree",
  layout: "Layout",
  paint: "Paint",
  layerize: "Layerize",
  raster: "RasterTask",
  draw: "SoftwareRenderer::DoDrawQuad",
  selection: "SelectionController::handleMouseDraggedEvent",
};

/** Complete events ("X") and begin/end pairs summed by thread and name, self time not separated. */
function summarise(trace: any, label: string) {
  const events: any[] = trace.traceEvents || trace;
  const threads = new Map<string, string>();
  for (const e of events) {
    if (e.ph === "M" && e.name === "thread_name") threads.set(`${e.pid}:${e.tid}`, e.args.name);
  }
  const totals = new Map<string, number>();
  const open = new Map<string, number[]>();
  for (const e of events) {
    const thread = threads.get(`${e.pid}:${e.tid}`) || `${e.tid}`;
    const key = `${thread} ${e.name}`;
    if (e.ph === "X" && typeof e.dur === "number") totals.set(key, (totals.get(key) || 0) + e.dur / 1000);
    else if (e.ph === "B") (open.get(key) || open.set(key, []).get(key)!).push(e.ts);
    else if (e.ph === "E") {
      const start = open.get(key)?.pop();
      if (start !== undefined) totals.set(key, (totals.get(key) || 0) + (e.ts - start) / 1000);
    }
  }
  const sum = (name: string) =>
    [...totals.entries()].filter(([k]) => k.endsWith(` ${name}`)).reduce((a, [, v]) => a + v, 0);
  const parts = Object.entries(PARTS).map(([part, name]) => `${part} ${sum(name).toFixed(0)}`);
  console.log(`--- ${label} (ms): ${parts.join(", ")}`);
  if (process.env.HEDDLE_TRACE_ALL) {
    for (const [k, v] of [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60)) {
      console.log(v.toFixed(1).padStart(9), k.slice(0, 140));
    }
  }
}

async function traced(browser: Browser, page: Page, label: string, during: () => Promise<void>) {
  await browser.startTracing(page, { categories: CATEGORIES.split(",") });
  await during();
  const buffer = await browser.stopTracing();
  if (process.env.HEDDLE_TRACE_DIR) fs.writeFileSync(path.join(process.env.HEDDLE_TRACE_DIR, `${label}.json`), buffer);
  summarise(JSON.parse(buffer.toString()), label);
}

test("trace open, drag and pan", async ({ page, browser }) => {
  await signIn(page);
  const id = await createBig(page);
  await traced(browser, page, "open", async () => {
    const started = Date.now();
    await openBig(page, id);
    console.log(`open ${Date.now() - started} ms`);
  });
  // An experiment's page change, applied before the gestures (HEDDLE_TRACE_PREPARE: a script).
  if (process.env.HEDDLE_TRACE_PREPARE) await page.evaluate(process.env.HEDDLE_TRACE_PREPARE);
  await page.waitForTimeout(500);
  if (process.env.HEDDLE_TRACE_LAYERS) {
    // The compositor's layers: how many, and the largest.
    const cdp = await page.context().newCDPSession(page);
    const layers: any[] = await new Promise((resolve) => {
      cdp.on("LayerTree.layerTreeDidChange", (event: any) => event.layers && resolve(event.layers));
      cdp.send("LayerTree.enable");
    });
    console.log(`layers: ${layers.length}`);
    for (const layer of layers.filter((l) => l.drawsContent).sort((a, b) => b.width * b.height - a.width * a.height).slice(0, 12)) {
      console.log(`  ${layer.width}x${layer.height} at ${layer.offsetX},${layer.offsetY} node ${layer.backendNodeId ?? "-"} paints ${layer.paintCount}`);
    }
    await cdp.send("LayerTree.disable");
  }
  const node = (await page.locator('.canvas-node[data-node="n0"]').boundingBox())!;
  await traced(browser, page, "drag", async () => {
    const drag = await timeFrames(page, 20, async () => {
      await page.mouse.move(node.x + 40, node.y + 20);
      await page.mouse.down();
      for (let i = 1; i <= 60; i++) await page.mouse.move(node.x + 40 + i * 3, node.y + 20 + i * 2);
      await page.mouse.up();
    });
    console.log("drag", JSON.stringify(drag));
  });
  // Pan as editor.bench.ts does.
  const gesture = await panGesture(page);
  await traced(browser, page, "pan", async () => {
    const pan = await timeFrames(page, 20, gesture);
    console.log("pan", JSON.stringify(pan));
  });
});

// Panning the 2,000-node graph at its start, traced: the main thread's
// tasks of over 12 ms, each with the work inside it by kind, to see what
// the frames over 20 ms that editor.bench.ts counts are spent on.
test("trace pan of 2,000 nodes, long tasks", async ({ page, browser }) => {
  test.setTimeout(600_000);
  const gesture = await atTheStartOf2000(page);
  await browser.startTracing(page, { categories: CATEGORIES.split(",") });
  const pan = await timeFrames(page, 20, gesture);
  const trace = JSON.parse((await browser.stopTracing()).toString());
  console.log("pan", JSON.stringify(pan));
  longTasks(trace, 12);
});

/** Prints the renderer main thread's tasks longer than `over` ms, with the
 * time of the events inside each by name (nested events counted in each). */
function longTasks(trace: any, over: number) {
  const events: any[] = trace.traceEvents || trace;
  const main = events.find((e) => e.ph === "M" && e.name === "thread_name" && e.args.name === "CrRendererMain");
  if (!main) return console.log("no main thread");
  const mine = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && typeof e.dur === "number");
  const tasks = mine.filter((e) => e.name === "ThreadControllerImpl::RunTask" || e.name === "RunTask");
  for (const task of tasks.filter((t) => t.dur / 1000 > over)) {
    const inside = new Map<string, number>();
    for (const e of mine) {
      if (e !== task && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur) {
        inside.set(e.name, (inside.get(e.name) || 0) + e.dur / 1000);
      }
    }
    const parts = [...inside.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([k, v]) => `${k} ${v.toFixed(1)}`);
    console.log(`task ${(task.dur / 1000).toFixed(1)} ms: ${parts.join(", ")}`);
  }
}

// The live view's frames (live.bench.ts's run), traced for five seconds of it.
test("trace the live view", async ({ page, browser }) => {
  await signIn(page);
  const id = await openLoud(page);
  await page.request.post(`/api/v1/graphs/${id}/runs`, { data: { input: {} } });
  await page.waitForTimeout(1000);
  await traced(browser, page, "live", async () => {
    const live = await timeFrames(page, 16, () => page.waitForTimeout(5000));
    console.log("live", JSON.stringify(live));
  });
});
