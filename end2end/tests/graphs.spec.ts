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

  // The menu closes on Escape and on a click outside it, as menus do.
  const menu = page.locator(".new-graph-menu").first();
  await page.getByRole("button", { name: "New graph" }).first().click();
  await expect(menu).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(menu).toBeHidden();
  await page.getByRole("button", { name: "New graph" }).first().click();
  await expect(menu).toBeVisible();
  await page.getByRole("heading", { name: "Graphs", level: 1 }).click();
  await expect(menu).toBeHidden();
  await page.getByRole("button", { name: "New graph" }).first().click();
  await page.getByRole("button", { name: /^Empty graph/ }).first().click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  const title = page.locator(".graph-title");
  await expect(title).toHaveText(/^Untitled graph \d+$/);
  // Empty, it waits for a first kind: the palette's search has the focus.
  await expect(page.getByLabel("Search node kinds")).toBeFocused();
  const name = (await title.textContent()) ?? "";
  expect(await page.evaluate(() => (window as any).__heddleMarker)).toBe("same-document");
  await expect(page).toHaveTitle(`${name} · Heddle`);

  await page.goBack();
  await expect(page).toHaveURL(/\/$/);
  await page.reload();
  await hydrated(page);
  const row = page.locator(".graph-row", {
    has: page.locator(".graph-row-name", { hasText: new RegExp(`^${name}$`) }),
  });
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
  const card = page.locator("#gallery").getByRole("button", { name: /ReAct agent with calculator and clock/ });
  await expect(card).toBeVisible();
  // Other tests run beside this one: what it sees of the server is its
  // own requests, not the number of graphs.
  const posted: string[] = [];
  const onRequest = (request: { method(): string; url(): string }) => {
    if (request.method() !== "GET") posted.push(request.url());
  };
  page.on("request", onRequest);
  await card.click();
  // A preview first: nothing is copied until asked for.
  const preview = page.getByRole("dialog");
  await expect(preview).toContainText("ReAct agent with calculator and clock");
  await expect(preview.locator("svg")).toBeVisible();
  // The focus moves into the dialog, so the keyboard goes on from there.
  await expect(preview.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.screenshot({ path: "../target/e2e/screens/example-preview-light.png" });
  await page.keyboard.press("Escape");
  await expect(preview).toHaveCount(0);
  page.off("request", onRequest);
  expect(posted, "previewing an example sends nothing that could make a graph").toEqual([]);
  await card.click();
  await preview.getByRole("button", { name: "Use this example" }).click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  const id = page.url().split("/").pop();
  const graphs = await (await page.request.get("/api/v1/graphs")).json();
  expect(graphs.filter((graph: { id: string }) => graph.id === id)).toHaveLength(1);
  await expect(page.locator(".graph-title")).toHaveText("ReAct agent with calculator and clock");
  // The canvas shows the graph: four nodes, four edges.
  await expect(page.locator(".canvas-node")).toHaveCount(4);
  await expect(page.locator(".editor-edge")).toHaveCount(4);
  await expect(page.getByText("This graph is empty")).toHaveCount(0);
  expect(errors).toEqual([]);
});

test("import an example with its report, export it, and find the same graph", async ({ page, errors }) => {
  const fs = await import("fs");
  const path = await import("path");
  const text = fs.readFileSync(path.resolve(__dirname, "../../engine/examples/graphs/router.json"), "utf8");
  const original = JSON.parse(text);
  await page.goto("/");
  await hydrated(page);
  await page.getByRole("button", { name: "Import" }).click();
  // Checked as it comes, with no button to press for it.
  await page.locator('textarea[name="import-json"]').fill(text);
  await expect(page.getByRole("button", { name: "Check", exact: true })).toHaveCount(0);
  const report = page.getByTestId("import-report");
  await expect(report).toContainText("Support router");
  await expect(report).toContainText(`${original.nodes.length} nodes, ${original.edges.length} edges`);
  await expect(report).toContainText("No problems.");
  await page.screenshot({ path: "../target/e2e/screens/import-light.png" });
  await page.getByRole("button", { name: "Import", exact: true }).last().click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await hydrated(page);
  await expect(page.locator(".canvas-node")).toHaveCount(original.nodes.length);

  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export" }).click();
  const file = await (await download).path();
  const exported = JSON.parse(fs.readFileSync(file!, "utf8"));
  const shape = (graph: any) => ({
    name: graph.name,
    description: graph.description ?? "",
    state: graph.state,
    nodes: graph.nodes.map((n: any) => ({ id: n.id, kind: n.kind, label: n.label ?? "", config: n.config ?? {} })),
    edges: graph.edges.map((e: any) => ({ id: e.id, from: e.from, to: e.to, condition: e.condition, route: e.route })),
  });
  expect(shape(exported)).toEqual(shape(original));

  // Pasted and imported at once, before its report came: one press.
  await page.goto("/");
  await hydrated(page);
  await page.getByRole("button", { name: "Import" }).click();
  await page.locator('textarea[name="import-json"]').fill(JSON.stringify({ ...original, name: "Pasted at once" }));
  await page.getByRole("button", { name: "Import", exact: true }).last().click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Pasted at once");

  // One naming a credential not saved is not created at that press: the
  // report says which, and Import waits for it.
  await page.goto("/");
  await hydrated(page);
  await page.getByRole("button", { name: "Import" }).click();
  const keyed = {
    ...original,
    name: "Keyed",
    nodes: original.nodes.map((n: any) => (n.kind === "router" ? { ...n, config: { ...n.config, credential: "nobody_saved_this" } } : n)),
  };
  await page.locator('textarea[name="import-json"]').fill(JSON.stringify(keyed));
  await page.getByRole("button", { name: "Import", exact: true }).last().click();
  await expect(page.getByTestId("import-report")).toContainText("It names credentials you have not saved: nobody_saved_this");
  await expect(page.getByRole("button", { name: "Import", exact: true }).last()).toBeDisabled();
  const listed = await (await page.request.get("/api/v1/graphs")).json();
  expect(listed.map((graph: { name: string }) => graph.name)).toContain("Pasted at once");
  expect(listed.map((graph: { name: string }) => graph.name)).not.toContain("Keyed");
  expect(errors).toEqual([]);
});

