import { test, expect, hydrated, place } from "./fixtures";
for (const [w, h] of [[1440, 900], [1024, 700]]) {
  test(`look ${w}`, async ({ page }) => {
    await page.setViewportSize({ width: w, height: h });
    const created = await page.request.post("/api/v1/graphs", { data: {} });
    await page.goto(`/graphs/${(await created.json()).id}`);
    await hydrated(page);
    const canvas = (await page.locator(".editor-canvas").boundingBox())!;
    await place(page, "start", canvas.x + 150, canvas.y + canvas.height / 2);
    await place(page, "llm", canvas.x + 420, canvas.y + canvas.height / 2 + 100);
    await page.locator('.canvas-node[data-node="llm"]').click();
    await page.getByRole("button", { name: "Note", exact: true }).click();
    await page.keyboard.type("Keep answers short: two sentences at most.");
    await page.getByRole("button", { name: "Layout" }).click();
    await page.waitForTimeout(500);
    await page.screenshot({ path: `/tmp/look/note-${w}.png` });
  });
}
