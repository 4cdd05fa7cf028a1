// The editor, used with the mouse like a person: drag kinds from the
// palette, connect them, write a prompt, undo and redo, reload and find it
// all saved; copy and paste between graphs; a conflict with a teammate's
// save is shown with a choice, never overwritten.
import { test, expect, hydrated, place, useExample, chainOfSteps } from "./fixtures";
import { Page } from "@playwright/test";

async function newGraph(page: Page): Promise<string> {
  const created = await page.request.post("/api/v1/graphs", { data: {} });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  return id;
}


/** Drags from a node's output dot onto another node. */
async function connect(page: Page, from: string, to: string) {
  const port = page.locator(`.canvas-node[data-node="${from}"] .port-out`);
  const target = page.locator(`.canvas-node[data-node="${to}"]`);
  const a = (await port.boundingBox())!;
  const b = (await target.boundingBox())!;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
  await page.mouse.up();
}

const saved = (page: Page) => expect(page.getByTestId("save-status")).toHaveText("Saved");

test("a kind dropped at the canvas's edge, beside the palette, lands whole in sight", async ({ page, errors }) => {
  await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  // Dropped 6 px inside the left edge, near the foot: centred on the
  // pointer, most of it would be under the palette and the edge.
  await place(page, "set", canvas.x + 6, canvas.y + canvas.height - 6);
  const node = page.locator(".canvas-node").first();
  await expect(node).toHaveCount(1);
  const box = (await node.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(canvas.x);
  expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height);
  expect(errors).toEqual([]);
});

test("build a graph with the mouse, undo and redo, and find it saved after a reload", async ({ page, errors }) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "start", canvas.x + 150, canvas.y + 250);
  await place(page, "llm", canvas.x + 450, canvas.y + 250);
  await expect(page.locator(".canvas-node")).toHaveCount(2);
  await connect(page, "start", "llm");
  await expect(page.locator(".editor-edge")).toHaveCount(1);

  // An invalid connection is refused while dragging, with the reason.
  const port = page.locator('.canvas-node[data-node="llm"] .port-out');
  const startNode = page.locator('.canvas-node[data-node="start"]');
  const a = (await port.boundingBox())!;
  const b = (await startNode.boundingBox())!;
  await page.mouse.move(a.x + 5, a.y + 5);
  await page.mouse.down();
  await page.mouse.move(b.x + 60, b.y + 20, { steps: 6 });
  await expect(page.locator(".editor-wire-reason")).toHaveText("nothing leads into a start node");
  await page.mouse.up();
  await expect(page.locator(".editor-edge")).toHaveCount(1);

  // The prompt, in the inspector.
  await page.locator('.canvas-node[data-node="llm"]').click();
  await expect(page.getByRole("heading", { name: "llm", exact: true })).toBeVisible();
  const prompt = page.locator('textarea[name="config.prompt"]');
  await prompt.fill("Say hello to {{ name }}.");
  await prompt.press("Tab");
  await saved(page);

  // Undo takes the prompt back, redo brings it again.
  await page.locator(".editor-canvas").click({ position: { x: 150, y: 520 } });
  await page.keyboard.press("Control+z");
  await page.locator('.canvas-node[data-node="llm"]').click();
  await expect(page.locator('textarea[name="config.prompt"]')).toHaveValue("");
  await page.locator(".editor-canvas").click({ position: { x: 150, y: 520 } });
  await page.keyboard.press("Control+y");
  await page.locator('.canvas-node[data-node="llm"]').click();
  await expect(page.locator('textarea[name="config.prompt"]')).toHaveValue("Say hello to {{ name }}.");
  await saved(page);
  await page.screenshot({ path: "../target/e2e/screens/editor-light.png" });

  await page.reload();
  await hydrated(page);
  await expect(page.locator(".canvas-node")).toHaveCount(2);
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  await page.locator('.canvas-node[data-node="llm"]').click();
  await expect(page.locator('textarea[name="config.prompt"]')).toHaveValue("Say hello to {{ name }}.");
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.nodes.map((n: any) => n.kind)).toEqual(["start", "llm"]);
  expect(stored.document.edges).toEqual([{ id: "e1", from: "start", to: "llm" }]);
  expect(errors).toEqual([]);
});

test("a node's problems show on it and in the list; clicking one selects the node", async ({ page, errors }) => {
  await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "router", canvas.x + 300, canvas.y + 250);
  // A router needs routes: the engine's validator says so, here.
  await expect(page.locator('.canvas-node[data-node="router"] .canvas-node-problems')).toBeVisible();
  const count = Number(await page.getByTestId("problem-count").textContent());
  expect(count).toBeGreaterThan(0);
  await page.locator(".editor-canvas").click({ position: { x: 150, y: 520 } });
  await page.locator(".problem").first().click();
  await expect(page.locator('.canvas-node[data-node="router"]')).toHaveClass(/selected/);
});

test("copy in one graph, paste in another", async ({ page, context, errors }) => {
  await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "wait", canvas.x + 300, canvas.y + 250);
  await page.locator('.canvas-node[data-node="wait"]').click();
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.keyboard.press("Control+c");
  await saved(page);

  const other = await context.newPage();
  await newGraph(other);
  await other.locator(".editor-canvas").click({ position: { x: 400, y: 400 } });
  await other.keyboard.press("Control+v");
  const pasted = other.locator('.canvas-node[data-node="wait"]');
  await expect(pasted).toHaveCount(1);
  await expect(other.getByTestId("save-status")).toHaveText("Saved");
  // It lands where the pointer is, not where it was in the first graph.
  const area = (await other.locator(".editor-canvas").boundingBox())!;
  const box = (await pasted.boundingBox())!;
  expect(Math.abs(box.x - (area.x + 400))).toBeLessThan(4);
  expect(Math.abs(box.y - (area.y + 400))).toBeLessThan(4);
  // Pasted again, a readable id beside the first.
  await other.mouse.move(area.x + 150, area.y + 150);
  await other.keyboard.press("Control+v");
  await expect(other.locator('.canvas-node[data-node="wait_2"]')).toHaveCount(1);
});

// (The refused save logs a 409 in the console: that is the point.)
test("a teammate's save is a conflict with a choice, never overwritten", async ({ page, browser }) => {
  const id = await newGraph(page);
  // A teammate (here: the owner in another browser) saves first.
  const state = await page.context().storageState();
  const second = await (await browser.newContext({ storageState: state })).newPage();
  const current = await (await second.request.get(`/api/v1/graphs/${id}`)).json();
  const theirs = { ...current.document, name: "Their name" };
  const put = await second.request.put(`/api/v1/graphs/${id}`, {
    data: { base_version: current.version, document: theirs },
  });
  expect(put.status()).toBe(200);

  // Our edit, based on the old version, does not overwrite theirs.
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "set", canvas.x + 300, canvas.y + 250);
  await expect(page.getByTestId("conflict")).toBeVisible();
  await expect(page.getByTestId("save-status")).toHaveText(/Conflict with version 2/);
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.name).toBe("Their name");
  expect(stored.document.nodes ?? []).toEqual([]);
  await page.screenshot({ path: "../target/e2e/screens/editor-conflict-light.png" });

  // Keep mine as a copy: a new graph with my node; theirs untouched.
  await page.getByRole("button", { name: "Keep mine as a copy" }).click();
  await expect(page).not.toHaveURL(new RegExp(id));
  await hydrated(page);
  await expect(page.locator('.canvas-node[data-node="set"]')).toHaveCount(1);
  await expect(page.locator(".graph-title")).toHaveText(/\(my copy\)$/);
});

test("an edit made while a slow save is out goes in the next save, never a conflict with oneself", async ({ page }) => {
  const id = await newGraph(page);
  // The first save takes 2.5 s to come back: longer than the 800 ms after
  // which the next edit's save is due.
  let held = true;
  await page.route("**/api/save_graph", async (route) => {
    if (held) {
      held = false;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
    }
    await route.continue();
  });
  // The held save is the one without the second node.
  const slowBack = page.waitForResponse(
    (response) => response.url().includes("/api/save_graph") && !(response.request().postData() ?? "").includes('"ask"'),
  );
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "set", canvas.x + 200, canvas.y + 250);
  await expect(page.getByTestId("save-status")).toHaveText("Saving…");
  await place(page, "ask", canvas.x + 500, canvas.y + 250);
  // The slow one back (a second save sent meanwhile, on the same base
  // version, made it a conflict), and what it answered acted on.
  expect((await slowBack).status()).toBe(200);
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  // Both saved, one after the other; no conflict was ever shown.
  await saved(page);
  await expect(page.getByTestId("conflict")).toHaveCount(0);
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.nodes.map((n: any) => n.id).sort()).toEqual(["ask", "set"]);
  await page.unroute("**/api/save_graph");
});