test("the list searches, sorts, renames and deletes (with a confirmation)", async ({ page, errors }) => {
  for (const name of ["Zebra pipeline", "Alpha agent"]) {
    const created = await page.request.post("/api/v1/graphs", { data: { name } });
    expect(created.status()).toBe(201);
  }
  await page.goto("/");
  await hydrated(page);
  await page.getByLabel("Search graphs").fill("zebra");
  await expect(page.locator(".graph-row")).toHaveCount(1);
  await page.getByLabel("Search graphs").fill("");
  await page.locator(".list-sort select").selectOption("name");
  const names = await page.locator(".graph-row-name").allTextContents();
  expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));

  const row = page.locator(".graph-row", { hasText: "Zebra pipeline" });
  await row.getByRole("button", { name: "Rename" }).click();
  await page.getByLabel("New name").fill("Zebra pipeline v2");
  await page.getByRole("button", { name: "Save name" }).click();
  await expect(page.locator(".graph-row-name", { hasText: "Zebra pipeline v2" })).toBeVisible();

  const renamed = page.locator(".graph-row", { hasText: "Zebra pipeline v2" });
  await renamed.getByRole("button", { name: "Delete" }).click();
  await expect(page.getByRole("dialog", { name: "Delete graph" })).toContainText("cannot be undone");
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(renamed).toHaveCount(1);
  await renamed.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("button", { name: "Delete graph" }).click();
  await expect(page.locator(".graph-row", { hasText: "Zebra pipeline v2" })).toHaveCount(0);
  expect(errors).toEqual([]);
});

test.describe("away from UTC", () => {
  test.use({ timezoneId: "Asia/Kolkata" });

  test("times read as how long ago, exact in the person's own time zone and in UTC in their tooltip", async ({ page, errors }) => {
    const created = await page.request.post("/api/v1/graphs", { data: { name: "Kolkata clock" } });
    expect(created.status()).toBe(201);
    const { updated_at: at } = await created.json();
    // Kolkata is UTC+05:30 all year.
    const there = new Date(new Date(at).getTime() + 330 * 60_000).toISOString();
    await page.goto("/");
    await hydrated(page);
    const time = page.locator(".graph-row", { hasText: "Kolkata clock" }).locator("time");
    // Just made: it says so; the exact time, local then UTC, is its tooltip.
    await expect(time).toHaveText("just now");
    await expect(time).toHaveAttribute(
      "title",
      `${there.slice(0, 10)} ${there.slice(11, 16)} (${at.slice(0, 10)} ${at.slice(11, 16)} UTC)`,
    );
    await expect(time).toHaveAttribute("datetime", at);
    expect(errors).toEqual([]);
  });
});

test("an import's report says a problem of many nodes once, their ids as code", async ({ page, errors }) => {
  // A chain of 12 whose 5th edge is missing: 7 nodes no path reaches.
  const nodes = [
    { id: "start", kind: "start", config: { inputs: ["count"] } },
    ...Array.from({ length: 12 }, (_, i) => ({ id: `step_${i + 1}`, kind: "set", config: { values: { count: { expr: "count + 1" } } } })),
    { id: "end", kind: "end" },
  ];
  const ids = nodes.map((node) => node.id);
  const edges = ids.slice(1).map((to, i) => ({ id: `e${i}`, from: ids[i], to })).filter((_, i) => i !== 5);
  const graph = { format_version: 3, name: "Cut chain", state: { channels: { count: { type: "number", reducer: "replace" } } }, nodes, edges };
  await page.goto("/");
  await hydrated(page);
  await page.getByRole("button", { name: "Import" }).click();
  await page.locator('textarea[name="import-json"]').fill(JSON.stringify(graph));
  const report = page.getByTestId("import-report");
  const unreached = report.locator("li", { hasText: "can never run" });
  // One line, not one for each of the 8 nodes after the cut.
  await expect(unreached).toHaveCount(1);
  await expect(unreached).toHaveText(/^step_6, step_7, step_8 and \d+ more: can never run: no path leads to it from the entry$/);
  await expect(unreached.locator("code").first()).toHaveText("step_6");
  expect(errors).toEqual([]);
});
