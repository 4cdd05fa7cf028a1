// Renders each screen in both themes and keeps the pictures under
// target/e2e/screens for people to look at; the pages must render without
// a single browser error.
import { test, hydrated, useExample } from "./fixtures";

for (const scheme of ["light", "dark"] as const) {
  test(`screens render cleanly (${scheme})`, async ({ page, browser, errors }) => {
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
    await shot("new-graph-menu");
    await page.getByRole("button", { name: /^Chat agent/ }).first().click();
    await page.waitForURL(/\/graphs\//);
    await hydrated(page);
    await shot("graph");

    await useExample(page, /Approve before a tool runs/);
    await shot("graph-example");

    await page.request.put("/api/v1/secrets/openai", { data: { value: "sk-not-shown" } });
    await page.goto("/settings");
    await hydrated(page);
    await page.locator(".secret-name", { hasText: "openai" }).waitFor();
    await shot("settings");

    // Logged out: the log-in page.
    const visitor = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    const login = await visitor.newPage();
    await login.emulateMedia({ colorScheme: scheme });
    await login.setViewportSize({ width: 1280, height: 800 });
    await login.goto("/graphs/x");
    await hydrated(login);
    await login.screenshot({ path: `../target/e2e/screens/login-${scheme}.png` });
    await visitor.close();
  });
}