test("an unsaved edit survives a reload (kept in the browser)", async ({ page }) => {
  const id = await newGraph(page);
  // The server is unreachable for saves: the edit stays a draft.
  await page.route("**/api/save_graph", (route) => route.abort());
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "ask", canvas.x + 300, canvas.y + 250);
  await expect(page.getByTestId("save-status")).toHaveText(/Not saved/);
  await page.unroute("**/api/save_graph");
  page.once("dialog", (dialog) => dialog.accept());
  await page.reload();
  await hydrated(page);
  await expect(page.locator('.canvas-node[data-node="ask"]')).toHaveCount(1);
  await saved(page);
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.nodes.map((n: any) => n.id)).toEqual(["ask"]);
});

test("text typed in a field, the page reloaded before it was left, is kept", async ({ page }) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "ask", canvas.x + 300, canvas.y + 250);
  await saved(page);
  await page.locator('.canvas-node[data-node="ask"]').click();
  // Typed, the focus still in the field (a field applies as it is left):
  // the page going applies it, into the draft, saved when it opens again.
  await page.locator('.inspector input[name="label"]').fill("Typed, never left");
  page.once("dialog", (dialog) => dialog.accept());
  await page.reload();
  await hydrated(page);
  await expect(page.locator('.canvas-node[data-node="ask"] .canvas-node-label')).toHaveText("Typed, never left");
  await saved(page);
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.nodes[0].label).toBe("Typed, never left");
});

test("what is typed in a node's field says Unsaved at once, and is saved once the typing rests, the focus kept", async ({
  page,
  errors,
}) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "llm", canvas.x + 300, canvas.y + 250);
  await saved(page);
  await page.locator(".canvas-node.kind-llm").click();
  const system = page.getByRole("textbox", { name: "System" });
  await system.click();
  await page.keyboard.type("Be brief.");
  // The first keys already count as a change.
  await expect(page.getByTestId("save-status")).toHaveText("Unsaved changes");
  // Rested, it is applied and saved, and the field keeps the focus.
  await saved(page);
  await expect(system).toBeFocused();
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  expect((await stored()).nodes.find((node: any) => node.kind === "llm").config.system).toBe("Be brief.");
  // Typing on goes on where the caret was.
  await page.keyboard.type(" Always.");
  await expect(page.getByTestId("save-status")).toHaveText("Unsaved changes");
  await saved(page);
  await expect(system).toHaveValue("Be brief. Always.");
  expect((await stored()).nodes.find((node: any) => node.kind === "llm").config.system).toBe("Be brief. Always.");
  expect(errors).toEqual([]);
});

test("a node dropped just before a reload stays where it was dropped", async ({ page }) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "ask", canvas.x + 300, canvas.y + 250);
  await saved(page);
  const positionOf = async () =>
    (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document.nodes[0].position;
  const placed = await positionOf();
  // Saves fail, and the page reloads the moment the node is dropped: the
  // draft is written when the page is left if it was not yet.
  await page.route("**/api/save_graph", (route) => route.abort());
  const node = (await page.locator('.canvas-node[data-node="ask"]').boundingBox())!;
  await page.mouse.move(node.x + 40, node.y + 20);
  await page.mouse.down();
  await page.mouse.move(node.x + 160, node.y + 100, { steps: 6 });
  await page.mouse.up();
  page.once("dialog", (dialog) => dialog.accept());
  await page.reload();
  await page.unroute("**/api/save_graph");
  await hydrated(page);
  await saved(page);
  const dropped = await positionOf();
  expect(dropped.x).toBeGreaterThan(placed.x + 50);
  expect(dropped.y).toBeGreaterThan(placed.y + 30);
});

test("text typed in the graph's fields is kept when the next click is on the canvas", async ({
  page,
  errors,
}) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  // Typed, then straight to the canvas: no Tab, no Enter.
  await page.locator('textarea[name="graph-description"]').fill("Answers billing questions");
  await page.mouse.click(canvas.x + 400, canvas.y + 300);
  await saved(page);
  await page.locator('input[name="graph-name"]').fill("Billing helper");
  await place(page, "ask", canvas.x + 300, canvas.y + 250);
  await page.locator('.canvas-node[data-node="ask"]').click();
  await saved(page);
  // What is kept of its runs: one of the two set, the other the server's.
  await page.mouse.click(canvas.x + 20, canvas.y + canvas.height - 20);
  const kept = page.locator('input[name="keep_checkpoints"]');
  await kept.scrollIntoViewIfNeeded();
  await kept.fill("3");
  await page.mouse.click(canvas.x + 20, canvas.y + canvas.height - 20);
  await saved(page);
  await kept.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../target/e2e/screens/graph-retention-light.png" });
  await page.setViewportSize({ width: 1024, height: 700 });
  await kept.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../target/e2e/screens/graph-retention-1024-light.png" });
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.description).toBe("Answers billing questions");
  expect(stored.document.name).toBe("Billing helper");
  expect(stored.document.retention).toEqual({ keep_checkpoints: 3 });
  expect(errors).toEqual([]);
});

test("every field of every kind's form keeps what was typed when the next click is on the canvas", async ({
  page,
  errors,
}) => {
  test.setTimeout(240_000);
  const id = await newGraph(page);
  await page.setViewportSize({ width: 1440, height: 900 });
  const kinds = await page.locator(".palette-item").evaluateAll((items) => items.map((item) => item.getAttribute("data-kind")!));
  expect(kinds.length).toBeGreaterThanOrEqual(16);
  // One node of each kind, dropped from the palette as a person does, then
  // laid out (L) so that none covers another.
  let canvas = (await page.locator(".editor-canvas").boundingBox())!;
  for (const [i, kind] of kinds.entries()) {
    await place(page, kind, canvas.x + 120 + (i % 4) * 200, canvas.y + 90 + Math.floor(i / 4) * 110);
  }
  await expect(page.locator(".canvas-node")).toHaveCount(kinds.length);
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("l");
  canvas = (await page.locator(".editor-canvas").boundingBox())!;
  const nodes = await page.locator(".canvas-node").evaluateAll((all) => all.map((node) => node.getAttribute("data-node")!));
  const inspector = page.locator(".inspector");
  const select = async (node: string) => {
    const drawn = page.locator(`.canvas-node[data-node="${node}"]`);
    await drawn.click();
    await expect(drawn).toHaveClass(/selected/);
    // The form follows the selection in the page's next idle moment.
    await expect(inspector.locator('section[aria-label="Node"] p.field-hint code').first()).toHaveText(node);
    for (const more of await inspector.locator("details.form-more:not(.form-advanced):not([open]) > summary").all()) await more.click();
  };
  // Every field a person types into: text, templates, expressions,
  // scripts, pickers with suggestions, numbers (not the Advanced JSON).
  const fields = 'input[id^="cfg-"]:not([type="checkbox"]):not([readonly]), textarea[id^="cfg-"]:not([readonly])';
  const typed: { node: string; field: string; value: string }[] = [];
  for (const node of nodes) {
    await select(node);
    const ids = await inspector.locator(fields).evaluateAll((all) => all.map((field) => field.id));
    for (const field of ids) {
      await select(node);
      const control = inspector.locator(`[id="${field}"]`);
      // Numbers, and JSON fields (a value must parse to be kept: see
      // docs/editor.md), get a number; the rest a word.
      const json = await control.evaluate((el) => el.matches("textarea.mono:not(.code)"));
      const value = json || (await control.getAttribute("type")) === "number" ? String(typed.length + 2) : `kept_${typed.length}`;
      await control.fill(value);
      // Straight to the canvas: no Tab, no Enter.
      await page.mouse.click(canvas.x + 20, canvas.y + canvas.height - 20);
      typed.push({ node, field, value });
    }
  }
  // Enough of the kinds' fields to mean something (prompts, conditions,
  // scripts, channels, models, numbers...).
  expect(typed.length).toBeGreaterThan(25);
  console.log(`every field: ${typed.length} fields of ${kinds.length} kinds typed, the canvas clicked, kept after a reload`);
  await saved(page);
  await page.reload();
  await hydrated(page);
  for (const { node, field, value } of typed) {
    await select(node);
    await expect(inspector.locator(`[id="${field}"]`), `${field} of ${node}`).toHaveValue(value);
  }
  expect((await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document.nodes).toHaveLength(kinds.length);
  expect(errors).toEqual([]);
});

test("what is half-typed in the inspector is kept when a note or a group's button is pressed next", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const route = (name: string, description: string) => ({ route: name, description });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Half-typed",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 200 } },
        {
          id: "triage",
          kind: "router",
          config: { routes: [route("billing", "money"), route("tech", "bugs")], otherwise: "tech" },
          position: { x: 300, y: 200 },
        },
        { id: "a", kind: "llm", position: { x: 600, y: 120 } },
        { id: "b", kind: "llm", position: { x: 600, y: 280 } },
        { id: "end", kind: "end", position: { x: 900, y: 200 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "triage" },
        { id: "e2", from: "triage", to: "a", route: "billing" },
        { id: "e3", from: "triage", to: "b", route: "tech" },
        { id: "e4", from: "a", to: "end" },
        { id: "e5", from: "b", to: "end" },
      ],
      notes: [{ id: "n1", text: "Ask Sam about refunds", position: { x: 300, y: 420 } }],
      groups: [{ id: "g1", label: "Answers", nodes: ["a", "b"], collapsed: true }],
    },
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const routes = async () =>
    (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document.nodes.find((n: any) => n.id === "triage").config.routes;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const triage = page.locator('.canvas-node[data-node="triage"]');
  const description = async () => {
    await triage.click();
    // The router's form is drawn after the click: looked for until it is.
    const find = () =>
      page
        .locator(".inspector")
        .locator('input[id^="cfg-"], textarea[id^="cfg-"]')
        .evaluateAll((all) => all.find((f) => (f as HTMLInputElement).value.startsWith("money"))?.id ?? "");
    await expect.poll(find).not.toBe("");
    return page.locator(`[id="${await find()}"]`);
  };
  // Typed, not left, and the note's bar pressed: the form goes (the note
  // is selected), what was typed is applied first.
  await (await description()).fill("money and invoices");
  await page.locator('.sticky-note[data-note="n1"] .sticky-note-bar span').click();
  await expect(page.locator('.sticky-note[data-note="n1"]')).toHaveClass(/selected/);
  await saved(page);
  expect((await routes())[0].description).toBe("money and invoices");

  // The same with the collapsed group's expand button; expanding by the
  // pointer selects nothing under it, and the canvas keeps the focus.
  await (await description()).fill("money, invoices and refunds");
  await page.getByTestId("group-expand").click();
  await expect(page.getByTestId("group-frame")).toHaveCount(1);
  await expect(triage).toHaveClass(/selected/);
  await expect(page.locator(".canvas-node.selected")).toHaveCount(1);
  await expect(page.locator(".editor-canvas")).toBeFocused();
  await saved(page);
  expect((await routes())[0].description).toBe("money, invoices and refunds");
  expect(errors).toEqual([]);
});

