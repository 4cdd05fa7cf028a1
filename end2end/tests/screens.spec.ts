// Renders each screen in both themes and keeps the pictures under
// target/e2e/screens for people to look at; the pages must render without
// a single browser error.
import { test, hydrated } from "./fixtures";

for (const scheme of ["light", "dark"] as const) {
  test(`screens render cleanly (${scheme})`, async ({ page, errors }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 800 });
    const shot = (name: string) =>
      page.screenshot({ path: `../target/e2e/screens/${name}-${scheme}.png` });

    await page.goto("/");
    await hydrated(page);
    await shot("home");

    await page.goto("/graphs/not-a-graph");
    await shot("graph-missing");

    await page.goto("/no/such/page");
    await shot("not-found");

    await page.goto("/");
    await hydrated(page);
    await page.getByRole("button", { name: "New graph" }).first().click();
    await page.waitForURL(/\/graphs\//);
    await hydrated(page);
    await shot("graph");

    await page.goto("/");
    await hydrated(page);
    await page.getByRole("button", { name: /Approve before a tool runs/ }).click();
    await page.waitForURL(/\/graphs\//);
    await hydrated(page);
    await shot("graph-example");
  });
}
