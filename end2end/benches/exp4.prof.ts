import { test } from "@playwright/test";
import { bigGraph, signIn } from "./support";
test("html", async ({ page }) => {
  await signIn(page);
  const created = await page.request.post("/api/v1/graphs", { data: { document: bigGraph(500, 700) } });
  const { id } = await created.json();
  for (let i = 0; i < 3; i++) {
    const t = Date.now();
    const r = await page.request.get(`/graphs/${id}`);
    const body = await r.text();
    console.log(`RESULT html ${body.length} bytes in ${Date.now() - t} ms`);
  }
  const r = await page.request.get(`/graphs/${id}`);
  require("fs").writeFileSync("/tmp/page.html", await r.text());
});
