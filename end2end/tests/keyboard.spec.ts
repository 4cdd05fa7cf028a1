// The editor from the keyboard alone: a three-node chat graph built and run
// without the mouse (palette kinds added beside the focused node, nodes
// connected from a list, arrows between nodes), and shortcuts that belong
// to the canvas only: a letter typed or text copied elsewhere stays there.
import { test, expect, hydrated, expectAccessible, chainOfSteps, writerWithoutAConversation, useExample } from "./fixtures";
import { Page } from "@playwright/test";

/** A chat graph with a start and an end, not yet connected. */
async function bare(page: Page): Promise<string> {
  const response = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Keyboard",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        { id: "end", kind: "end", position: { x: 760, y: 320 } },
      ],
      edges: [],
    },
  });
  expect(response.status()).toBe(201);
  return (await response.json()).id;
}

/** A chat graph, start → Reply (an llm) → end, with `more` nodes and
 *  edges; its id. */
async function chatGraph(page: Page, name: string, more: { nodes: any[]; edges: any[] } = { nodes: [], edges: [] }) {
  const response = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name,
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 0, y: 0 } },
        { id: "reply", kind: "llm", label: "Reply", position: { x: 260, y: 0 } },
        { id: "end", kind: "end", position: { x: 520, y: 0 } },
        ...more.nodes,
      ],
      edges: [{ id: "a", from: "start", to: "reply" }, { id: "b", from: "reply", to: "end" }, ...more.edges],
    },
  });
  expect(response.status()).toBe(201);
  return (await response.json()).id as string;
}

async function stored(page: Page, id: string): Promise<any> {
  return (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
}

test("a three-node graph is built and run with the keyboard only", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const keys: string[] = [];
  const press = async (key: string) => {
    keys.push(key);
    await page.keyboard.press(key);
  };

  // Tab reaches the nodes; focusing one selects it, with a visible ring.
  const start = page.locator('.canvas-node[data-node="start"]');
  await start.focus();
  await expect(start).toHaveClass(/selected/);
  await expect(start).toHaveAttribute("aria-label", "start, start, selected");
  await expect(start).toHaveAttribute("aria-roledescription", "node");

  // The palette (Shift+F6 goes back a panel, to its search): "llm",
  // Enter: added beside the selected start.
  await press("Shift+F6");
  await expect(page.getByLabel("Search node kinds")).toBeFocused();
  await page.keyboard.type("llm");
  await press("Enter");
  const llm = page.locator(".canvas-node.kind-llm");
  await expect(llm).toHaveCount(1);
  // The search is cleared, focus kept: the next kind is typed afresh.
  await expect(page.getByLabel("Search node kinds")).toHaveValue("");
  await expect(page.getByLabel("Search node kinds")).toBeFocused();
  await expect.poll(async () => (await stored(page, id)).nodes.length).toBe(3);
  const document = await stored(page, id);
  const added = document.nodes.find((node: any) => node.kind === "llm");
  const first = document.nodes.find((node: any) => node.id === "start");
  expect(added.position.x).toBeGreaterThan(first.position.x + 180);
  expect(added.position.y).toBe(first.position.y);

  // Added after the selected start, it is joined to it in the same step.
  const edges = async () => (await stored(page, id)).edges.map((edge: any) => [edge.from, edge.to]);
  await expect.poll(edges).toEqual([["start", added.id]]);
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  // Said for screen readers: what was added, and where.
  const said = page.getByTestId("edit-announcer");
  await expect(said).toHaveText(`Added “${added.id}” (llm) after “start”`);

  // llm → end: C on the llm, the list of nodes it may lead to.
  await llm.focus();
  await press("c");
  const menu = page.getByTestId("connect-menu");
  await expect(menu).toBeVisible();
  const list = menu.getByTestId("connect-target");
  await expect(list).toBeFocused();
  await expect(list.locator("option")).toHaveText([/^end \(end\)$/]);
  await page.screenshot({ path: "../target/e2e/screens/keyboard-connect-1440.png" });
  await press("Enter");
  await expect(menu).toBeHidden();
  await expect(said).toHaveText(`Connected “${added.id}” to “end”`);
  // The focus is back on the llm: an arrow goes left, to the start, and
  // right again.
  await expect(llm).toBeFocused();
  await press("ArrowLeft");
  await expect(start).toBeFocused();
  await press("ArrowRight");
  await expect(llm).toBeFocused();
  await expect(page.locator(".editor-edge")).toHaveCount(2);
  await expect
    .poll(async () =>
      (await stored(page, id)).edges.map((edge: any) => [edge.from, edge.to]),
    )
    .toEqual([
      ["start", added.id],
      [added.id, "end"],
    ]);
  await expect(page.getByTestId("problem-count")).toHaveText("0");

  // A new model's system prompt is empty, its example a placeholder: what
  // a person types is all there is.
  const system = page.getByRole("textbox", { name: "System" });
  await expect(system).toHaveValue("");
  await expect(system).toHaveAttribute("placeholder", /helpful assistant/);
  // Tab goes through the nodes as the graph runs, not as they were made
  // (the end was there before the llm).
  await start.focus();
  await press("Tab");
  await expect(llm).toBeFocused();
  await press("Tab");
  await expect(page.locator('.canvas-node[data-node="end"]')).toBeFocused();
  await llm.focus();

  // Alt + an arrow moves the focused node (one undoable change each).
  await press("Alt+ArrowDown");
  await expect
    .poll(async () => (await stored(page, id)).nodes.find((node: any) => node.id === added.id).position.y)
    .toBe(first.position.y + 20);

  // Enter edits the focused node: its label, in the inspector; Escape
  // comes back to it.
  await press("Enter");
  await expect(page.getByRole("textbox", { name: "Label" })).toBeFocused();
  await press("Escape");
  await expect(llm).toBeFocused();

  // F6 goes on to the inspector, then the run panel, then back round.
  // The inspector itself takes the focus: what is typed next changes
  // nothing (it went into the Label field, renaming the node); Tab goes
  // on into its fields.
  await press("F6");
  await expect(page.locator(".inspector")).toBeFocused();
  await page.keyboard.type("hi");
  await expect(page.getByRole("textbox", { name: "Label" })).toHaveValue("");
  await press("Tab");
  await expect(page.locator(".inspector :focus")).toHaveCount(1);
  await press("F6");
  // In the run panel, the chat's box: where its work is done.
  await expect(page.getByTestId("chat-input")).toBeFocused();
  await press("F6");
  await expect(page.getByLabel("Search node kinds")).toBeFocused();
  await press("F6");
  await expect(page.locator(".editor-canvas")).toBeFocused();

  // Ctrl+Enter is Run: a chat graph opens its chat, the focus in the box.
  await press("Control+Enter");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  await page.keyboard.type("Hello there");
  await press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(page.getByTestId("chat-messages").locator(".role-assistant").last()).toContainText(
    "Hello there",
  );
  console.log(`keyboard: ${keys.length} key presses (and 2 typed texts, 4 focus moves) from two nodes to an answer`);
  expect(errors).toEqual([]);
});

