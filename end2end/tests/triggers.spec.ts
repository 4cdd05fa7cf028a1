// Triggers on the graph page, as an editor sets them up: a webhook (its
// URL shown once, then called by a sender with no session) whose run is
// listed labelled with it, and a schedule that shows its next times in
// its own time zone.
import { test, expect, hydrated } from "./fixtures";

const GRAPH = {
  format_version: 2,
  name: "Triggered counter",
  state: {
    channels: { count: { type: "integer", reducer: "sum" }, target: { type: "integer" } },
  },
  nodes: [
    { id: "start", kind: "start", config: { inputs: ["target"] }, position: { x: 0, y: 0 } },
    { id: "tick", kind: "set", config: { values: { count: { value: 1 } } }, position: { x: 240, y: 0 } },
  ],
  edges: [{ id: "e1", from: "start", to: "tick" }],
};

test("add a webhook and call it, add a schedule and see its next times", async ({
  page,
  errors,
  playwright,
}) => {
  const imported = await page.request.post("/api/v1/graphs/import", { data: GRAPH });
  expect(imported.status()).toBe(201);
  const id = (await imported.json()).id;
  expect((await page.request.put(`/api/v1/graphs/${id}/published`, { data: { version: 1 } })).status()).toBe(200);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);

  const triggers = page.locator("details.triggers");
  await triggers.locator(":scope > summary").click();
  await expect(triggers.getByText("No webhooks.")).toBeVisible();
  // The forms fold behind their buttons until asked for.
  await expect(triggers.locator('input[name="hook-name"]')).toBeHidden();
  await triggers.getByText("New webhook").click();
  await triggers.locator('input[name="hook-name"]').fill("Order form");
  await triggers.locator('textarea[name="hook-mapping"]').fill("target = /quantity");
  await triggers.getByRole("button", { name: "Add webhook" }).click();
  const urlField = triggers.getByLabel("The webhook's URL");
  await expect(urlField).toBeVisible();
  const url = await urlField.inputValue();
  expect(url).toMatch(/\/api\/v1\/hooks\/[0-9a-f]{64}$/);
  await expect(triggers.locator(".trigger-row", { hasText: "Order form" })).toContainText("input: target = /quantity");

  // A sender with no session calls it.
  const sender = await playwright.request.newContext();
  const called = await sender.post(url, { data: { quantity: 2 } });
  expect(called.status()).toBe(202);
  await sender.dispose();

  // A bad mapping line is caught before anything is sent.
  await triggers.locator('input[name="hook-name"]').fill("Broken");
  await triggers.locator('textarea[name="hook-mapping"]').fill("just a pointer");
  await triggers.getByRole("button", { name: "Add webhook" }).click();
  await expect(triggers.getByRole("alert")).toContainText("line 1: write `channel = /pointer`");

  await triggers.getByText("New schedule").click();
  await triggers.locator('input[name="schedule-name"]').fill("Weekday mornings");
  await triggers.locator('input[name="schedule-cron"]').fill("0 9 * * MON-FRI");
  await triggers.locator('input[name="schedule-zone"]').fill("Europe/Paris");
  await triggers.locator('textarea[name="schedule-input"]').fill('{"target": 3}');
  await triggers.getByRole("button", { name: "Add schedule" }).click();
  const next = triggers.locator(".trigger-row", { hasText: "Weekday mornings" }).getByTestId("next-time");
  await expect(next).toContainText("09:00:00");
  await expect(next).toContainText("Europe/Paris");
  await triggers.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../target/e2e/screens/triggers-1440.png" });

  // The webhook's run is listed, labelled.
  await page.reload();
  await hydrated(page);
  await page.locator(".history summary", { hasText: "Runs" }).click();
  await expect(page.locator(".run-list .origin-tag").first()).toHaveText("Webhook “Order form”");

  await page.setViewportSize({ width: 1024, height: 700 });
  // The canvas comes first at this width: the graph's settings are asked for.
  await page.getByRole("button", { name: "Graph settings" }).click();
  await page.locator("details.triggers > summary").click();
  await page.locator("details.triggers").scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../target/e2e/screens/triggers-1024.png" });
});

test("a trigger list that cannot be loaded says why, never that there are none", async ({ page }) => {
  // No `errors` fixture: the failed list requests log their 404s on purpose.
  const imported = await page.request.post("/api/v1/graphs/import", { data: GRAPH });
  const id = (await imported.json()).id;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  // Deleted in another tab while this page stays open.
  expect((await page.request.delete(`/api/v1/graphs/${id}`)).status()).toBe(204);

  const triggers = page.locator("details.triggers");
  await triggers.locator(":scope > summary").click();
  for (const plural of ["webhooks", "schedules", "chat widgets"]) {
    await expect(triggers.getByRole("alert").filter({ hasText: `The ${plural} could not be loaded` })).toContainText(
      "was not found",
    );
  }
  await expect(triggers.getByText("No webhooks.")).toHaveCount(0);
  await expect(triggers.getByText("No schedules.")).toHaveCount(0);
  await triggers.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../target/e2e/screens/triggers-unloaded-1440.png" });
});