test("the version history previews and restores an earlier version", async ({ page, errors }) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "start", canvas.x + 150, canvas.y + 250);
  await saved(page);
  await place(page, "end", canvas.x + 450, canvas.y + 250);
  await saved(page);
  await expect(page.getByTestId("version")).toHaveText("v3");

  await page.locator(".history summary", { hasText: "Version history" }).click();
  // Each version says what it changed; one person's saves minutes apart
  // are one entry, the earlier ones folded under the newest.
  const v3 = page.locator('.version-row[data-version="3"]');
  await expect(v3.locator(".version-summary")).toHaveText("added node end");
  const v2 = page.locator('.version-row[data-version="2"]');
  await expect(v2).toBeHidden();
  await page.locator(".version-fold summary", { hasText: "2 earlier saves" }).click();
  await expect(v2).toContainText("olivia");
  await expect(v2.locator(".version-summary")).toHaveText("added node start");
  await expect(page.locator('.version-row[data-version="1"] .version-summary')).toHaveText("created the graph");
  // A version can be named; a named one stands on its own.
  await v3.getByRole("button", { name: "Name" }).click();
  await v3.getByLabel("Version name").fill("both ends");
  await v3.getByLabel("Version name").press("Enter");
  await expect(page.locator('.version-row[data-version="3"] .version-label')).toHaveText("both ends");
  const versions = await (await page.request.get(`/api/v1/graphs/${id}/versions`)).json();
  expect(versions[0]).toMatchObject({ version: 3, label: "both ends", summary: "added node `end`" });
  await page.screenshot({ path: "../target/e2e/screens/versions-light.png" });
  await page.locator('.version-row[data-version="2"]').getByRole("button", { name: "Preview" }).click();
  await expect(page.getByRole("dialog", { name: "Version preview" })).toContainText("Version 2");
  await page.getByRole("button", { name: "Restore this version" }).click();
  await expect(page.locator(".canvas-node")).toHaveCount(1);
  await expect(page.getByTestId("version")).toHaveText("v4");
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.version).toBe(4);
  expect(stored.document.nodes.map((n: any) => n.id)).toEqual(["start"]);
  expect(errors).toEqual([]);
});

test("a wire dropped on the empty canvas offers the kinds to add there, led to from its node", async ({ page, errors }) => {
  await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "start", canvas.x + 150, canvas.y + 250);
  const port = (await page.locator('.canvas-node[data-node="start"] .port-out').boundingBox())!;
  const drop = async (x: number, y: number) => {
    await page.mouse.move(port.x + port.width / 2, port.y + port.height / 2);
    await page.mouse.down();
    await page.mouse.move(x, y, { steps: 8 });
    await page.mouse.up();
  };
  await drop(canvas.x + 520, canvas.y + 260);
  const search = page.getByRole("combobox", { name: "Add after “start”" });
  await expect(search).toBeFocused();
  // The wire stays drawn to where it was dropped while the list is open.
  await expect(page.locator(".editor-wire")).toHaveCount(1);
  // The models first, as the palette lists them.
  await expect(page.locator(".quick-add li strong").first()).toHaveText("llm");
  // Nothing leads into a start: it is not offered.
  await search.fill("sta");
  await expect(page.locator(".quick-add li", { hasText: /^start/ })).toHaveCount(0);
  // The arrows choose; Enter places the chosen kind, led to from start.
  await search.fill("");
  const second = (await page.locator(".quick-add li strong").nth(1).textContent())!;
  await search.press("ArrowDown");
  await expect(page.locator(".quick-add li").nth(1)).toHaveAttribute("aria-selected", "true");
  await search.press("Enter");
  await expect(page.locator(".quick-add")).toHaveCount(0);
  await expect(page.locator(".editor-wire")).toHaveCount(0);
  const added = page.locator(`.canvas-node.kind-${second}`);
  await expect(added).toHaveCount(1);
  await expect(added).toHaveClass(/selected/);
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  // Its input is where the wire ended.
  const box = (await added.boundingBox())!;
  expect(Math.abs(box.x - (canvas.x + 520))).toBeLessThan(24);
  expect(Math.abs(box.y + box.height / 2 - (canvas.y + 260))).toBeLessThan(24);
  await saved(page);
  // One step to undo: the node and its edge go together.
  await page.keyboard.press("Control+z");
  await expect(page.locator(".canvas-node")).toHaveCount(1);
  await expect(page.locator(".editor-edge")).toHaveCount(0);

  // Escape closes the list and its wire, and the keys go on from the canvas.
  await drop(canvas.x + 520, canvas.y + 400);
  await expect(search).toBeFocused();
  await search.press("Escape");
  await expect(page.locator(".quick-add")).toHaveCount(0);
  await expect(page.locator(".editor-wire")).toHaveCount(0);
  await expect(page.locator(".editor-canvas")).toBeFocused();
  // A press elsewhere closes it too, adding nothing; a click on a kind adds it.
  await drop(canvas.x + 520, canvas.y + 400);
  await search.fill("age");
  await page.mouse.click(canvas.x + 60, canvas.y + 60);
  await expect(page.locator(".quick-add")).toHaveCount(0);
  await expect(page.locator(".editor-wire")).toHaveCount(0);
  await expect(page.locator(".canvas-node")).toHaveCount(1);
  // Dropped by the canvas's edge, the list stays in sight.
  await drop(canvas.x + canvas.width - 30, canvas.y + canvas.height - 30);
  // Opened again with nothing typed, however it closed.
  await expect(search).toHaveValue("");
  const list = (await page.locator(".quick-add").boundingBox())!;
  expect(list.x + list.width).toBeLessThanOrEqual(canvas.x + canvas.width);
  expect(list.y + list.height).toBeLessThanOrEqual(canvas.y + canvas.height);
  await search.fill("llm");
  await page.locator(".quick-add li", { hasText: /^llm/ }).first().click();
  await expect(page.locator(".canvas-node.kind-llm")).toHaveCount(1);
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  expect(errors).toEqual([]);
});