test("a graph that comes to hold a conversation as it is built shows its chat, and F6 goes to its box", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const created = await page.request.post("/api/v1/graphs", { data: {} });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveCount(0);
  const search = page.getByLabel("Search node kinds");
  await search.focus();
  for (const kind of ["start", "llm", "end"]) {
    await page.keyboard.type(kind);
    await page.keyboard.press("Enter");
  }
  await expect(page.locator(".canvas-node")).toHaveCount(3);
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveCount(1);
  // The zoom says where it is at 1024 px too, the tools on one row.
  await expect(page.getByTestId("zoom")).toBeVisible();
  const tools = (await page.locator(".editor-toolbar").boundingBox())!;
  expect(tools.height).toBeLessThan(48);
  // From the canvas, F6 twice (the inspector, then the run panel, folded
  // until now: opened on its chat): the chat's box, where the
  // conversation is typed.
  await page.locator(".canvas-node.kind-end").focus();
  await page.keyboard.press("F6");
  await page.keyboard.press("F6");
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  // F6 passing on, nothing typed, folds it again: open, it takes half
  // the canvas at 1024 px. Shift+F6 opens it again; with something typed
  // it stays open.
  const panel = page.locator(".run-panel");
  await expect(panel).toHaveClass(/\bopen\b/);
  await page.keyboard.press("F6");
  await expect(page.getByLabel("Search node kinds")).toBeFocused();
  await expect(panel).not.toHaveClass(/\bopen\b/);
  await page.keyboard.press("Shift+F6");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  await expect(panel).toHaveClass(/\bopen\b/);
  await page.keyboard.type("Hello");
  await page.keyboard.press("F6");
  await expect(page.getByLabel("Search node kinds")).toBeFocused();
  await expect(panel).toHaveClass(/\bopen\b/);
  await page.keyboard.press("Shift+F6");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  // Escape in the box goes back to the canvas, on the node selected there,
  // what was typed kept.
  await page.keyboard.press("Escape");
  await expect(page.locator(".canvas-node.kind-end")).toBeFocused();
  await expect(page.getByTestId("chat-input")).toHaveValue("Hello");
  // With nothing selected, on the canvas itself, its ring showing.
  await page.keyboard.press("Escape");
  await page.getByTestId("chat-input").focus();
  await page.keyboard.press("Escape");
  await expect(page.locator(".editor-canvas")).toBeFocused();
  const ring = await page.locator(".editor-canvas").evaluate((canvas) => getComputedStyle(canvas).outlineStyle);
  expect(ring).toBe("solid");
  expect(errors).toEqual([]);
});

test("Ctrl+S saves at once, a field being typed in too, and the browser's Save page is never opened", async ({
  page,
  errors,
}) => {
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await page.evaluate(() => {
    (window as unknown as { prevented: boolean[] }).prevented = [];
    window.addEventListener("keydown", (event) => {
      if (event.key === "s" && event.ctrlKey) (window as unknown as { prevented: boolean[] }).prevented.push(event.defaultPrevented);
    });
  });
  // The graph's description applies as it is left: typed and still in
  // it, nothing is saved but by Ctrl+S.
  const description = page.locator('textarea[name="graph-description"]');
  await description.focus();
  await page.keyboard.type("Answers customers");
  await page.keyboard.press("Control+s");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  await expect.poll(async () => (await stored(page, id)).description).toBe("Answers customers");
  await expect(description).toBeFocused();
  // From the canvas too, with nothing to save: still not the browser's.
  await page.locator(".canvas-node.kind-start").focus();
  await page.keyboard.press("Control+s");
  expect(await page.evaluate(() => (window as unknown as { prevented: boolean[] }).prevented)).toEqual([true, true]);
  expect(errors).toEqual([]);
});

