// The live view under load (docs/performance.md): a graph whose script
// node prints 250 lines every quarter second (1,000 events a second, in
// bursts) for ten seconds, watched on its page with the event log open.
// Measures frame times with the browser's frame-rate limit off (so a
// frame lasts as long as its work, not the 16.7 ms refresh) and counts
// the events the page shows against the run's stored log.
import { test } from "@playwright/test";
import { openLoud, signIn, timeFrames } from "./support";

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

test("live view figures", async ({ page }) => {
  await signIn(page);
  const id = await openLoud(page);

  let status = "";
  let stored = 0;
  let seconds = 0;
  const frames = await timeFrames(page, 16, async () => {
    const started = Date.now();
    const run = await (await page.request.post(`/api/v1/graphs/${id}/runs`, { data: { input: {} } })).json();
    while (status !== "finished" && status !== "failed") {
      await page.waitForTimeout(250);
      status = (await (await page.request.get(`/api/v1/runs/${run.id}`)).json()).status;
    }
    const events: any[] = await (await page.request.get(`/api/v1/runs/${run.id}/events`)).json();
    stored = events.filter((e) => !(e.type === "custom" && e.name === "token")).length;
    // Every event shown: wait for the page to have them all (or give up).
    await page
      .waitForFunction(
        (n) => document.querySelector('[data-testid="run-panel"]')?.getAttribute("data-events") === String(n),
        stored,
        { timeout: 15_000 },
      )
      .catch(() => {});
    seconds = (Date.now() - started) / 1000;
  });
  const shown = Number(await page.getByTestId("run-panel").getAttribute("data-events"));
  const fmt = (ms: number) => ms.toFixed(1);
  console.log(`live view: run ${status}, ${stored} events stored (${Math.round(stored / seconds)} a second over ${seconds.toFixed(1)} s)`);
  console.log(`live view: ${shown} of ${stored} events shown by the page`);
  console.log(
    `live view: ${frames.frames} frames, frame time median ${fmt(frames.median)} ms, p95 ${fmt(frames.p95)} ms, max ${fmt(frames.max)} ms, ${frames.slow} over 16 ms`,
  );
});