test("double-click to add a node where you are; the minimap moves the view", async ({ page, errors }) => {
  await newGraph(page);
  const canvas = page.locator(".editor-canvas");
  await canvas.dblclick({ position: { x: 300, y: 300 } });
  const search = page.getByLabel("Add a node");
  await expect(search).toBeFocused();
  await search.fill("wait");
  await search.press("Enter");
  await expect(page.locator('.canvas-node[data-node="wait"]')).toHaveCount(1);
  await saved(page);

  // All of the graph is in view: no map, the corner is free.
  await expect(page.locator(".minimap")).toBeHidden();
  // Panned so the node is half out of view, the map shows.
  const box = (await canvas.boundingBox())!;
  await page.mouse.move(box.x + 150, box.y + 400);
  await page.mouse.down();
  await page.mouse.move(box.x + 150, box.y + 40, { steps: 6 });
  await page.mouse.up();
  await expect(page.locator(".minimap")).toBeVisible();
  const world = page.locator(".editor-world");
  const before = await world.getAttribute("style");
  const map = (await page.locator(".minimap").boundingBox())!;
  await page.mouse.click(map.x + 10, map.y + 10);
  await expect(world).not.toHaveAttribute("style", before!);

  // The selected node scrolled into the map's corner: the map steps aside
  // to the left rather than cover it.
  const node = page.locator('.canvas-node[data-node="wait"]');
  await node.click();
  await expect(node).toHaveClass(/selected/);
  const at = (await node.boundingBox())!;
  const frame = (await canvas.boundingBox())!;
  await page.mouse.move(frame.x + frame.width / 2, frame.y + frame.height / 2);
  await page.mouse.wheel(
    -(frame.x + frame.width + 40 - (at.x + at.width)),
    -(frame.y + frame.height - 30 - (at.y + at.height)),
  );
  const minimap = page.locator(".minimap");
  await expect(minimap).toBeVisible();
  await expect(minimap).toHaveClass(/minimap-aside/);
  const mapBox = (await minimap.boundingBox())!;
  const nodeBox = (await node.boundingBox())!;
  expect(mapBox.x + mapBox.width).toBeLessThan(nodeBox.x);
  // Not selected, the node stays uncovered: any node under the map sends
  // it aside while the other corner is free (a branch was hidden under it).
  await page.mouse.click(frame.x + frame.width / 2, frame.y + 100);
  await expect(node).not.toHaveClass(/selected/);
  await expect(minimap).toHaveClass(/minimap-aside/);
  expect(errors).toEqual([]);
});

test("sticky notes are written, moved and kept", async ({ page, errors }) => {
  const id = await newGraph(page);
  await page.getByRole("button", { name: "Note" }).click();
  const note = page.locator(".sticky-note").first();
  await expect(note).toBeVisible();
  // The new note has the focus: what is typed next is the note.
  await expect(note.getByLabel("Note text")).toBeFocused();
  await page.keyboard.type("Ask legal before shipping this branch.");
  await page.keyboard.press("Tab");
  const bar = (await note.locator(".sticky-note-bar").boundingBox())!;
  await page.mouse.move(bar.x + 40, bar.y + 5);
  await page.mouse.down();
  await page.mouse.move(bar.x + 140, bar.y + 85, { steps: 6 });
  await page.mouse.up();
  await saved(page);
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.notes).toHaveLength(1);
  expect(stored.document.notes[0].text).toBe("Ask legal before shipping this branch.");
  await page.reload();
  await hydrated(page);
  await expect(page.locator(".sticky-note textarea")).toHaveValue("Ask legal before shipping this branch.");
  expect(errors).toEqual([]);
});

test("a note goes over the selected node, never on a node, and Layout keeps it with its node", async ({ page, errors }) => {
  await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  type Box = { x: number; y: number; width: number; height: number };
  const overlap = (a: Box, b: Box) =>
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  // The start mid-view, where a note with nothing selected would go.
  await place(page, "start", canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
  await place(page, "llm", canvas.x + canvas.width / 2 + 260, canvas.y + canvas.height / 2 + 100);
  const start = page.locator('.canvas-node[data-node="start"]');
  const llm = page.locator('.canvas-node[data-node="llm"]');
  await page.mouse.click(canvas.x + 40, canvas.y + canvas.height - 40);
  await page.getByRole("button", { name: "Note", exact: true }).click();
  await page.keyboard.type("Where it begins.");
  const loose = page.locator(".sticky-note").nth(0);
  expect(overlap((await loose.boundingBox())!, (await start.boundingBox())!)).toBe(false);
  expect(overlap((await loose.boundingBox())!, (await llm.boundingBox())!)).toBe(false);
  // With a node selected: over it, a note about it.
  await llm.click();
  await page.getByRole("button", { name: "Note", exact: true }).click();
  await page.keyboard.type("Keep answers short.");
  const about = page.locator(".sticky-note").nth(1);
  const over = async () => {
    const [n, l] = [(await about.boundingBox())!, (await llm.boundingBox())!];
    expect(overlap(n, l)).toBe(false);
    expect(n.y + n.height).toBeLessThanOrEqual(l.y);
    expect(l.y - (n.y + n.height)).toBeLessThan(40);
    expect(Math.abs(n.x - l.x)).toBeLessThan(4);
  };
  await over();
  // Layout moves the llm; its note goes with it.
  const was = (await llm.boundingBox())!;
  await page.getByRole("button", { name: "Layout" }).click();
  await expect.poll(async () => (await llm.boundingBox())!.y).not.toBeCloseTo(was.y, 0);
  await over();
  // Over a node at the top of the view: the view moves down, the note
  // clear of the floating toolbar.
  await place(page, "set", canvas.x + 120, canvas.y + 80);
  const set = page.locator(".canvas-node.kind-set");
  await set.click();
  await page.getByRole("button", { name: "Note", exact: true }).click();
  const third = page.locator(".sticky-note").nth(2);
  const toolbar = (await page.locator(".editor-toolbar").boundingBox())!;
  expect((await third.boundingBox())!.y).toBeGreaterThanOrEqual(toolbar.y + toolbar.height);
  await expect(set).toBeInViewport();
  await saved(page);
  expect(errors).toEqual([]);
});

test("a wire dropped on a node's input dot connects, zoomed out too, and starts from a node's edge where its dot is not drawn", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Dots",
      nodes: [
        { id: "a", kind: "set", label: "A", config: { values: {} }, position: { x: 100, y: 200 } },
        { id: "b", kind: "set", label: "B", config: { values: {} }, position: { x: 500, y: 320 } },
      ],
      edges: [],
    },
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  // Out to under 60%, where the dot is 7 px across.
  const zoom = async () => Number((await page.getByTestId("zoom").textContent())!.replace("%", ""));
  while ((await zoom()) >= 60) {
    const was = await zoom();
    await page.getByRole("button", { name: "Zoom out" }).click();
    await expect.poll(zoom).toBeLessThan(was);
  }
  // The outer half of B's input dot: outside B's box, on its dot.
  const from = (await page.locator('.canvas-node[data-node="a"] .port-out').boundingBox())!;
  const dot = (await page.locator('.canvas-node[data-node="b"] .port-in').boundingBox())!;
  const node = (await page.locator('.canvas-node[data-node="b"]').boundingBox())!;
  const target = { x: dot.x + 1, y: dot.y + dot.height / 2 };
  expect(target.x).toBeLessThan(node.x);
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  await page.mouse.move(target.x, target.y, { steps: 8 });
  await page.mouse.up();
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  await expect(page.locator(".quick-add")).toHaveCount(0);
  await saved(page);
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  expect((await stored()).edges.map((edge: any) => `${edge.from}>${edge.to}`)).toEqual(["a>b"]);

  // Further out, where nodes are drawn without their dots (under 50%), a
  // wire still starts from a node's right edge, and the node stays put.
  while ((await zoom()) >= 50) {
    const was = await zoom();
    await page.getByRole("button", { name: "Zoom out" }).click();
    await expect.poll(zoom).toBeLessThan(was);
  }
  await expect(page.locator('.canvas-node[data-node="b"] .port-out')).toHaveCount(0);
  const b = (await page.locator('.canvas-node[data-node="b"]').boundingBox())!;
  const a = (await page.locator('.canvas-node[data-node="a"]').boundingBox())!;
  await page.mouse.move(b.x + b.width - 3, b.y + b.height / 2);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2, { steps: 8 });
  await page.mouse.up();
  await expect(page.locator(".editor-edge")).toHaveCount(2);
  expect((await page.locator('.canvas-node[data-node="b"]').boundingBox())!.x).toBeCloseTo(b.x, 0);
  await saved(page);
  expect((await stored()).edges.map((edge: any) => `${edge.from}>${edge.to}`)).toEqual(["a>b", "b>a"]);
  expect(errors).toEqual([]);
});

