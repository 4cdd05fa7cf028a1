// API keys, as a user makes and uses one: Settings makes a key for a
// graph (its secret shown once, with Copy), a script calls the published
// graph with it, the graph page lists the run labelled with the key, and
// Revoke ends it.
import { test, expect, hydrated, expectAccessible } from "./fixtures";

// Names of their own, so a retry in CI (which sees the first try's graph
// and key in the same database) finds only its own.
const TAG = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const GRAPH_NAME = `Keyed counter ${TAG}`;
const KEY_NAME = `e2e bot ${TAG}`;

const GRAPH = {
  format_version: 2,
  name: GRAPH_NAME,
  state: {
    channels: {
      count: { type: "integer", reducer: "sum" },
      topic: { type: "string" },
    },
  },
  nodes: [
    { id: "start", kind: "start", config: { inputs: ["topic", "count"] }, position: { x: 0, y: 0 } },
    { id: "tick", kind: "set", config: { values: { count: { value: 1 } } }, position: { x: 240, y: 0 } },
  ],
  edges: [{ id: "e1", from: "start", to: "tick" }],
};

test("make a key, call the published graph with it, see the run labelled, revoke it", async ({
  page,
  errors,
  playwright,
}) => {
  const imported = await page.request.post("/api/v1/graphs/import", { data: GRAPH });
  expect(imported.status()).toBe(201);
  const id = (await imported.json()).id;
  expect((await page.request.put(`/api/v1/graphs/${id}/published`, { data: { version: 1 } })).status()).toBe(200);

  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto("/settings");
  await hydrated(page);
  const create = page.getByRole("button", { name: "Create key" });
  await expect(create).toBeDisabled(); // no graph chosen yet
  await page.locator('input[name="key-name"]').fill(KEY_NAME);
  await page.locator(".key-graphs").getByLabel(GRAPH_NAME).check();
  await page.locator('select[name="key-expiry"]').selectOption({ label: "30 days" });
  await create.click();

  const secretField = page.getByLabel("The new key");
  await expect(secretField).toBeVisible();
  const secret = await secretField.inputValue();
  expect(secret).toMatch(/^heddle_[0-9a-f]{64}$/);
  const example = page.locator(".new-key-example");
  await expect(example).toContainText(`/api/v1/graphs/${id}/invoke`);
  // The example's body fills the graph's own inputs, and runs as it is.
  const body = JSON.parse(/-d '(.*)'$/s.exec((await example.textContent())!)![1]);
  expect(body).toEqual({ input: { topic: "your topic", count: 1 } });
  await expect(page.getByTestId("key-unpublished")).toHaveCount(0);
  const row = page.locator(".key-row", { hasText: KEY_NAME });
  await expect(row).toContainText("never used");
  await expect(row).toContainText("expires");
  await page.screenshot({ path: "../target/e2e/screens/api-keys-1440.png", fullPage: true });
  await expectAccessible(page, "settings with a new key");
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: "../target/e2e/screens/api-keys-1024.png", fullPage: true });
  await page.getByRole("button", { name: "Done" }).click();
  await expect(secretField).toHaveCount(0);

  // A script with the key: no cookies, just the bearer.
  const origin = new URL(page.url()).origin;
  const script = await playwright.request.newContext({
    baseURL: origin,
    extraHTTPHeaders: { Authorization: `Bearer ${secret}` },
  });
  const invoked = await script.post(`/api/v1/graphs/${id}/invoke`, { data: body });
  expect(invoked.status(), await invoked.text()).toBe(200);
  const answer = await invoked.json();
  expect(answer.status).toBe("finished");
  expect(answer.output.count).toBe(2); // the example's 1 and the node's 1

  // The graph page lists the run, labelled with the key.
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await page.getByRole("button", { name: "Graph settings" }).click();
  await page.locator(".history summary", { hasText: "Runs" }).click();
  await expect(page.locator(".run-list .origin-tag").first()).toHaveText(`API key “${KEY_NAME}”`);

  // Settings says it was used; Revoke (confirmed) ends it.
  await page.goto("/settings");
  await hydrated(page);
  await expect(row).toContainText("used");
  await expect(row).not.toContainText("never used");
  // The secret is nowhere on the page any more.
  expect(await page.content()).not.toContain(secret);
  page.once("dialog", (dialog) => dialog.accept());
  await row.getByRole("button", { name: "Revoke" }).click();
  await expect(row.locator(".key-status")).toHaveText("Revoked");
  await expect(row.getByRole("button", { name: "Revoke" })).toHaveCount(0);
  const refused = await script.post(`/api/v1/graphs/${id}/invoke`, { data: { input: {} } });
  expect(refused.status()).toBe(401);
  await script.dispose();
});
