// The live view under load (docs/performance.md): a graph whose script
// node prints 250 lines every quarter second (1,000 events a second, in
// bursts) for ten seconds, watched on its page with the event log open.
// Measures frame times with the browser's frame-rate limit off (so a
// frame lasts as long as its work, not the 16.7 ms refresh) and counts
// the events the page shows against the run's stored log.
import { test, Page } from "@playwright/test";

test.use({
  launchOptions: {
    executablePath: process.env.HEDDLE_CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-gpu-vsync",
      "--disable-frame-rate-limit",
    ],
  },
});

const LOUD = {
  format_version: 2,
  name: "Benchmark: 1,000 events a second",
  state: { channels: { n: { type: "integer", reducer: "sum" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    {
      id: "emit",
      kind: "script",
      config: { source: "for i in 0..250 { print(i); } #{ n: 1 }" },
      position: { x: 240, y: 0 },
    },
    { id: "pace", kind: "wait", config: { ms: 250 }, position: { x: 480, y: 0 } },
    { id: "end", kind: "end", position: { x: 720, y: 0 } },
  ],
  edges: [
    { id: "e1", from: "start", to: "emit" },
    { id: "e2", from: "emit", to: "pace" },
    { id: "again", from: "pace", to: "emit", condition: "n < 40" },
    { id: "done", from: "pace", to: "end", condition: "n >= 40" },
  ],
  limits: { max_steps: 1000 },
};

async function startFrames(page: Page) {
  await page.evaluate(() => {
    const w = window as any;
    w.__frames = [];
    w.__recording = true;
    const tick = (t: number) => {
      w.__frames.push(t);
      if (w.__recording) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

async function stopFrames(page: Page) {
  const times: number[] = await page.evaluate(() => {
    const w = window as any;
    w.__recording = false;
    return w.__frames;
  });
  const gaps = times.slice(1).map((t, i) => t - times[i]).sort((a, b) => a - b);
  const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))];
  return {
    frames: gaps.length,
    median: at(0.5),
    p95: at(0.95),
    max: gaps[gaps.length - 1],
    over16: gaps.filter((gap) => gap > 16).length,
  };
}

test("live view figures", async ({ page }) => {
  await page.goto("/login");
  await page.setViewportSize({ width: 1440, height: 900 });
  const signup = await page.request.post("/api/v1/auth/signup", {
    data: { username: "bench", password: "bench password" },
  });
  if (signup.status() !== 201) {
    await page.request.post("/api/v1/auth/login", {
      data: { username: "bench", password: "bench password" },
    });
  }
  const created = await page.request.post("/api/v1/graphs", { data: { document: LOUD } });
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await page.waitForFunction(() => document.documentElement.dataset.hydrated === "true");
  await page.getByRole("tab", { name: "Events" }).click();

  await startFrames(page);
  const started = Date.now();
  const run = await (await page.request.post(`/api/v1/graphs/${id}/runs`, { data: { input: {} } })).json();
  let status = "";
  while (status !== "finished" && status !== "failed") {
    await page.waitForTimeout(250);
    status = (await (await page.request.get(`/api/v1/runs/${run.id}`)).json()).status;
  }
  const events: any[] = await (await page.request.get(`/api/v1/runs/${run.id}/events`)).json();
  const stored = events.filter((e) => !(e.type === "custom" && e.name === "token")).length;
  // Every event shown: wait for the page to have them all (or give up).
  await page
    .waitForFunction(
      (n) => document.querySelector('[data-testid="run-panel"]')?.getAttribute("data-events") === String(n),
      stored,
      { timeout: 15_000 },
    )
    .catch(() => {});
  const seconds = (Date.now() - started) / 1000;
  const frames = await stopFrames(page);
  const shown = Number(await page.getByTestId("run-panel").getAttribute("data-events"));
  const fmt = (ms: number) => ms.toFixed(1);
  console.log(`live view: run ${status}, ${stored} events stored (${Math.round(stored / seconds)} a second over ${seconds.toFixed(1)} s)`);
  console.log(`live view: ${shown} of ${stored} events shown by the page`);
  console.log(
    `live view: ${frames.frames} frames, frame time median ${fmt(frames.median)} ms, p95 ${fmt(frames.p95)} ms, max ${fmt(frames.max)} ms, ${frames.over16} over 16 ms`,
  );
});