test("a note about a node never lands on an edge's label", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // The route from Triage to Billing is labelled right above Refunds, where
  // a note about Refunds would go.
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Note and labels",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "triage", kind: "router", label: "Triage", position: { x: 300, y: 150 },
          config: { routes: [{ route: "billing" }, { route: "refunds" }] } },
        { id: "billing", kind: "llm", label: "Billing", position: { x: 900, y: 150 } },
        { id: "refunds", kind: "llm", label: "Refunds", position: { x: 600, y: 300 } },
      ],
      edges: [
        { id: "e1", from: "triage", to: "billing", route: "billing" },
        { id: "e2", from: "triage", to: "refunds", route: "refunds" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  type Box = { x: number; y: number; width: number; height: number };
  const overlap = (a: Box, b: Box) =>
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  const refunds = page.locator('.canvas-node[data-node="refunds"]');
  await refunds.click();
  await page.getByRole("button", { name: "Note", exact: true }).click();
  await page.keyboard.type("Refunds over 100 go to a person.");
  const note = (await page.locator(".sticky-note").boundingBox())!;
  const labels = await Promise.all(
    (await page.locator(".editor-edge-label").all()).map(async (label) => (await label.boundingBox())!),
  );
  expect(labels).toHaveLength(2);
  for (const label of labels) expect(overlap(note, label)).toBe(false);
  // Still beside the node it is about, and on none.
  const node = (await refunds.boundingBox())!;
  expect(overlap(note, node)).toBe(false);
  expect(Math.hypot(note.x - node.x, note.y + note.height - node.y)).toBeLessThan(240);
  await page.screenshot({ path: "../target/e2e/screens/note-beside-labels-1440.png" });
  expect(errors).toEqual([]);
});

test("another node selected opens its form at the top, not scrolled as the last one was", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await newGraph(page);
  await page.setViewportSize({ width: 1024, height: 700 });
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "llm", canvas.x + 120, canvas.y + 150);
  await place(page, "agent", canvas.x + 120, canvas.y + 300);
  const inspector = page.locator(".inspector");
  await page.locator('.canvas-node[data-node="llm"]').click();
  await expect(page.getByRole("textbox", { name: "Label" })).toHaveAttribute("placeholder", "llm");
  await inspector.evaluate((panel) => (panel.scrollTop = panel.scrollHeight));
  await expect.poll(() => inspector.evaluate((panel) => panel.scrollTop)).toBeGreaterThan(100);
  await page.locator('.canvas-node[data-node="agent"]').click();
  await expect(page.getByRole("textbox", { name: "Label" })).toHaveAttribute("placeholder", "agent");
  await expect.poll(() => inspector.evaluate((panel) => panel.scrollTop)).toBe(0);
  await expect(page.getByRole("textbox", { name: "Label" })).toBeInViewport();
  expect(errors).toEqual([]);
});

test("the inspector picks tools, and checks a condition as it is typed", async ({ page, errors }) => {
  const id = await newGraph(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "llm", canvas.x + 150, canvas.y + 250);
  await place(page, "tools", canvas.x + 450, canvas.y + 250);
  await page.locator('.canvas-node[data-node="llm"]').click();
  // The inspector follows a click once it has settled (an idle moment
  // after it): until then it shows the form of the node placed before,
  // whose tool picker CI once ticked.
  await expect(page.getByRole("textbox", { name: "Label" })).toHaveAttribute("placeholder", "llm");
  await page.locator('.tool-picker input[value="calculator"]').check();
  // "Saved" may still be the status of the save before the check: the
  // stored document is waited for, not the status.
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  await expect.poll(async () => (await stored()).nodes?.[0]?.config?.tools).toEqual(["calculator"]);

  await connect(page, "llm", "tools");
  // A click on the drawn line itself selects the edge.
  const onLine = await page.locator(".editor-edge-line").first().evaluate((line) => {
    const path = line as SVGPathElement;
    const point = path.getPointAtLength(path.getTotalLength() / 2);
    const screen = point.matrixTransform(path.getScreenCTM()!);
    return { x: screen.x, y: screen.y };
  });
  await page.mouse.click(onLine.x, onLine.y);
  const condition = page.locator('input[name="condition"]');
  await condition.fill("len(last(messages).tool_calls) >");
  await expect(page.locator(".field-error")).toContainText("at column");
  await condition.fill("len(last(messages).tool_calls) > 0");
  await expect(page.locator(".field-error")).toHaveCount(0);
  await condition.press("Tab");
  await expect
    .poll(async () => (await stored()).edges?.[0]?.condition)
    .toBe("len(last(messages).tool_calls) > 0");
  // A long condition keeps its start and its end; the whole is its tooltip.
  const label = page.locator(".editor-edge-label");
  await expect(label).toHaveText("len(last(messa…ol_calls) > 0");
  await expect(label).toHaveAttribute("title", "len(last(messages).tool_calls) > 0");
  // The label is drawn above the nodes, and a click on it selects its edge.
  await page.locator(".editor-canvas").click({ position: { x: 20, y: 120 } });
  await expect(condition).toHaveCount(0);
  await label.click();
  await expect(condition).toHaveValue("len(last(messages).tool_calls) > 0");
  expect(errors).toEqual([]);
});

test("loops into one node run apart, and no edge label sits under a node", async ({ page, errors }) => {
  await useExample(page, /Approve before a tool runs/);
  await expect(page.locator(".canvas-node")).toHaveCount(5);
  // The chat folded away, the canvas has the stage.
  const canvasBefore = (await page.locator(".editor-canvas").boundingBox())!;
  await page.locator(".run-panel-toggle").click();
  await expect
    .poll(async () => (await page.locator(".editor-canvas").boundingBox())!.height)
    .toBeGreaterThan(canvasBefore.height + 100);
  // "rejected" (human → agent) and tools → agent both go back to the agent.
  const bottoms = await page.locator(".editor-edge-line").evaluateAll((lines) =>
    lines.map((line) => (line as SVGPathElement).getBoundingClientRect().bottom),
  );
  const nodeBottom = Math.max(
    ...(await page.locator(".canvas-node").evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().bottom))),
  );
  const loops = bottoms.filter((bottom) => bottom > nodeBottom).sort((a, b) => a - b);
  expect(loops.length).toBe(2);
  expect(loops[1] - loops[0]).toBeGreaterThan(8);
  // Every label is clear of every node.
  const overlaps = await page.evaluate(() => {
    const boxes = (selector: string) =>
      [...document.querySelectorAll(selector)].map((element) => element.getBoundingClientRect());
    const nodes = boxes(".canvas-node");
    return boxes(".editor-edge-label").filter((label) =>
      nodes.some((node) => label.left < node.right && label.right > node.left && label.top < node.bottom && label.bottom > node.top),
    ).length;
  });
  expect(overlaps).toBe(0);
  await expect(page.locator(".editor-edge-label", { hasText: "approved" })).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/loops-light.png" });
  expect(errors).toEqual([]);
});

test("a graph saved without positions opens laid out and fitted", async ({ page, errors }) => {
  // A chain of eight nodes, written by hand: no positions at all.
  const ids = ["start", "a", "b", "c", "d", "e", "f", "end"];
  const document = {
    format_version: 2,
    name: "Unplaced",
    nodes: ids.map((id) => (id === "start" || id === "end" ? { id, kind: id } : { id, kind: "set", config: { values: {} } })),
    edges: ids.slice(1).map((id, i) => ({ id: `e${i}`, from: ids[i], to: id })),
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  // In one row it would be too small to read (33% here, no ports drawn):
  // it wraps into rows, read like lines of text, and opens whole and
  // readable, with no note about seeing only its start.
  await expect(async () => {
    const boxes = await Promise.all(ids.map(async (node) => (await page.locator(`.canvas-node[data-node="${node}"]`).boundingBox())!));
    const rows: number[] = [];
    for (let i = 1; i < boxes.length; i++) {
      const sameRow = Math.abs(boxes[i].y - boxes[i - 1].y) < 2;
      if (sameRow) {
        expect(boxes[i].x).toBeGreaterThan(boxes[i - 1].x + boxes[i - 1].width);
      } else {
        // The next row starts at the left, under the one before.
        expect(boxes[i].y).toBeGreaterThan(boxes[i - 1].y + boxes[i - 1].height);
        expect(boxes[i].x).toBeLessThan(boxes[i - 1].x);
        rows.push(i);
      }
    }
    expect(rows.length).toBeGreaterThanOrEqual(1);
    // All of it in view, at 50% or more (ports are drawn).
    const canvas = (await page.locator(".editor-canvas").boundingBox())!;
    for (const box of boxes) {
      expect(box.x).toBeGreaterThanOrEqual(canvas.x);
      expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width);
      expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height);
    }
    expect(boxes[0].width).toBeGreaterThanOrEqual(180 * 0.5);
  }).toPass();
  await expect(page.getByTestId("start-framing")).toHaveCount(0);
  await expect(page.locator(".canvas-node .port").first()).toBeVisible();
  // The layout is a change like any other: saved, and kept after a reload.
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const exported = await (await page.request.get(`/api/v1/graphs/${id}/export`)).json();
  expect(exported.nodes.every((node: { position?: unknown }) => node.position)).toBe(true);
  expect(errors).toEqual([]);
});

