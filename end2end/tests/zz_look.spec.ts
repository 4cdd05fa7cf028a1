import { test, expect, hydrated, useExample } from "./fixtures";
test.use({ viewport: { width: 1024, height: 700 } });
test("look 1024", async ({ page }) => {
  await useExample(page, /Parallel research/);
  await page.waitForTimeout(800);
  const measure = () => page.evaluate(() => {
    const out: string[] = [`doc ${document.documentElement.scrollHeight} body ${document.body.scrollHeight}`];
    for (const el of Array.from(document.querySelectorAll("body *"))) {
      const r = el.getBoundingClientRect();
      if (r.bottom > 702 && r.height > 0 && getComputedStyle(el).position !== "fixed") {
        const parentOver = el.parentElement && el.parentElement.getBoundingClientRect().bottom > 702;
        if (!parentOver) out.push(`${el.tagName}.${el.className} bottom ${Math.round(r.bottom)} h ${Math.round(r.height)}`);
      }
    }
    return out.slice(0, 15).join("\n");
  });
  console.log("OPEN\n" + await measure());
  await page.getByTestId("chat-input").fill("How do heat pumps work?");
  await page.getByTestId("chat-input").press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20000 });
  console.log("AFTER RUN\n" + await measure());
  await page.getByRole("button", { name: "Graph settings" }).click();
  await page.waitForTimeout(500);
  console.log("SETTINGS\n" + await measure());
  await page.screenshot({ path: "/tmp/look/settings-1024.png" });
});
