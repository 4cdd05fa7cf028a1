// The foundation's promise: the app hydrates, "New graph" goes through a
// server function into SQLite, and the graph is there after a reload.
import { test, expect, hydrated } from "./fixtures";

test("a new graph is created, opened, and listed after a reload", async ({ page, errors }) => {
  await page.goto("/");
  await hydrated(page);
  await expect(page.getByRole("heading", { name: "Graphs", level: 1 })).toBeVisible();

  // A marker on `window` survives only client-side navigation: if it is
  // still there on the graph page, the hydrated app did the navigating.
  await page.evaluate(() => ((window as any).__heddleMarker = "same-document"));

  await page.getByRole("button", { name: "New graph" }).first().click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  const title = page.locator(".graph-title");
  await expect(title).toHaveText(/^Untitled graph \d+$/);
  const name = (await title.textContent()) ?? "";
  expect(await page.evaluate(() => (window as any).__heddleMarker)).toBe("same-document");
  await expect(page).toHaveTitle(`${name} · Heddle`);

  await page.goBack();
  await expect(page).toHaveURL(/\/$/);
  await page.reload();
  await hydrated(page);
  const row = page.locator(".graph-row", { hasText: name });
  await expect(row).toBeVisible();

  // The listed graph opens its page.
  await row.click();
  await expect(page.locator(".graph-title")).toHaveText(name);
  expect(errors).toEqual([]);
});

test("an unknown graph and an unknown page say so", async ({ page }) => {
  const missing = await page.goto("/graphs/00000000-0000-4000-8000-000000000000");
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Graph not found" })).toBeVisible();
  await expect(page).toHaveTitle("Graph not found · Heddle");

  const nowhere = await page.goto("/no/such/page");
  expect(nowhere?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await page.getByRole("link", { name: "Go to your graphs" }).click();
  await expect(page.getByRole("heading", { name: "Graphs", level: 1 })).toBeVisible();
});

test("an example from the gallery becomes a graph of one's own", async ({ page, errors }) => {
  await page.goto("/");
  await hydrated(page);
  const card = page.getByRole("button", { name: /ReAct agent with calculator and clock/ });
  await expect(card).toBeVisible();
  await card.click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await expect(page.locator(".graph-title")).toHaveText("ReAct agent with calculator and clock");
  // The canvas shows the graph: four nodes, four edges.
  await expect(page.locator(".canvas-node")).toHaveCount(4);
  await expect(page.locator(".editor-edge")).toHaveCount(4);
  await expect(page.getByText("This graph is empty")).toHaveCount(0);
  expect(errors).toEqual([]);
});