test("a large graph opens at its start drawing only what is near the view; whole, it is boxes", async ({ page, errors }) => {
  const { nodes, edges } = chainOfSteps(300, 100);
  const document = { format_version: 2, name: "Large", nodes, edges };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  // Hydrating takes the server's attributes as they are: none of the nodes'
  // or edges' is written again (each was once, an edge's path parsed twice).
  // Nor do nodes, ports or edges get listeners: the canvas reads what was
  // pressed (pressed.rs), and 300 nodes would otherwise hydrate 900.
  await page.addInitScript(() => {
    const seen = { written: [] as string[], listened: [] as string[] };
    (window as unknown as { seen: typeof seen }).seen = seen;
    const setAttribute = Element.prototype.setAttribute;
    Element.prototype.setAttribute = function (name: string, value: string) {
      if (["data-node", "data-state", "data-edge", "d"].includes(name) && this.closest(".editor-canvas")) seen.written.push(name);
      return setAttribute.call(this, name, value);
    };
    const addEventListener = EventTarget.prototype.addEventListener;
    EventTarget.prototype.addEventListener = function (
      this: EventTarget,
      ...args: Parameters<EventTarget["addEventListener"]>
    ) {
      if (this instanceof Element && this.closest(".canvas-node, [data-edge]")) seen.listened.push(args[0]);
      return addEventListener.apply(this, args);
    };
  });
  const seen = () => page.evaluate(() => (window as unknown as { seen: { written: string[]; listened: string[] } }).seen);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  // It opens at its start, readable, and says so.
  await expect(page.getByTestId("start-framing")).toContainText("The start of 300 nodes");
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  await expect(page.locator('.canvas-node[data-node="n0"] .canvas-node-label')).toHaveText("Step 0");
  // Only what is near the view is in the page: fewer than a third of the
  // nodes, each with its label and ports, and the edges between them.
  const drawn = () => page.locator(".canvas-node").count();
  // Nodes, their labels and ports counted at one instant (nodes join and
  // leave a few a frame).
  const whole = async () => {
    const parts = await page.evaluate(() => ({
      nodes: document.querySelectorAll(".canvas-node").length,
      labels: document.querySelectorAll(".canvas-node-label").length,
      ports: document.querySelectorAll(".canvas-node .port-out").length,
    }));
    expect(parts.labels).toBe(parts.nodes);
    expect(parts.ports).toBe(parts.nodes);
  };
  await expect.poll(drawn).toBeLessThan(100);
  expect(await drawn()).toBeGreaterThan(10);
  await expect(page.locator('.canvas-node[data-node="n299"]')).toHaveCount(0);
  await whole();
  expect(await seen()).toEqual({ written: [], listened: [] });
  // The keyboard goes anywhere: along the first row, past what was drawn,
  // the view follows and the node is drawn and focused.
  await page.locator('.canvas-node[data-node="n0"]').focus();
  for (let i = 0; i < 14; i++) await page.keyboard.press("ArrowRight");
  await expect(page.locator('.canvas-node[data-node="n14"]')).toBeFocused();
  await expect(page.locator('.canvas-node[data-node="n14"]')).toBeInViewport();
  await expect(page.locator('.canvas-node[data-node="n0"]')).toHaveCount(0);
  // Show all: every node, as boxes, and the note offers the start again.
  await page.getByRole("button", { name: "Fit", exact: true }).click();
  await expect(page.locator(".canvas-node")).toHaveCount(300);
  await expect(page.locator(".editor-edge")).toHaveCount(299);
  await expect(page.locator('.editor-zoom[data-detail="tiny"]')).toHaveCount(1);
  await expect(page.locator(".canvas-node-label")).toHaveCount(0);
  await expect(page.locator(".canvas-node .port")).toHaveCount(0);
  // Zoomed in past 50%, every node drawn has its label, kind line and
  // ports again, and those far from the view leave the page.
  // On the way, far out, the label is all a node shows, drawn big enough
  // to read on screen (over 6 px at 30%, where the full label's 13 px
  // would be under 4).
  for (let i = 0; i < 12 && (await page.locator('.editor-zoom[data-detail="far"]').count()) === 0; i++) {
    await page.getByRole("button", { name: "Zoom in" }).click();
  }
  const onScreen = await page.locator(".canvas-node-label").first().evaluate((label) => {
    const zoom = label.getBoundingClientRect().height / (label as HTMLElement).offsetHeight;
    return parseFloat(getComputedStyle(label).fontSize) * zoom;
  });
  expect(onScreen).toBeGreaterThan(6);
  for (let i = 0; i < 12 && (await page.locator('.editor-zoom[data-detail="full"]').count()) === 0; i++) {
    await page.getByRole("button", { name: "Zoom in" }).click();
  }
  await expect(page.locator('.editor-zoom[data-detail="full"]')).toHaveCount(1);
  // Closer still, the nodes far from the view leave the page.
  for (let i = 0; i < 3; i++) await page.getByRole("button", { name: "Zoom in" }).click();
  await expect.poll(drawn).toBeLessThan(300);
  await whole();
  expect((await seen()).listened).toEqual([]);
  // Pressed through the canvas all the same: a node, its menu, an edge.
  // The node nearest the canvas's centre (in view), not at a row's end, so
  // its edge to the next goes right.
  const near = await page.evaluate(() => {
    const box = document.querySelector(".editor-canvas")!.getBoundingClientRect();
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    let best = { i: 0, d: Infinity };
    for (const node of document.querySelectorAll(".canvas-node")) {
      const i = Number(node.getAttribute("data-node")!.slice(1));
      const r = node.getBoundingClientRect();
      const d = Math.hypot(r.x + r.width / 2 - cx, r.y + r.height / 2 - cy);
      if (i % 25 < 23 && d < best.d) best = { i, d };
    }
    return best.i;
  });
  const pressed = page.locator(`.canvas-node[data-node="n${near}"]`);
  await pressed.locator(".canvas-node-label").click();
  await expect(pressed).toHaveClass(/selected/);
  await pressed.click({ button: "right" });
  await expect(page.getByTestId("node-menu")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("node-menu")).toHaveCount(0);
  await page.locator(`.editor-edge[data-edge="e${near}"] .editor-edge-line`).click({ force: true });
  await expect(page.locator(`.editor-edge[data-edge="e${near}"]`)).toHaveClass(/selected/);
  await expect(pressed).not.toHaveClass(/selected/);
  expect(errors).toEqual([]);
});

test("a graph opened again opens where it was left, in any window; Fit forgets it", async ({ page, errors }) => {
  const { nodes, edges } = chainOfSteps(300, 100);
  const document = { format_version: 2, name: "Left off", nodes, edges };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("start-framing")).toContainText("The start of 300 nodes");
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  // Moved along and out a step, as someone at work would.
  const canvas = page.locator(".editor-canvas");
  const box = (await canvas.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(900, 400);
  await page.getByRole("button", { name: "Zoom out" }).click();
  await expect(page.getByTestId("zoom")).toHaveText("75%");
  await expect(page.getByTestId("start-framing")).toHaveCount(0);
  const world = page.locator(".editor-world");
  const left = await world.getAttribute("style");
  // The middle of the canvas: which node is nearest it.
  const middle = () =>
    page.evaluate(() => {
      const box = window.document.querySelector(".editor-canvas")!.getBoundingClientRect();
      const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
      let best = { id: "", d: Infinity };
      for (const node of window.document.querySelectorAll(".canvas-node")) {
        const r = node.getBoundingClientRect();
        const d = Math.hypot(r.x + r.width / 2 - cx, r.y + r.height / 2 - cy);
        if (d < best.d) best = { id: node.getAttribute("data-node")!, d };
      }
      return best.id;
    });
  const there = await middle();
  expect(there).not.toBe("n0");
  // Kept once the view has rested (the pan was kept at 90% a moment before).
  await expect
    .poll(() => page.evaluate(() => window.localStorage.getItem("heddle.views") ?? ""))
    .toContain('"zoom":0.75');

  // Reloaded: the same view, and no note about the start.
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("zoom")).toHaveText("75%");
  await expect(world).toHaveAttribute("style", left!);
  await expect(page.getByTestId("start-framing")).toHaveCount(0);

  // In a smaller window, the same place is in the middle, at the same zoom.
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("zoom")).toHaveText("75%");
  await expect.poll(middle).toBe(there);

  // A change made the moment before the page is left is kept too: it is
  // written as the page hides, not only once the view has rested.
  await page.getByRole("button", { name: "Zoom in" }).click();
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("zoom")).toHaveText("90%");

  // Fit frames it whole: the next visit frames it as it opens again.
  await page.getByRole("button", { name: "Fit", exact: true }).click();
  await expect
    .poll(() => page.evaluate(() => window.localStorage.getItem("heddle.views") ?? ""))
    .not.toContain(id);
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("start-framing")).toContainText("The start of 300 nodes");
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  expect(errors).toEqual([]);
});

