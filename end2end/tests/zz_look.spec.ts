import * as fs from "fs";
import * as path from "path";
import { test, expect, hydrated } from "./fixtures";

const example = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(__dirname, "../../engine/examples/graphs", file), "utf8"));

for (const [w, h] of [[1440, 900], [1024, 700]]) {
  test(`look ${w}`, async ({ page }) => {
    await page.setViewportSize({ width: w, height: h });
    const doc = example("triage.json");
    const made = await page.request.post("/api/v1/graphs/import", { data: doc });
    const graph = (await made.json()).id;
    await page.goto(`/graphs/${graph}`);
    await hydrated(page);
    await page.getByTestId("chat-input").fill("I was charged twice");
    await page.getByTestId("chat-send").click();
    await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15000 });
    const runs = await (await page.request.get(`/api/v1/graphs/${graph}/runs`)).json();
    // A new version, then the old run opened from its link.
    const current = await (await page.request.get(`/api/v1/graphs/${graph}`)).json();
    current.document.name = "Triage v2";
    await page.request.put(`/api/v1/graphs/${graph}`, { data: { base_version: current.version, document: current.document } });
    await page.goto(`/graphs/${graph}?run=${runs[0].id}`);
    await hydrated(page);
    await page.getByTestId("run-version-toggle").click();
    await page.waitForTimeout(400);
    await page.screenshot({ path: `/tmp/look/notice-${w}.png` });
    // Problems split: a router without otherwise.
    await page.locator(".canvas-node").first().click();
    await page.screenshot({ path: `/tmp/look/after-${w}.png` });
  });
}