test("nodes added from the keyboard in a row stay in sight: the view follows each", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const nodes = page.locator(".canvas-node");
  const before = await nodes.count();
  // The rightmost node selected, four kinds added one beside the other.
  const rightmost = await nodes.evaluateAll((all) =>
    all
      .map((node) => ({ id: node.getAttribute("data-node"), x: node.getBoundingClientRect().x }))
      .sort((a, b) => b.x - a.x)[0].id,
  );
  await page.locator(`.canvas-node[data-node="${rightmost}"]`).focus();
  await page.keyboard.press("Shift+F6");
  for (let i = 0; i < 4; i++) {
    await page.keyboard.type("set");
    await page.keyboard.press("Enter");
    await expect(nodes).toHaveCount(before + i + 1);
    const added = page.locator(".canvas-node.selected");
    await expect(added).toHaveCount(1);
    await expect(added).toBeInViewport({ ratio: 1 });
  }
  expect(errors).toEqual([]);
});

test("a node reached with Tab from off the canvas is brought into view", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const canvas = page.locator(".editor-canvas");
  const box = (await canvas.boundingBox())!;
  // The view panned until both nodes are off its left edge.
  await page.mouse.move(box.x + box.width - 20, box.y + box.height - 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 20, box.y + box.height - 20, { steps: 6 });
  await page.mouse.move(box.x - 600, box.y + box.height - 20, { steps: 6 });
  await page.mouse.up();
  const start = page.locator('.canvas-node[data-node="start"]');
  await expect(start).not.toBeInViewport();
  await canvas.focus();
  await page.keyboard.press("Tab");
  await expect(start).toBeFocused();
  // Whole (at a zoom such as 97% the browser measures 0.9999997 of it).
  await expect(start).toBeInViewport({ ratio: 0.999 });
  const shown = (await start.boundingBox())!;
  expect(shown.x).toBeGreaterThanOrEqual(box.x);
  expect(shown.x + shown.width).toBeLessThanOrEqual(box.x + box.width);
  expect(errors).toEqual([]);
});

test("Run on a graph with problems says so and goes to the first fix, asking the server nothing; after the last fix the focus stays in the editor", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const response = await page.request.post("/api/v1/graphs/import", { data: writerWithoutAConversation() });
  expect(response.status()).toBe(201);
  const id = (await response.json()).id;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("problem-count")).toHaveText("1");
  const starts: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && /\/runs\b|start_run/.test(request.url())) starts.push(request.url());
  });
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("Control+Enter");
  await expect(page.locator(".graph-bar .run-refusal")).toHaveText("Fix the problem first (see Problems).");
  const fix = page.locator(".problems").getByRole("button", { name: "Create channel messages (messages)" });
  await expect(fix).toBeFocused();
  expect(starts).toEqual([]);
  expect((await (await page.request.get(`/api/v1/graphs/${id}/runs`)).json()).length).toBe(0);
  // Enter fixes it; the message goes with the problem.
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(page.locator(".graph-bar .run-refusal")).toHaveCount(0);

  // At 1024 the inspector goes with the last problem (nothing selected):
  // the canvas takes the focus, not the page.
  await page.keyboard.press("Control+z");
  await expect(page.getByTestId("problem-count")).toHaveText("1");
  // Undo says what it took back, the fields it changed included.
  await expect(page.getByTestId("edit-announcer")).toHaveText(
    "Undone: edited inputs of “start”; added channel messages",
  );
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect(page.locator(".inspector")).toBeVisible();
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("Control+Enter");
  await expect(fix).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(page.locator(".inspector")).toBeHidden();
  await expect(page.locator(".editor-canvas")).toBeFocused();
  expect(errors).toEqual([]);
});

test("the help is read, scrolled and closed from the keyboard; the run tabs go by the arrows", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("?");
  const help = page.getByTestId("help");
  await expect(help).toBeFocused();
  // Taller than the window, it scrolls under its title and Close.
  await page.keyboard.press("End");
  await expect.poll(() => help.evaluate((card) => card.scrollTop)).toBeGreaterThan(0);
  await expect(help.getByText("Ctrl + Enter")).toBeInViewport();
  await expect(help.getByRole("button", { name: "Close" })).toBeInViewport();
  // Tab stays in the dialog; shortcuts do not reach the canvas behind it.
  await page.keyboard.press("Tab");
  await expect(help.getByRole("button", { name: "Close" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(help.getByRole("button", { name: "Close" })).toBeFocused();
  await page.keyboard.press("n");
  await expect(page.locator(".sticky-note")).toHaveCount(0);
  await expectAccessible(page, "the help");
  await page.screenshot({ path: "../target/e2e/screens/help-1024.png" });
  // Escape closes it and gives the canvas the focus back.
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);
  await expect(page.locator(".editor-canvas")).toBeFocused();
  // Opened from a node, it gives the focus back to that node.
  const start = page.locator('.canvas-node[data-node="start"]');
  await start.focus();
  await page.keyboard.press("?");
  await expect(help).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);
  await expect(start).toBeFocused();
  // From the palette's kinds too (not from its search box: "?" is typed).
  const kind = page.locator('.palette-item[data-kind="llm"]');
  await kind.focus();
  await page.keyboard.press("?");
  await expect(help).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);

  // The run panel's tabs are one Tab stop; the arrows go along them, each
  // showing its panel, named by its tab.
  const chatTab = page.getByRole("tab", { name: "Chat" });
  await chatTab.focus();
  await page.keyboard.press("ArrowRight");
  const runTab = page.getByRole("tab", { name: "Run" });
  await expect(runTab).toBeFocused();
  await expect(runTab).toHaveAttribute("aria-selected", "true");
  await expect(page.getByRole("tabpanel", { name: "Run" })).toBeVisible();
  await page.keyboard.press("End");
  await expect(page.getByRole("tab", { name: "Compare" })).toBeFocused();
  await page.keyboard.press("ArrowRight");
  await expect(chatTab).toBeFocused();
  await expect(page.locator(".run-tab[tabindex='0']")).toHaveCount(1);
  expect(errors).toEqual([]);
});

