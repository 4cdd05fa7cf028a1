// Publishing, as an editor does it from the graph page: the bar says which
// version calls from outside run, one click publishes the newest save, the
// version history marks the live version and rolls back to an older one,
// and "Take offline" ends it.
import { test, expect, hydrated } from "./fixtures";

const GRAPH = (name: string) => ({
  format_version: 2,
  name,
  state: { channels: { count: { type: "integer", reducer: "sum" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    { id: "tick", kind: "set", config: { values: { count: { value: 1 } } }, position: { x: 240, y: 0 } },
  ],
  edges: [{ id: "e1", from: "start", to: "tick" }],
});

test("publish the newest save, roll back from the history, take the graph offline", async ({
  page,
  errors,
}) => {
  const imported = await page.request.post("/api/v1/graphs/import", { data: GRAPH("Published") });
  expect(imported.status()).toBe(201);
  const id = (await imported.json()).id;
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);

  const live = page.getByTestId("live-version");
  await expect(live).toHaveText("Not published");
  await page.getByTestId("publish").click();
  await expect(live).toHaveText("Live v1");
  // Nothing more to publish until there is a newer save.
  await expect(page.getByTestId("publish")).toHaveCount(0);
  expect((await (await page.request.get(`/api/v1/graphs/${id}/published`)).json()).published.version).toBe(1);

  // A teammate saves version 2; the page offers to publish it.
  const saved = await page.request.put(`/api/v1/graphs/${id}`, {
    data: { base_version: 1, document: GRAPH("Published, second") },
  });
  expect(saved.status()).toBe(200);
  await page.reload();
  await hydrated(page);
  await expect(live).toHaveText("Live v1");
  await expect(page.getByTestId("publish")).toHaveText("Publish v2");
  await page.screenshot({ path: "../target/e2e/screens/publish-bar-1440.png", clip: { x: 0, y: 0, width: 1440, height: 120 } });
  await page.getByTestId("publish").click();
  await expect(live).toHaveText("Live v2");

  // The history marks v2 live; publishing v1 there rolls back.
  await page.locator(".history summary", { hasText: "Version history" }).click();
  const v1 = page.locator('.version-row[data-version="1"]');
  const v2 = page.locator('.version-row[data-version="2"]');
  await expect(v2.getByTestId("live-marker")).toBeVisible();
  await v1.getByRole("button", { name: "Publish" }).click();
  await expect(live).toHaveText("Live v1");
  await expect(v1.getByTestId("live-marker")).toBeVisible();
  await expect(v2.getByTestId("live-marker")).toHaveCount(0);
  await page.screenshot({ path: "../target/e2e/screens/publish-history-1440.png" });

  await v1.getByRole("button", { name: "Take offline" }).click();
  await expect(live).toHaveText("Not published");
  expect((await (await page.request.get(`/api/v1/graphs/${id}/published`)).json()).published).toBeNull();

  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: "../target/e2e/screens/publish-1024.png" });
  expect(errors).toEqual([]);
});