test("a 100-node chain imported without positions is laid out in bands, not one row", async ({ page, errors }) => {
  const nodes = Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, kind: "set", label: `Step ${i}`, config: { values: {} } }));
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, from: nodes[i].id, to: node.id }));
  const created = await page.request.post("/api/v1/graphs", {
    data: { document: { format_version: 2, name: "Chain", nodes, edges } },
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await expect(page.locator(".canvas-node")).toHaveCount(100);
  // Laid out when opened: each band reads left to right, the next under it.
  await expect.poll(async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document.nodes[12].position?.x).toBe(0);
  const document = (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  const xs = document.nodes.map((node: any) => node.position.x);
  const ys = document.nodes.map((node: any) => node.position.y);
  const width = Math.max(...xs) - Math.min(...xs);
  const height = Math.max(...ys) - Math.min(...ys);
  expect(width).toBeLessThan(3200);
  expect(width / height).toBeGreaterThan(1);
  expect(width / height).toBeLessThan(2.5);
  // Whole, it would be boxes: it opens at its start, readable, and says so.
  const framing = page.getByTestId("start-framing");
  await expect(framing).toContainText("The start of 100 nodes");
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  const first = (await page.locator('.canvas-node[data-node="n0"]').boundingBox())!;
  expect(first.x).toBeGreaterThan(canvas.x);
  expect(first.x + first.width).toBeLessThan(canvas.x + canvas.width / 2);
  // Below the toolbar that floats over the canvas.
  const toolbar = (await page.locator(".editor-toolbar").boundingBox())!;
  expect(first.y).toBeGreaterThan(toolbar.y + toolbar.height);
  await expect(page.locator('.canvas-node[data-node="n0"] .canvas-node-label')).toHaveText("Step 0");
  await page.screenshot({ path: "../target/e2e/screens/chain-100-1440.png" });
  // Show all: the whole graph, and the note offers the start again.
  await framing.getByRole("button", { name: "Show all" }).click();
  await expect(framing).toContainText("All 100 nodes, too small to read");
  const zoom = parseInt((await page.getByTestId("zoom").textContent())!, 10);
  expect(zoom).toBeLessThan(35);
  await page.screenshot({ path: "../target/e2e/screens/chain-100-all-1440.png" });
  await framing.getByRole("button", { name: "Go to the start" }).click();
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  // Moving the view is the person's: the note goes.
  await page.getByRole("button", { name: "Zoom out" }).click();
  await expect(framing).toHaveCount(0);
  // A smaller window opens it the same way, the first time (a view left
  // in this browser would be opened where it was left, as the next test
  // shows: forgotten here).
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect
    .poll(() => page.evaluate(() => window.localStorage.getItem("heddle.views") ?? ""))
    .toContain(id);
  // The view has rested (kept after the window's change): forgotten now,
  // nothing moves it again before the reload.
  await page.waitForTimeout(400);
  await page.evaluate(() => window.localStorage.removeItem("heddle.views"));
  await page.reload();
  await hydrated(page);
  await expect(framing).toBeVisible();
  await expect(page.getByTestId("zoom")).toHaveText("90%");
  // The canvas keeps most of the window's width there (the panels wait
  // aside): the whole note, in two lines at most.
  await expect(framing).toContainText("The start of 100 nodes: all at once would be too small to read.");
  expect((await framing.boundingBox())!.height).toBeLessThan(64);
  await page.screenshot({ path: "../target/e2e/screens/chain-100-1024.png" });
  expect(errors).toEqual([]);
});

test("a node's menu duplicates and deletes it, as Ctrl+D and Delete do", async ({ page, errors }) => {
  await newGraph(page);
  const nodes = page.locator(".canvas-node");
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "llm", canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
  const placed = await nodes.count();
  const llm = page.locator('.canvas-node[data-node="llm"]');
  await llm.click({ button: "right" });
  const menu = page.getByTestId("node-menu");
  await menu.getByRole("menuitem", { name: "Duplicate" }).click();
  await expect(menu).toHaveCount(0);
  await expect(nodes).toHaveCount(placed + 1);
  // The copy is selected; deleting from the original's menu takes the
  // original alone (it is not in the selection).
  await expect(page.locator(".canvas-node.selected")).toHaveCount(1);
  await expect(llm).not.toHaveClass(/selected/);
  await llm.click({ button: "right" });
  await menu.getByRole("menuitem", { name: "Delete" }).click();
  await expect(nodes).toHaveCount(placed);
  await expect(llm).toHaveCount(0);
  await page.keyboard.press("Control+z");
  await expect(llm).toHaveCount(1);
  // Two selected: the menu of either groups them, as Ctrl+G does.
  const copy = page.locator(".canvas-node.kind-llm").nth(1);
  await llm.click();
  await copy.click({ modifiers: ["Shift"] });
  await expect(page.locator(".canvas-node.selected")).toHaveCount(2);
  await copy.click({ button: "right" });
  // Each item says what it acts on: the two for Duplicate and Delete, the
  // node pressed alone for its pauses.
  await expect(menu.getByRole("menuitem", { name: "Delete the 2 selected" })).toBeVisible();
  await expect(menu.getByRole("menuitem", { name: "Duplicate the 2 selected" })).toBeVisible();
  await expect(menu.getByRole("menuitemcheckbox", { name: /^Pause before “.+”$/ })).toBeVisible();
  await menu.getByRole("menuitem", { name: "Group the 2 selected" }).click();
  await expect(page.getByTestId("group-frame")).toContainText("2 nodes");
  // A group selected (a member pressed selects it) is not offered again.
  await llm.click({ button: "right" });
  await expect(menu.getByRole("menuitem", { name: "Duplicate" })).toBeVisible();
  await expect(menu.getByRole("menuitem", { name: /^Group/ })).toHaveCount(0);
  await page.keyboard.press("Escape");
  // Opened near the canvas's foot, the menu stays whole inside it.
  const frame = (await page.locator(".editor-canvas").boundingBox())!;
  const box = (await llm.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2, frame.y + frame.height - 30, { steps: 6 });
  await page.mouse.up();
  const low = (await llm.boundingBox())!;
  await page.mouse.click(low.x + low.width / 2, low.y + low.height / 2, { button: "right" });
  await expect(menu).toBeVisible();
  const opened = (await menu.boundingBox())!;
  expect(opened.y + opened.height).toBeLessThanOrEqual(frame.y + frame.height);
  expect(opened.y).toBeGreaterThanOrEqual(frame.y);
  await expect(menu.getByRole("menuitem", { name: "Close" })).toBeInViewport({ ratio: 1 });
  expect(errors).toEqual([]);
});

test("a node deleted from a chain says, on the canvas, what it joined, and its Undo brings the node back", async ({
  page,
  errors,
}) => {
  const { nodes, edges } = chainOfSteps(4, 100);
  const document = { format_version: 2, name: "Undo notice", nodes, edges };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  const wiring = async () =>
    (await stored()).edges.map((edge: { from: string; to: string }) => `${edge.from}>${edge.to}`).sort();
  for (const [width, height] of [
    [1440, 900],
    [1024, 700],
  ]) {
    await page.setViewportSize({ width, height });
    await page.goto(`/graphs/${id}`);
    await hydrated(page);
    const notice = page.getByTestId("undo-notice");
    await expect(notice).toHaveCount(0);
    await page.locator('.canvas-node[data-node="n1"]').click();
    await page.keyboard.press("Delete");
    // Seen, not only heard: the neighbours were joined.
    await expect(notice).toContainText("Deleted “Step 1”; “Step 0” now leads to “Step 2”");
    await saved(page);
    expect(await wiring()).toEqual(["n0>n2", "n2>n3"]);
    await page.screenshot({ path: `../target/e2e/screens/undo-notice-${width}.png` });
    // Undo from the notice: the node and both its edges are back, and the
    // notice says so, with the way forward again.
    await notice.getByRole("button", { name: "Undo" }).click();
    await expect(notice).toContainText("Undone: deleted “Step 1”");
    await expect(notice.getByRole("button", { name: "Redo what was undone" })).toBeVisible();
    await expect(page.locator('.canvas-node[data-node="n1"]')).toHaveCount(1);
    await saved(page);
    expect(await wiring()).toEqual(["n0>n1", "n1>n2", "n2>n3"]);
  }
  // Any later edit takes the offer away (Undo would undo that edit).
  await page.locator('.canvas-node[data-node="n3"]').click();
  await page.keyboard.press("Delete");
  await expect(page.getByTestId("undo-notice")).toContainText("Deleted “Step 3”");
  await page.getByRole("button", { name: "Note", exact: true }).click();
  await expect(page.getByTestId("undo-notice")).toHaveCount(0);
  // Closed from the keyboard, the focus stays on the canvas.
  await page.locator('.canvas-node[data-node="n2"]').click();
  await page.keyboard.press("Delete");
  await page.getByTestId("undo-notice").getByRole("button", { name: "Close the notice" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("undo-notice")).toHaveCount(0);
  await expect(page.locator(".editor-canvas")).toBeFocused();
  expect(errors).toEqual([]);
});

test("an undo pressed with the focus off the canvas is told on the canvas, with Redo", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const { nodes, edges } = chainOfSteps(3, 100);
  const created = await page.request.post("/api/v1/graphs", {
    data: { document: { format_version: 2, name: "Told", nodes, edges } },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const label = page.locator('.canvas-node[data-node="n1"] .canvas-node-label');
  await page.locator('.canvas-node[data-node="n1"]').click();
  const field = page.locator('.inspector input[name="label"]');
  await field.fill("Summarise");
  await field.press("Enter");
  await expect(label).toHaveText("Summarise");
  // Ctrl+Z from the run panel's tabs: what it undid is said where it can
  // be seen, not only heard.
  await page.getByRole("tab", { name: "Events" }).focus();
  await page.keyboard.press("Control+z");
  await expect(label).toHaveText("Step 1");
  const notice = page.getByTestId("undo-notice");
  await expect(notice).toContainText("Undone:");
  await expect(notice).toContainText("Summarise");
  // Its Redo does it again, and says so, with Undo.
  await notice.getByRole("button", { name: "Redo what was undone" }).click();
  await expect(label).toHaveText("Summarise");
  await expect(notice).toContainText("Redone:");
  await notice.getByRole("button", { name: "Undo what was redone" }).click();
  await expect(label).toHaveText("Step 1");
  await expect(page.locator(".editor-canvas")).toBeFocused();
  // With nothing left to undo, nothing is told.
  await notice.getByRole("button", { name: "Close the notice" }).click();
  await expect(notice).toHaveCount(0);
  await page.keyboard.press("Control+z");
  await expect(label).toHaveText("Step 1");
  await expect(notice).toHaveCount(0);
  expect(errors).toEqual([]);
});

test("Shift, Ctrl or ⌘ with a click takes a node out of the selection, or puts it in, and the rest stays", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const { nodes, edges } = chainOfSteps(4, 100);
  const created = await page.request.post("/api/v1/graphs", {
    data: { document: { format_version: 2, name: "Toggle", nodes, edges } },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);
  const selected = async () =>
    (await page.locator(".canvas-node.selected").evaluateAll((all) => all.map((n) => n.getAttribute("data-node")))).sort();
  await node("n0").click();
  await node("n1").click({ modifiers: ["Shift"] });
  await node("n2").click({ modifiers: ["Shift"] });
  await expect.poll(selected).toEqual(["n0", "n1", "n2"]);
  // Shift on a selected node takes it out; the others stay selected.
  await node("n1").click({ modifiers: ["Shift"] });
  await expect.poll(selected).toEqual(["n0", "n2"]);
  await expect(page.locator(".inspector-title").first()).toHaveText("2 nodes selected");
  // Ctrl does as Shift: in, and out.
  await node("n3").click({ modifiers: ["Control"] });
  await expect.poll(selected).toEqual(["n0", "n2", "n3"]);
  await node("n0").click({ modifiers: ["Control"] });
  await expect.poll(selected).toEqual(["n2", "n3"]);
  // A plain click still selects the one node.
  await node("n1").click();
  await expect.poll(selected).toEqual(["n1"]);
  // And the keyboard's focus still selects: Tab to the next node.
  await page.keyboard.press("Tab");
  await expect.poll(selected).toEqual(["n2"]);
  expect(errors).toEqual([]);
});

test("an edge that skips a node in its line goes around it, never behind it", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // Billing → set → end in a row, and Billing → end past `set` (what a
  // Layout makes of a branch that ends early).
  const document = {
    format_version: 2,
    name: "Around",
    state: { channels: { count: { type: "number" } } },
    nodes: [
      { id: "start", kind: "start", position: { x: 0, y: 0 } },
      { id: "billing", kind: "set", label: "Billing", config: { values: { count: { expr: "1" } } }, position: { x: 260, y: 0 } },
      { id: "set", kind: "set", label: "Set", config: { values: { count: { expr: "2" } } }, position: { x: 520, y: 0 } },
      { id: "end", kind: "end", position: { x: 780, y: 0 } },
    ],
    edges: [
      { id: "e1", from: "start", to: "billing" },
      { id: "e2", from: "billing", to: "set" },
      { id: "e3", from: "set", to: "end" },
      { id: "e4", from: "billing", to: "end", condition: "count > 0" },
    ],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const inside = async () => {
    const box = (await page.locator('.canvas-node[data-node="set"]').boundingBox())!;
    // Points along the drawn line, on screen.
    const points = await page.locator('.editor-edge[data-edge="e4"] .editor-edge-line').evaluate((line) => {
      const path = line as SVGPathElement;
      const matrix = path.getScreenCTM()!;
      const length = path.getTotalLength();
      return Array.from({ length: 60 }, (_, i) => {
        const p = path.getPointAtLength((length * (i + 0.5)) / 60).matrixTransform(matrix);
        return [p.x, p.y];
      });
    });
    return points.filter(([x, y]) => x > box.x + 2 && x < box.x + box.width - 2 && y > box.y + 2 && y < box.y + box.height - 2)
      .length;
  };
  expect(await inside()).toBe(0);
  // Its label ("count > 0") lies on its lane, off the nodes.
  const label = (await page.locator(".editor-edge-label", { hasText: "count > 0" }).boundingBox())!;
  const set = (await page.locator('.canvas-node[data-node="set"]').boundingBox())!;
  expect(label.y + label.height <= set.y || label.y >= set.y + set.height).toBe(true);
  // Moved out of the line, `set` is no longer in the way: the edge is a
  // plain curve again (it stays clear of the node either way).
  const node = page.locator('.canvas-node[data-node="set"]');
  await node.hover();
  await page.mouse.down();
  await page.mouse.move(set.x + set.width / 2, set.y + set.height / 2 + 200, { steps: 6 });
  await page.mouse.up();
  expect(await inside()).toBe(0);
  const d = await page.locator('.editor-edge[data-edge="e4"] .editor-edge-line').getAttribute("d");
  expect(d).not.toContain("L");
  expect(errors).toEqual([]);
});

test("fitted under 30%, a router and a condition are boxes of their full colour among paler ones", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // One long row: 40 nodes, a router and a condition among llm and set.
  const kinds = ["llm", "set"];
  const nodes = Array.from({ length: 40 }, (_, i) => ({
    id: `n${i}`,
    kind: i === 12 ? "router" : i === 25 ? "condition" : kinds[i % 2],
    position: { x: i * 220, y: 0 },
  }));
  const created = await page.request.post("/api/v1/graphs", { data: { document: { format_version: 2, name: "Far", nodes, edges: [] } } });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.getByRole("button", { name: "Fit", exact: true }).click();
  await expect(page.locator('.editor-zoom[data-detail="tiny"]')).toHaveCount(1);
  const fill = (id: string) =>
    page.locator(`.canvas-node[data-node="${id}"]`).evaluate((node) => getComputedStyle(node).backgroundColor);
  const [router, llm, condition, set] = await Promise.all(["n12", "n0", "n25", "n1"].map(fill));
  expect(router).not.toBe(llm);
  expect(condition).not.toBe(set);
  // Its kind's own colour, at full strength.
  const kindColor = await page
    .locator('.canvas-node[data-node="n12"]')
    .evaluate((node) => getComputedStyle(node).getPropertyValue("--kind-color").trim());
  expect(kindColor).not.toBe("");
  expect(errors).toEqual([]);
});