test("shortcuts belong to the canvas: a letter typed or text copied in a panel stays there", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const notes = page.locator(".sticky-note");
  const before = await notes.count();
  // N with a toolbar button focused: nothing happens (the view's own
  // keys, / and F, work there; not what edits the graph).
  await page.getByRole("button", { name: "Fit", exact: true }).focus();
  await page.keyboard.press("n");
  await page.keyboard.press("l");
  await expect(notes).toHaveCount(before);
  // On the canvas, N adds one note (one, not two).
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("n");
  await expect(notes).toHaveCount(before + 1);
  // With a dialog open, its keys are its own: Ctrl+Z, Ctrl+Enter and F6
  // do not reach the editor behind it.
  await page.getByRole("tab", { name: "Trace" }).click();
  await page.getByRole("button", { name: "Share", exact: true }).click();
  const dialog = page.locator("[aria-modal=true]");
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button").first().focus();
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Control+Enter");
  await page.keyboard.press("F6");
  await expect(dialog.locator(":focus")).toHaveCount(1);
  await expect(notes).toHaveCount(before + 1);
  await expect(page.locator("[role=tab][aria-selected=true]", { hasText: "Chat" })).toHaveCount(0);
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  // Delete with a node selected but the inspector focused deletes nothing.
  const start = page.locator('.canvas-node[data-node="start"]');
  await start.focus();
  await page.getByRole("button", { name: "Fit", exact: true }).focus();
  await page.keyboard.press("Delete");
  await expect(start).toHaveCount(1);
  await start.focus();
  await page.keyboard.press("Delete");
  await expect(start).toHaveCount(0);
  // Nothing came before it: the canvas keeps the focus, not the page.
  await expect(page.locator(".editor-canvas")).toBeFocused();
  // Undo draws it again; the focus stays in the editor.
  await page.keyboard.press("Control+z");
  await expect(start).toHaveCount(1);
  await expect
    .poll(() => page.evaluate(() => document.activeElement?.closest(".editor-canvas") !== null))
    .toBe(true);
  expect(errors).toEqual([]);
});

test("Run asks for what a graph needs: a chat graph opens its chat, another its input form", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  // A chat graph: Run puts the focus in the chat, and starts nothing.
  const chat = await bare(page);
  await page.goto(`/graphs/${chat}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Trace" }).click();
  await page.getByTestId("run").click();
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  await expect(page.getByTestId("run-status")).toHaveCount(0);

  // A graph with a text input: the form, its first field focused; Enter
  // in it does not start an empty run either.
  const response = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Topic",
      state: { channels: { topic: { type: "string" }, out: { type: "string" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["topic"] }, position: { x: 0, y: 0 } },
        { id: "say", kind: "set", config: { values: { out: { expr: "topic" } } }, position: { x: 260, y: 0 } },
        { id: "end", kind: "end", position: { x: 520, y: 0 } },
      ],
      edges: [
        { id: "a", from: "start", to: "say" },
        { id: "b", from: "say", to: "end" },
      ],
    },
  });
  expect(response.status()).toBe(201);
  const topic = (await response.json()).id;
  await page.goto(`/graphs/${topic}`);
  await hydrated(page);
  await page.getByTestId("run").click();
  await expect(page.getByRole("tab", { name: "Run" })).toHaveAttribute("aria-selected", "true");
  const field = page.getByTestId("run-form").locator("input, textarea").first();
  await expect(field).toBeFocused();
  await page.screenshot({ path: "../target/e2e/screens/run-asks-input-1024.png" });
  const runs = await (await page.request.get(`/api/v1/graphs/${topic}/runs`)).json();
  expect(runs).toEqual([]);
  await page.keyboard.type("tides");
  await page.getByTestId("run-start").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  const [run] = await (await page.request.get(`/api/v1/graphs/${topic}/runs`)).json();
  expect(run.input).toEqual({ topic: "tides" });
  expect(errors).toEqual([]);
});

test("a focused node keeps the focus when an edit changes the order the graph is read in", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // Read start, end, note while start leads to end; start, note, end
  // without the edge (the note, above, is read first of what no edge
  // reaches).
  const response = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Order",
      nodes: [
        { id: "start", kind: "start", position: { x: 40, y: 200 } },
        { id: "note", kind: "set", label: "Note", config: { values: {} }, position: { x: 320, y: 20 } },
        { id: "end", kind: "end", position: { x: 640, y: 200 } },
      ],
      edges: [{ id: "e1", from: "start", to: "end" }],
    },
  });
  expect(response.status()).toBe(201);
  const id = (await response.json()).id;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const order = () => page.locator(".canvas-node").evaluateAll((all) => all.map((n) => n.getAttribute("data-node")));
  expect(await order()).toEqual(["start", "end", "note"]);
  // The edge deleted from the end, the end focused: the order changes
  // around it, the focus stays, and the keys still work on it.
  const end = page.locator('.canvas-node[data-node="end"]');
  await end.focus();
  await page.keyboard.press("e");
  await expect(page.locator('.editor-edge[data-edge="e1"]')).toBeFocused();
  await page.keyboard.press("ArrowRight");
  await expect(end).toBeFocused();
  await page.keyboard.press("e");
  // Escape goes back to the end, where E was pressed (not the edge's
  // source); so does Delete.
  await page.keyboard.press("Escape");
  await expect(end).toBeFocused();
  await page.keyboard.press("e");
  await page.keyboard.press("Delete");
  await expect(page.locator(".editor-edge")).toHaveCount(0);
  await expect.poll(order).toEqual(["start", "note", "end"]);
  await expect(end).toBeFocused();
  await page.keyboard.press("Control+z");
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  await expect.poll(order).toEqual(["start", "end", "note"]);
  await expect(end).toBeFocused();
  await page.keyboard.press("Control+y");
  await expect(page.locator(".editor-edge")).toHaveCount(0);
  await expect.poll(order).toEqual(["start", "note", "end"]);
  await expect(end).toBeFocused();
  expect(errors).toEqual([]);
});

test("edges are reached from their nodes, named, followed and deleted with the keyboard", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const response = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Edges by key",
      state: { channels: { route: { type: "string" } } },
      nodes: [
        { id: "start", kind: "start", position: { x: 40, y: 120 } },
        { id: "pick", kind: "condition", label: "Pick", config: { routes: [{ route: "yes", when: "route == 'yes'" }], otherwise: "default" }, position: { x: 320, y: 120 } },
        { id: "end", kind: "end", position: { x: 640, y: 120 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "pick" },
        { id: "e2", from: "pick", to: "end", route: "yes" },
        { id: "e3", from: "pick", to: "end", route: "default" },
      ],
    },
  });
  expect(response.status()).toBe(201);
  const id = (await response.json()).id;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);

  // E on a node: its first edge leaving, focused, selected and named.
  const pick = page.locator('.canvas-node[data-node="pick"]');
  await pick.focus();
  await page.keyboard.press("e");
  const yes = page.locator('.editor-edge[data-edge="e2"]');
  await expect(yes).toBeFocused();
  await expect(yes).toHaveClass(/selected/);
  await expect(yes).toHaveAttribute("aria-label", "From Pick to end, route yes");
  await expect(yes).toHaveAttribute("aria-roledescription", "edge");
  // The inspector names its ends by label and offers Pick's routes.
  const inspector = page.locator(".inspector");
  await expect(inspector.locator(".inspector-doc").first()).toHaveText("Pick → end");
  const route = page.getByTestId("edge-route");
  await expect(route).toHaveValue("yes");
  await expect(route.locator("option")).toHaveText(["Always (no route)", "yes", "default"]);
  await page.screenshot({ path: "../target/e2e/screens/keyboard-edge-1440.png" });
  // E again: the next edge of the same node, then the one arriving.
  await page.keyboard.press("e");
  await expect(page.locator('.editor-edge[data-edge="e3"]')).toBeFocused();
  await page.keyboard.press("e");
  await expect(page.locator('.editor-edge[data-edge="e1"]')).toBeFocused();
  // Right follows it to the node it reaches; Left back to where it leaves.
  await page.keyboard.press("ArrowRight");
  await expect(pick).toBeFocused();
  await page.keyboard.press("e");
  await page.keyboard.press("e");
  await expect(page.locator('.editor-edge[data-edge="e3"]')).toBeFocused();
  // Delete removes it (one edge, nothing else) and the focus goes home.
  await page.keyboard.press("Delete");
  await expect(pick).toBeFocused();
  await expect(page.locator(".editor-edge")).toHaveCount(2);
  await expect
    .poll(async () => (await stored(page, id)).edges.map((edge: any) => edge.id))
    .toEqual(["e1", "e2"]);
  // The node is still there: Delete went to the edge only.
  expect((await stored(page, id)).nodes.length).toBe(3);
  // Undo brings it back.
  await page.keyboard.press("Control+z");
  await expect(page.locator(".editor-edge")).toHaveCount(3);
  // The start's edge: start picks no routes, so there is nothing to pick.
  await page.locator('.canvas-node[data-node="start"]').focus();
  await page.keyboard.press("e");
  await expect(page.getByTestId("edge-no-routes")).toHaveText(
    "start picks no routes: this edge is always taken (or when its condition holds).",
  );
  // A route picked from the list is the edge's (and a wrong one is named).
  await page.locator('.canvas-node[data-node="pick"]').focus();
  await page.keyboard.press("e");
  await route.focus();
  await route.selectOption("default");
  await expect(route).toBeFocused();
  await expect
    .poll(async () => (await stored(page, id)).edges.find((edge: any) => edge.id === "e2").route)
    .toBe("default");
  await expect(page.getByTestId("problem-count")).not.toHaveText("0");
  // A node renamed: its edges are named by its new label as they take the
  // focus (drawn before the rename, they were named by the old one).
  await page.locator('.canvas-node[data-node="pick"]').focus();
  await page.keyboard.press("Enter");
  await page.keyboard.press("Control+a");
  await page.keyboard.type("Chooser");
  await page.keyboard.press("Escape");
  await expect(page.locator('.canvas-node[data-node="pick"] .canvas-node-label')).toHaveText("Chooser");
  await page.keyboard.press("e");
  await expect(page.locator('.editor-edge[data-edge="e2"]')).toBeFocused();
  await expect(page.locator('.editor-edge[data-edge="e2"]')).toHaveAttribute("aria-label", /^From Chooser to end/);
  expect(errors).toEqual([]);
});

test("the chat's message box and newest turn stay in view however long the conversation, at 1024x700", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.goto(`/graphs/${await chatGraph(page, "Talk")}`);
  await hydrated(page);
  const input = page.getByTestId("chat-input");
  const answers = page.getByTestId("chat-messages").locator(".role-assistant");
  const questions = page.getByTestId("chat-messages").locator(".role-user");
  for (const [n, question] of ["one", "two", "three", "four"].entries()) {
    await input.fill(`Question ${question}`);
    await input.press("Enter");
    await expect(answers).toHaveCount(n + 1, { timeout: 15_000 });
    await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
    // The box and the newest answer are both on screen, and the question
    // it answers whole above it: the turn is read from its start.
    await expect(input).toBeInViewport();
    await expect(answers.last()).toBeInViewport();
    await expect(questions.last()).toHaveText(new RegExp(`Question ${question}`));
    await expect(questions.last()).toBeInViewport({ ratio: 1 });
  }
  // The conversation has room: more than a line of it shows at 1024x700.
  const list = (await page.getByTestId("chat-messages").boundingBox())!;
  expect(list.height).toBeGreaterThan(120); // a whole answer of five lines
  await page.screenshot({ path: "../target/e2e/screens/chat-pinned-1024.png" });
  // Worked on the graph, the chat yields to the canvas: its list is
  // short, and it starts under the question rather than at a sliver of
  // its bubble, the reply in sight.
  await page.locator('.canvas-node[data-node="reply"]').click();
  const messages = page.getByTestId("chat-messages");
  await expect.poll(async () => (await messages.boundingBox())!.height).toBeLessThan(list.height - 60);
  await expect
    .poll(async () => {
      const shown = (await messages.boundingBox())!;
      const question = (await questions.last().boundingBox())!;
      const bottom = question.y + question.height;
      if (bottom <= shown.y + 1) return "above";
      return question.y >= shown.y - 1 && bottom <= shown.y + shown.height + 1 ? "whole" : "cut";
    })
    .not.toBe("cut");
  await expect(answers.last()).toBeInViewport();
  // Back in the chat, it takes its room back, and the question shows
  // whole again (it stayed cut under the list's top).
  await input.click();
  await expect.poll(async () => (await messages.boundingBox())!.height).toBeGreaterThan(list.height - 10);
  await expect(questions.last()).toBeInViewport({ ratio: 1 });
  await expect
    .poll(async () => {
      const shown = (await messages.boundingBox())!;
      const question = (await questions.last().boundingBox())!;
      return question.y >= shown.y - 1;
    })
    .toBe(true);
  // Yielding again, one click on a tab opens it: the panel grew at the
  // press and moved the tab from under the pointer, and the click opened
  // nothing.
  await page.locator('.canvas-node[data-node="reply"]').click();
  await expect.poll(async () => (await messages.boundingBox())!.height).toBeLessThan(list.height - 60);

  // Each turn has its trace: the Trace names the turn it shows and goes
  // to the others in place.
  const status = page.getByTestId("run-status");
  const newest = await status.getAttribute("data-run");
  await page.getByRole("tab", { name: "Trace" }).click();
  const picker = page.getByTestId("turn-picker");
  await expect(picker).toContainText("Turn 4 of 4");
  await expect(picker).toContainText("“Question four”");
  await expect(page.getByTestId("turn-later")).toBeDisabled();
  await page.getByTestId("turn-earlier").click();
  await expect(picker).toContainText("Turn 3 of 4");
  await expect(picker).toContainText("“Question three”");
  await expect(status).not.toHaveAttribute("data-run", newest!);
  await expect(page.getByTestId("timeline")).toContainText("Reply");
  await page.screenshot({ path: "../target/e2e/screens/trace-turns-1024.png" });
  await page.getByTestId("turn-later").click();
  await expect(picker).toContainText("Turn 4 of 4");
  await expect(status).toHaveAttribute("data-run", newest!);
  // From the chat: a question's Trace opens its own turn's.
  await page.getByRole("tab", { name: "Chat" }).click();
  await questions.filter({ hasText: "Question two" }).getByTestId("chat-turn-trace").click();
  await expect(page.getByRole("tab", { name: "Trace" })).toHaveAttribute("aria-selected", "true");
  await expect(picker).toContainText("Turn 2 of 4");
  await expect(status).not.toHaveAttribute("data-run", newest!);
  expect(errors).toEqual([]);
});

test("a node is found by name in a big graph and gone to, even inside a collapsed group", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const { nodes, edges } = chainOfSteps(300, 400);
  const groups = [{ id: "group-1", label: "Far away", nodes: ["n287", "n288"], collapsed: true }];
  const document = { format_version: 2, name: "Find", nodes, edges, groups };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);
  await expect(node("n250")).toHaveCount(0);

  // "/" on the canvas opens the box; typing lists matches, best first.
  await node("n0").focus();
  await page.keyboard.press("/");
  const input = page.getByTestId("find-node-input");
  await expect(input).toBeFocused();
  await page.keyboard.type("step 25");
  const options = page.locator(".find-node-option");
  await expect(options.first()).toContainText("Step 25");
  await expect(options).toHaveCount(8);
  await page.keyboard.press("ArrowDown");
  await expect(options.nth(1)).toHaveAttribute("aria-selected", "true");
  await expect(options.nth(1)).toContainText("Step 250");
  await page.screenshot({ path: "../target/e2e/screens/find-node-1440.png" });
  await expectAccessible(page, "the find box");
  await page.keyboard.press("Enter");
  // Gone to: drawn, in view, selected and focused; the box closed.
  await expect(page.getByTestId("find-node")).toHaveCount(0);
  await expect(node("n250")).toBeFocused();
  await expect(node("n250")).toBeInViewport();
  await expect(node("n250")).toHaveClass(/selected/);

  // A node inside a collapsed group: its group opens.
  await page.getByTestId("find").click();
  await page.keyboard.type("Step 288");
  await page.keyboard.press("Enter");
  await expect(node("n288")).toBeFocused();
  await expect(page.getByTestId("group-box")).toHaveCount(0);
  await expect(page.getByTestId("group-frame")).toContainText("Far away");

  // Escape closes it and gives the canvas the focus back.
  await page.keyboard.press("/");
  await expect(input).toBeFocused();
  await page.keyboard.type("no such node");
  await expect(page.getByTestId("find-node")).toContainText("No node has that name.");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("find-node")).toHaveCount(0);
  await expect(page.locator(".editor-canvas")).toBeFocused();

  // Fitted whole, the graph is too small to read; a node found is gone to
  // at a zoom that reads.
  await page.getByRole("button", { name: "Fit", exact: true }).click();
  const zoom = async () => parseInt((await page.getByTestId("zoom").textContent()) ?? "", 10);
  await expect.poll(zoom).toBeLessThan(35);
  // "/" right after pressing Fit (the focus on its button): the box opens.
  await expect(page.getByRole("button", { name: "Fit", exact: true })).toBeFocused();
  await page.keyboard.press("/");
  await expect(input).toBeFocused();
  await page.keyboard.type("Step 120");
  await page.keyboard.press("Enter");
  await expect(node("n120")).toBeFocused();
  await expect.poll(zoom).toBe(90);
  await expect(node("n120")).toBeInViewport();
  expect(errors).toEqual([]);
});

test("a node found by name in a graph drawn whole lands inside the canvas: the browser never scrolls it", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // Under 200 nodes every node is on the page, the far one too: focused
  // before the view had moved to it, the browser scrolled the canvas to
  // it, and the view's move then put it off the canvas.
  const { nodes, edges } = chainOfSteps(150, 160);
  const created = await page.request.post("/api/v1/graphs", { data: { document: { format_version: 2, name: "Drawn whole", nodes, edges } } });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const far = page.locator('.canvas-node[data-node="n140"]');
  await expect(far).toHaveCount(1);
  await page.getByTestId("find").click();
  await page.keyboard.type("Step 140");
  await page.keyboard.press("Enter");
  await expect(far).toBeFocused();
  const canvas = page.locator(".editor-canvas");
  const [box, within] = [(await far.boundingBox())!, (await canvas.boundingBox())!];
  expect(box.x).toBeGreaterThanOrEqual(within.x);
  expect(box.y).toBeGreaterThanOrEqual(within.y);
  expect(box.x + box.width).toBeLessThanOrEqual(within.x + within.width);
  expect(box.y + box.height).toBeLessThanOrEqual(within.y + within.height);
  expect(await canvas.evaluate((c) => [c.scrollLeft, c.scrollTop])).toEqual([0, 0]);
  expect(errors).toEqual([]);
});

test("the New graph menu goes by the arrow keys, and Escape gives its button the focus back", async ({
  page,
  errors,
}) => {
  await page.goto("/");
  await hydrated(page);
  const menu = page.locator("details.new-graph").first();
  const button = menu.locator("summary");
  const chat = menu.getByRole("button", { name: /^Chat agent/ });
  const empty = menu.getByRole("button", { name: /^Empty graph/ });
  const example = menu.getByRole("link", { name: /^From an example/ });
  await button.focus();
  // Down on the button opens the menu on its first choice.
  await page.keyboard.press("ArrowDown");
  await expect(menu).toHaveAttribute("open", "");
  await expect(chat).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(empty).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(example).toBeFocused();
  // Round from the last to the first, and back.
  await page.keyboard.press("ArrowDown");
  await expect(chat).toBeFocused();
  await page.keyboard.press("ArrowUp");
  await expect(example).toBeFocused();
  await page.keyboard.press("Home");
  await expect(chat).toBeFocused();
  await page.keyboard.press("End");
  await expect(example).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(menu).not.toHaveAttribute("open", "");
  await expect(button).toBeFocused();
  // Opened again, Enter on a choice makes the graph.
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await expect(empty).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await hydrated(page);
  await expect(page.locator(".canvas-node")).toHaveCount(0);
  // Building starts where the focus lands: an empty graph's at the node
  // kinds' search.
  await expect(page.locator(".palette-search")).toBeFocused();
  // A graph made from a template opens with the focus on its canvas, and
  // the address keeps no mark of it: a reload is a plain visit.
  await page.goto("/");
  await hydrated(page);
  await button.focus();
  await page.keyboard.press("ArrowDown");
  await expect(chat).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await hydrated(page);
  await expect(page.locator(".editor-canvas")).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.locator(".canvas-node").first()).toBeFocused();
  await page.reload();
  await hydrated(page);
  await expect(page.locator(".canvas-node").first()).toBeVisible();
  await expect(page.locator(".editor-canvas")).not.toBeFocused();
  expect(errors).toEqual([]);
});

test("Escape in a node's form goes back to the node, and again clears the selection", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const start = page.locator('.canvas-node[data-node="start"]');
  await start.click();
  const label = page.locator('.inspector input[name="label"]');
  await label.fill("Begin");
  await page.keyboard.press("Escape");
  // The field applied as it was left; the node has the focus, still selected.
  await expect(start).toBeFocused();
  await expect(start).toHaveClass(/selected/);
  await expect(start.locator(".canvas-node-label")).toHaveText("Begin");
  await page.keyboard.press("Escape");
  await expect(page.locator(".canvas-node.selected")).toHaveCount(0);
  // From a button of the form (an Insert chip), the same: back to the
  // node (it cleared the selection, and the focus went to the page).
  await page.getByLabel("Search node kinds").focus();
  await page.keyboard.type("llm");
  await page.keyboard.press("Enter");
  const llm = page.locator(".canvas-node.kind-llm");
  await expect(llm).toHaveClass(/selected/);
  const chip = page.locator(".inspector .template-chips .chip").first();
  await chip.focus();
  await page.keyboard.press("Escape");
  await expect(llm).toBeFocused();
  await expect(llm).toHaveClass(/selected/);
  expect(errors).toEqual([]);
});

test("the run panel's tabs from the keyboard: the arrows show a tab, and Enter on it keeps it shown", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await useExample(page, /Triage with handoffs/);
  const toggle = page.locator(".run-panel-toggle");
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await page.getByRole("tab", { name: "Run", exact: true }).focus();
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByRole("tab", { name: "Chat" })).toBeFocused();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  // Enter (or Space) on the tab shown shows it; it folded the panel.
  await page.keyboard.press("Enter");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await page.keyboard.press(" ");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("chat-input")).toBeVisible();
  // A click on the tab shown still folds it, as before.
  await page.getByRole("tab", { name: "Chat" }).click();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  expect(errors).toEqual([]);
});

test("the node kinds are one Tab stop, the arrows going from kind to kind", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const kinds = await page.locator(".palette-item").evaluateAll((items) => items.map((i) => i.getAttribute("data-kind")));
  expect(kinds.length).toBeGreaterThan(10);
  const focusedKind = () => page.evaluate(() => document.activeElement?.getAttribute("data-kind") ?? null);
  const search = page.getByRole("searchbox", { name: "Search node kinds" });
  await search.focus();
  // Tab: the first kind; the arrows go on, Home and End to the ends.
  await page.keyboard.press("Tab");
  expect(await focusedKind()).toBe(kinds[0]);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  expect(await focusedKind()).toBe(kinds[2]);
  await page.keyboard.press("ArrowUp");
  expect(await focusedKind()).toBe(kinds[1]);
  await page.keyboard.press("End");
  expect(await focusedKind()).toBe(kinds[kinds.length - 1]);
  await page.keyboard.press("Home");
  await page.keyboard.press("ArrowDown");
  // Tab leaves the kinds at once (16 stops stood before the canvas), and
  // Shift+Tab comes back to the kind it left.
  await page.keyboard.press("Tab");
  expect(await focusedKind()).toBeNull();
  expect(await page.evaluate(() => !!document.activeElement?.closest(".palette"))).toBe(false);
  await page.keyboard.press("Shift+Tab");
  expect(await focusedKind()).toBe(kinds[1]);
  // Enter adds it.
  await page.keyboard.press("Enter");
  await expect(page.locator(`.canvas-node.kind-${kinds[1]}`)).toHaveCount(
    1 + (kinds[1] === "start" || kinds[1] === "end" ? 1 : 0),
  );
  // Down from the search goes to the best match.
  await search.focus();
  await page.keyboard.type("route");
  await page.keyboard.press("ArrowDown");
  expect(await focusedKind()).toBe("router");
  await expectAccessible(page, "the palette");
  expect(errors).toEqual([]);
});

test("editing a node (a double click, Enter) shows the inspector folded away", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const id = await bare(page);
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const inspector = page.locator(".inspector");
  const label = page.getByRole("textbox", { name: "Label" });
  // Folded for room; a click on a node only selects it.
  await page.getByTestId("toggle-inspector").click();
  await expect(inspector).toBeHidden();
  const start = page.locator('.canvas-node[data-node="start"]');
  await start.click();
  await expect(inspector).toBeHidden();
  // A double click edits it: the inspector opens on it, its label in focus,
  // and what is typed goes there, not to the canvas's shortcuts (N made a
  // note).
  await start.dblclick();
  await expect(inspector).toBeVisible();
  await expect(label).toBeFocused();
  await page.keyboard.type("Nina");
  await expect(label).toHaveValue("Nina");
  await expect(page.locator(".sticky-note")).toHaveCount(0);
  await page.keyboard.press("Escape");
  // Folded again, Enter on a node does the same.
  await page.getByTestId("toggle-inspector").click();
  await expect(inspector).toBeHidden();
  await page.locator('.canvas-node[data-node="end"]').focus();
  await page.keyboard.press("Enter");
  await expect(inspector).toBeVisible();
  await expect(label).toBeFocused();
  await expect(label).toHaveAttribute("placeholder", "end");
  expect(errors).toEqual([]);
});

test("a hidden inspector's problems are counted on its button, and warnings are said up top", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const id = await chatGraph(page, "Warned", {
    nodes: [{ id: "stray", kind: "llm", label: "Stray", position: { x: 260, y: 160 } }],
    edges: [{ id: "c", from: "stray", to: "end" }],
  });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  // It can run, nothing is selected: at 1024 the inspector is away, and
  // its button says how many warnings it holds.
  await expect(page.locator(".inspector")).toBeHidden();
  const toggle = page.getByTestId("toggle-inspector");
  const count = page.getByTestId("hidden-problems");
  await expect(count).toHaveAttribute("data-count", "1");
  await expect(toggle).toHaveAccessibleName("Graph settings 1: 1 warning, and the inspector");
  await toggle.click();
  await expect(count).toHaveCount(0);
  const note = page.getByTestId("graph-problems-note");
  await expect(note).toHaveText(/It runs; 1 warning is worth a read\./);
  await note.getByRole("button", { name: "Show them" }).click();
  await expect(page.locator(".problem", { hasText: "can never run" })).toBeVisible();
  await expectAccessible(page, "the editor with a warning");
  expect(errors).toEqual([]);
});

test("Ctrl+Enter in a node's form runs the graph with what the field holds", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const id = await chatGraph(page, "Prompted");
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="reply"]').focus();
  await page.keyboard.press("Enter");
  const system = page.getByRole("textbox", { name: "System" });
  await system.focus();
  await page.keyboard.type("Answer in one line.");
  // Run from the field: a chat graph opens its chat, the focus in its box.
  await page.keyboard.press("Control+Enter");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  await expect
    .poll(async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document.nodes[1].config?.system)
    .toBe("Answer in one line.");
  expect(errors).toEqual([]);
});
