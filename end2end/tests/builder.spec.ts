// Building agents without writing JSON: "New graph" starts a chat agent
// that runs as it is; every node's settings are a form generated from its
// kind's schema (pickers, lists, maps, code fields with the validator's
// problems); problems come with one-click fixes; the state channels are a
// form too. No step here types into a JSON field.
import { test, expect, hydrated, place } from "./fixtures";
import { Page } from "@playwright/test";

const saved = (page: Page) => expect(page.getByTestId("save-status")).toHaveText("Saved");


/** Counts a person's actions: `act(step)` does one; `actions()` says how
 *  many so far. */
function counter() {
  let count = 0;
  return {
    act: async (step: () => Promise<unknown>) => {
      count += 1;
      await step();
    },
    actions: () => count,
  };
}

async function stored(page: Page): Promise<any> {
  const id = page.url().split("/").pop()!.split(/[?#]/)[0];
  return (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
}

test("a ReAct agent from New graph, with the mouse and keyboard only, answers as text", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto("/");
  await hydrated(page);
  // Each user action is counted: the figure is in docs/performance.md.
  const { act, actions } = counter();

  await act(() => page.getByRole("button", { name: "New graph" }).first().click());
  await act(() => page.getByRole("button", { name: /^Chat agent/ }).first().click());
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await hydrated(page);
  // It runs as it is: three nodes, no problems.
  await expect(page.locator(".canvas-node")).toHaveCount(3);
  await expect(page.getByTestId("problem-count")).toHaveText("0");

  // The agent's settings are a form: its tools are ticked from the server's.
  await act(() => page.locator('.canvas-node[data-node="agent"]').click());
  await expect(page.getByRole("textbox", { name: "System" })).toHaveValue(/helpful assistant/);
  await act(() => page.getByRole("group", { name: "Tools" }).getByLabel("calculator").check());
  await saved(page);
  expect((await stored(page)).nodes[1].config.tools).toEqual(["calculator"]);
  await page.screenshot({ path: "../target/e2e/screens/builder-agent-light.png" });

  // A chat graph opens on its chat; the answer is text.
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveAttribute("aria-selected", "true");
  await act(() => page.getByTestId("chat-input").click());
  await act(() => page.keyboard.type("What is 17 * 23?"));
  await act(() => page.keyboard.press("Enter"));
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(page.getByTestId("chat-messages").locator(".role-assistant").last()).toContainText("391");
  expect(actions()).toBeLessThanOrEqual(12);
  console.log(`builder: ${actions()} user actions from "New graph" to the answer`);
  expect(errors).toEqual([]);
});

test("a model plans a fan-out from New graph: no script, no JSON typed", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto("/");
  await hydrated(page);
  // Each user action is counted: the figure is in docs/graph-format.md.
  const { act, actions } = counter();
  /** Where a person drops a node to put it into the edge `from` → `to`:
   *  halfway between the two nodes' facing sides. */
  const between = async (from: string, to: string) => {
    const a = (await page.locator(`.canvas-node[data-node="${from}"]`).boundingBox())!;
    const b = (await page.locator(`.canvas-node[data-node="${to}"]`).boundingBox())!;
    return { x: (a.x + a.width + b.x) / 2, y: (a.y + a.height / 2 + b.y + b.height / 2) / 2 };
  };

  await act(() => page.getByRole("button", { name: "New graph" }).first().click());
  await act(() => page.getByRole("button", { name: /^Chat agent/ }).first().click());
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await hydrated(page);

  // A list channel for the plan, shaped as a list of text.
  await act(() => page.getByRole("button", { name: "+ Add channel" }).click());
  const name = page.locator('.channel-card[open] input[name="channel-name"]');
  await act(async () => {
    await name.fill("topics");
    await name.press("Tab");
  });
  const topics = page.locator(".channel-card", { hasText: "topics" });
  await act(() => topics.locator('select[name="channel-type"]').selectOption("list"));
  await act(() => topics.locator('select[name="schema-items"]').selectOption("string"));
  await saved(page);

  // A model call dropped onto the edge into the agent plans into `topics`.
  let at = await between("start", "agent");
  await act(() => place(page, "llm", at.x, at.y));
  await expect(page.locator(".editor-edge")).toHaveCount(3);
  await act(() => page.locator('select[name="config.output"]').selectOption("topics"));
  // A fan-out dropped onto the next edge sends each topic to the agent.
  at = await between("llm", "agent");
  await act(() => place(page, "fan_out", at.x, at.y));
  const over = page.locator('input[name="config.over"], textarea[name="config.over"]').first();
  // Its example is a list, not a condition.
  await expect(over).toHaveAttribute("placeholder", "topics");
  await act(async () => {
    await over.fill("topics");
    await over.press("Tab");
  });
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await saved(page);
  const document = await stored(page);
  expect(document.state.channels.topics.schema).toEqual({ type: "array", items: { type: "string" } });
  const byId = Object.fromEntries(document.nodes.map((node: any) => [node.id, node]));
  expect(byId.llm.config.output).toEqual("topics");
  expect(byId.fan_out.config).toEqual({ over: "topics", to: "agent" });
  const edges = document.edges.map((edge: any) => `${edge.from}>${edge.to}`).sort();
  // No edge out of the fan-out: it sends each item to the agent instead.
  expect(edges).toEqual(["agent>end", "llm>fan_out", "start>llm"]);
  await page.screenshot({ path: "../target/e2e/screens/builder-planner-light.png" });

  // The plan is a checked list; each topic reaches the agent; answers come back.
  await act(() => page.getByTestId("chat-input").click());
  await act(() => page.keyboard.type("How do heat pumps work?"));
  await act(() => page.keyboard.press("Enter"));
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 30_000 });
  // The plan (three topics, the offline model's), then one answer per topic.
  const replies = page.getByTestId("chat-messages").locator(".role-assistant");
  await expect(replies).toHaveCount(4);
  await expect(replies.first()).toContainText("offline topic 3: how do heat pumps work?");
  expect(actions()).toBeLessThanOrEqual(15);
  console.log(`planner: ${actions()} user actions from "New graph" to the answers`);
  expect(errors).toEqual([]);
});

test("a lone agent brings its conversation along and is made runnable by its one-click fix", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs", { data: {} });
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  // Placed in a graph with no conversation, the agent (which reads one)
  // comes with its channel: no problem about it, nothing to fix.
  await place(page, "agent", canvas.x + 400, canvas.y + 250);
  const problems = page.locator(".problems");
  await expect(problems.getByRole("button", { name: "Add a start node" })).toBeVisible();
  await expect(problems.getByRole("button", { name: /^Create channel/ })).toHaveCount(0);
  await expect(page.getByTestId("problem-count")).toHaveText("1");
  // Someone who does not see the list hears it change, and only then: the
  // graph's one problem (it has no start) was there before the agent came.
  const heard = page.getByTestId("problem-announcer");
  await expect(heard).toHaveText("");
  await problems.getByRole("button", { name: "Add a start node" }).click();
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(heard).toHaveText("No problems left: the graph can run.");
  // The fix took its button away: the focus goes to the list's heading,
  // not to the page, so the keyboard goes on from there.
  await expect(problems.locator(".inspector-title")).toBeFocused();
  await expect(page.locator(".canvas-node")).toHaveCount(2);
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  await saved(page);
  const document = await stored(page);
  expect(document.state.channels.messages).toEqual({
    type: "messages",
    reducer: "add_messages",
    scope: "thread",
  });
  expect(document.nodes.find((node: any) => node.kind === "start")).toMatchObject({ config: { inputs: ["messages"] } });
  // One undo step per change: the fix, then the agent with its channel.
  await page.locator(".editor-canvas").click({ position: { x: 300, y: 450 } });
  await page.keyboard.press("Control+z");
  await expect(page.locator(".canvas-node")).toHaveCount(1);
  await expect(heard).toHaveText(/^1 problem stops the graph from running\. /);
  await page.keyboard.press("Control+z");
  await expect(page.locator(".canvas-node")).toHaveCount(0);
  await saved(page);
  expect(Object.keys((await stored(page)).state?.channels ?? {})).toEqual([]);
  expect(errors).toEqual([]);
});

test("a kind clicked in the palette goes after the selected node, joined to it in one undo step", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Add after",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        { id: "end", kind: "end", position: { x: 300, y: 120 } },
      ],
      edges: [{ id: "e1", from: "start", to: "end" }],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const pairs = async () => (await stored(page)).edges.map((edge: any) => `${edge.from}→${edge.to}`).sort();
  // The start selected, a click on "llm": start → llm → end, the llm
  // selected, the end moved right to make room.
  await page.locator('.canvas-node[data-node="start"]').click();
  await page.locator('.palette-item[data-kind="llm"]').click();
  const llm = page.locator(".canvas-node.kind-llm");
  await expect(llm).toHaveClass(/selected/);
  await expect(page.locator(".editor-edge")).toHaveCount(2);
  await saved(page);
  const id = (await llm.getAttribute("data-node"))!;
  expect(await pairs()).toEqual([`${id}→end`, `start→${id}`]);
  const at = (node: string) => page.locator(`.canvas-node[data-node="${node}"]`).boundingBox();
  expect((await at("end"))!.x).toBeGreaterThan((await at(id))!.x + (await at(id))!.width);
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  // One undo step takes it all back.
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("Control+z");
  await expect(page.locator(".canvas-node")).toHaveCount(2);
  await saved(page);
  expect(await pairs()).toEqual(["start→end"]);
  // Nothing selected: a click adds the kind mid-view, joined to nothing.
  await page.keyboard.press("Escape");
  await page.locator('.palette-item[data-kind="set"]').click();
  await expect(page.locator(".canvas-node")).toHaveCount(3);
  await expect(page.locator(".editor-edge")).toHaveCount(1);
  expect(errors).toEqual([]);
});

test("a kind added after a router is a new branch on its free route; Ctrl+Enter in the palette's search runs, adding nothing", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Branch after",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        {
          id: "triage",
          kind: "router",
          config: { routes: [{ route: "billing", description: "money" }, { route: "technical", description: "bugs" }], otherwise: "technical" },
          position: { x: 300, y: 120 },
        },
        { id: "bill", kind: "llm", label: "Billing", position: { x: 560, y: 40 } },
        { id: "end", kind: "end", position: { x: 820, y: 120 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "triage" },
        { id: "e2", from: "triage", to: "bill", route: "billing" },
        { id: "e3", from: "bill", to: "end" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="triage"]').click();
  await page.locator('.palette-item[data-kind="llm"]').click();
  const added = page.locator(".canvas-node.kind-llm.selected");
  await expect(added).toHaveCount(1);
  const id = (await added.getAttribute("data-node"))!;
  await saved(page);
  const edges = (await stored(page)).edges.map((e: any) => `${e.from}→${e.to}:${e.route ?? ""}`).sort();
  expect(edges).toEqual(["bill→end:", "start→triage:", `triage→${id}:technical`, "triage→bill:billing"].sort());
  // Named after its route, not `llm_2`.
  await expect(added.locator(".canvas-node-label")).toHaveText("Technical");
  await expect(page.getByTestId("edit-announcer")).toHaveText("Added “Technical” (llm) after “triage”");
  // Every route taken now: one more is left unjoined, and says so.
  await page.locator('.canvas-node[data-node="triage"]').click();
  await page.locator('.palette-item[data-kind="llm"]').click();
  await expect(page.getByTestId("edit-announcer")).toContainText(
    "not joined: which way “triage” leads to it is yours to choose (C connects)",
  );
  await expect(page.locator(".canvas-node.kind-llm")).toHaveCount(3);
  await page.keyboard.press("Control+z");
  await expect(page.locator(".canvas-node.kind-llm")).toHaveCount(2);
  // Ctrl+Enter where the focus rests after adding (the palette's search):
  // Run's, not one more node: the chat graph opens its chat, the focus in
  // its box.
  const search = page.getByRole("searchbox", { name: "Search node kinds" });
  await search.fill("llm");
  await search.press("Control+Enter");
  await expect(page.getByTestId("chat-input")).toBeFocused();
  await expect(page.locator(".canvas-node")).toHaveCount(5);
  expect(errors).toEqual([]);
});

test("a problem of the graph's own goes to its setting, and a memory starts bounded, its bounds in sight", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "A bad default",
      state: {
        channels: {
          messages: { type: "messages", reducer: "add_messages", scope: "thread" },
          count: { type: "integer", default: "many" },
        },
      },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        { id: "end", kind: "end", position: { x: 300, y: 120 } },
      ],
      edges: [{ id: "e1", from: "start", to: "end" }],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await expect(page.getByTestId("problem-count")).toHaveText("1");
  // Enter on it, from the keyboard: the channel's card opens at its default.
  const problem = page.locator(".problems .problem").first();
  await expect(problem).toContainText("state.channels.count.default");
  await problem.focus();
  await page.keyboard.press("Enter");
  const field = page.locator('details.channel-card[open] input[name="channel-default"]');
  await expect(field).toBeFocused();
  await expect(field).toHaveValue("many");
  await field.fill("3");
  await field.press("Enter");
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  // A memory from the palette: no problem, its bound in sight and set.
  await page.locator('.canvas-node[data-node="start"]').click();
  await page.locator('.palette-item[data-kind="memory"]').click();
  await expect(page.locator(".canvas-node.kind-memory")).toHaveClass(/selected/);
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  const bound = page.getByRole("spinbutton", { name: /max messages/i });
  await expect(bound).toBeVisible();
  await expect(bound).toHaveValue("20");
  // The conversation it trims, left unset, says what the engine then uses.
  await page.locator(".config-form details.form-more:not(.form-advanced) > summary").click();
  const trims = page.locator('.config-form select[id$="messages"]');
  expect(await trims.evaluate((select: HTMLSelectElement) => select.selectedOptions[0].textContent)).toBe(
    "messages (the default)",
  );
  expect(errors).toEqual([]);
});

test("a router wired first takes its routes as they are typed: each goes to an edge that has none, its node keeping its name", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Wired first",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 160 } },
        { id: "triage", kind: "router", position: { x: 300, y: 160 } },
        { id: "llm_1", kind: "llm", position: { x: 600, y: 60 } },
        { id: "llm_2", kind: "llm", position: { x: 600, y: 260 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "triage" },
        { id: "e2", from: "triage", to: "llm_1" },
        { id: "e3", from: "triage", to: "llm_2" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="triage"]').click();
  const routes = page.getByRole("group", { name: /^Routes/ });
  await routes.getByRole("button", { name: "+ Add" }).click();
  await page.keyboard.type("billing");
  await page.keyboard.press("Enter");
  await page.keyboard.type("tech_support");
  await page.keyboard.press("Tab");
  await saved(page);
  const label = (id: string) => page.locator(`.canvas-node[data-node="${id}"] .canvas-node-label`);
  // The nodes were placed before: they keep their names, the routes
  // read on their edges.
  await expect(label("llm_1")).toHaveText("llm_1");
  await expect(label("llm_2")).toHaveText("llm_2");
  const edges = (await stored(page)).edges.map((e: any) => `${e.from}→${e.to}:${e.route ?? ""}`);
  expect(edges).toEqual(["start→triage:", "triage→llm_1:billing", "triage→llm_2:tech_support"]);
  await expect(page.locator(".editor-edge-label", { hasText: "billing" })).toHaveCount(1);
  await expect(page.locator(".editor-edge-label", { hasText: "tech_support" })).toHaveCount(1);
  // No problem is left of routes no edge carries.
  await expect(page.locator(".problem-list")).not.toContainText("no edge");
  // One undo takes back the last route with its edge's.
  await page.getByRole("button", { name: "Undo" }).click();
  await expect(page.locator(".editor-edge-label", { hasText: "tech_support" })).toHaveCount(0);
  await saved(page);
  const after = (await stored(page)).edges.map((e: any) => e.route ?? "");
  expect(after).toEqual(["", "billing", ""]);
  expect(errors).toEqual([]);
});

test("a fix pressed while a route is being typed applies both, at the first click", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Fix while typing",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        {
          id: "triage",
          kind: "router",
          label: "Triage",
          config: { routes: [{ route: "billing" }, { route: "other" }] },
          position: { x: 300, y: 120 },
        },
        { id: "billing", kind: "llm", label: "Billing", position: { x: 600, y: 40 } },
        { id: "other", kind: "llm", label: "Other", position: { x: 600, y: 200 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "triage" },
        { id: "e2", from: "triage", to: "billing", route: "billing" },
        { id: "e3", from: "triage", to: "other", route: "other" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="triage"]').click();
  const routes = page.getByRole("group", { name: /^Routes/ });
  await routes.getByRole("button", { name: "+ Add" }).click();
  await page.keyboard.type("technical");
  // Not applied yet: the press on the fix applies it (a new route, a new
  // problem: the problems are drawn again) and then the fix itself.
  const fix = page.locator(".inspector-section .fix-button", { hasText: /when no route fits/ });
  await fix.click();
  await saved(page);
  const router = (await stored(page)).nodes.find((node: any) => node.id === "triage");
  expect(router.config.routes.map((r: any) => r.route)).toEqual(["billing", "other", "technical"]);
  expect(router.config.otherwise).toBe("other");
  expect(errors).toEqual([]);
});

test("a router's routes are typed as a list: Enter goes to the next, Enter on a blank one leaves it", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Routes by Enter",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        { id: "triage", kind: "router", position: { x: 300, y: 120 } },
      ],
      edges: [{ id: "e1", from: "start", to: "triage" }],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="triage"]').click();
  const routes = page.getByRole("group", { name: /^Routes/ });
  await routes.getByRole("button", { name: "+ Add" }).click();
  const route = (at: number) => routes.locator(".form-row").nth(at).getByRole("textbox", { name: /^Route/ });
  await expect(route(0)).toBeFocused();
  await page.keyboard.type("billing");
  await page.keyboard.press("Enter");
  await expect(route(1)).toBeFocused();
  await page.keyboard.type("refunds");
  await page.keyboard.press("Enter");
  await expect(route(2)).toBeFocused();
  // Enter on the blank last row: out of the list, the row gone.
  await page.keyboard.press("Enter");
  await expect(routes.locator(".form-row")).toHaveCount(2);
  await expect(routes.getByRole("button", { name: "+ Add" })).toBeFocused();
  await saved(page);
  const router = (await stored(page)).nodes.find((node: any) => node.id === "triage");
  expect(router.config.routes.map((r: any) => r.route)).toEqual(["billing", "refunds"]);
  // Enter in a row before the last goes to the next row, adding none.
  await route(0).focus();
  await page.keyboard.press("Enter");
  await expect(route(1)).toBeFocused();
  await expect(routes.locator(".form-row")).toHaveCount(2);

  // A wire from the router dropped on the empty canvas says the route the
  // node added there will be on, and the node is named after it.
  const port = (await page.locator('.canvas-node[data-node="triage"] .port-out').boundingBox())!;
  await page.mouse.move(port.x + port.width / 2, port.y + port.height / 2);
  await page.mouse.down();
  await page.mouse.move(port.x - 60, port.y + 130, { steps: 8 });
  await page.mouse.up();
  const search = page.getByRole("combobox", { name: "Add after “triage” on billing" });
  await expect(search).toBeFocused();
  await search.fill("llm");
  await search.press("Enter");
  const added = page.locator(".canvas-node.kind-llm");
  await expect(added.locator(".canvas-node-label")).toHaveText("Billing");
  await saved(page);
  const edges = (await stored(page)).edges.map((e: any) => `${e.from}→${e.route ?? ""}`);
  expect(edges).toContain("triage→billing");
  expect(errors).toEqual([]);
});

test("an edge drawn from a router with no routes asks for its route there, and the route becomes the router's", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Drawn first",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 160 } },
        { id: "triage", kind: "router", label: "Triage", position: { x: 300, y: 160 } },
        { id: "llm_1", kind: "llm", position: { x: 620, y: 60 } },
        { id: "llm_2", kind: "llm", position: { x: 620, y: 260 } },
        { id: "end", kind: "end", position: { x: 940, y: 160 } },
      ],
      edges: [{ id: "e1", from: "start", to: "triage" }],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const draw = async (to: string) => {
    const port = (await page.locator('.canvas-node[data-node="triage"] .port-out').boundingBox())!;
    const target = (await page.locator(`.canvas-node[data-node="${to}"]`).boundingBox())!;
    await page.mouse.move(port.x + port.width / 2, port.y + port.height / 2);
    await page.mouse.down();
    await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 8 });
    await page.mouse.up();
  };
  // Drawn with the mouse: the router has no route to give it.
  await draw("llm_1");
  // The edge is selected and its route asked for at once.
  const route = page.locator(".inspector [name=route]");
  await expect(route).toBeFocused();
  await page.keyboard.type("billing");
  await page.keyboard.press("Enter");
  await saved(page);
  const document = await stored(page);
  expect(document.nodes.find((n: any) => n.id === "triage").config.routes).toEqual([{ route: "billing" }]);
  expect(document.edges.find((e: any) => e.from === "triage").route).toBe("billing");
  // The branch reads by what it is for on its edge; the node placed
  // before keeps its name (two tryouts found it renamed "Billing").
  await expect(page.locator(".editor-edge-label", { hasText: "billing" })).toHaveCount(1);
  await expect(page.locator('.canvas-node[data-node="llm_1"] .canvas-node-label')).toHaveText("llm_1");
  // A second edge: the router's one route is taken, so it asks again, and
  // a route it does not have yet is typed there too (the field offers the
  // router's routes, it does not hold the typing to them).
  await draw("llm_2");
  await expect(route).toBeFocused();
  await expect(route).toHaveAttribute("placeholder", "always (no route)");
  await page.keyboard.type("technical");
  await page.keyboard.press("Enter");
  await saved(page);
  let after = await stored(page);
  expect(after.nodes.find((n: any) => n.id === "triage").config.routes).toEqual([
    { route: "billing" },
    { route: "technical" },
  ]);
  expect(after.edges.find((e: any) => e.to === "llm_2").route).toBe("technical");
  await expect(page.locator('.canvas-node[data-node="llm_2"] .canvas-node-label')).toHaveText("llm_2");
  expect(after.nodes.map((n: any) => n.label ?? "")).toEqual(["", "Triage", "", "", ""]);
  // A third, left without a route, is taken whatever the router picks:
  // said on the edge, as a warning.
  await draw("end");
  await expect(route).toBeFocused();
  const warning = page.locator(".problem", { hasText: "carries no route" });
  await expect(warning).toHaveCount(1);
  await expect(warning).toContainText("the edge from “Triage” to end carries no route: it is taken whatever “Triage” picks");
  await saved(page);
  after = await stored(page);
  const last = after.edges.find((e: any) => e.to === "end");
  expect(last.route).toBeUndefined();
  // Deleted with the mouse from its form: the edge goes, the nodes stay.
  await expect(page.getByTestId("edge-delete")).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/edge-form-1440.png" });
  await page.getByTestId("edge-delete").click();
  await expect(page.locator(`.editor-edge[data-edge="${last.id}"]`)).toHaveCount(0);
  await expect(warning).toHaveCount(0);
  await saved(page);
  after = await stored(page);
  expect(after.edges.map((e: any) => e.to).sort()).toEqual(["llm_1", "llm_2", "triage"]);
  expect(after.nodes).toHaveLength(5);
  expect(errors).toEqual([]);
});

test("a router's routes typed after its edges are given to them in a click each", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const route = (name: string, description: string) => ({ route: name, description });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Support desk",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 0, y: 200 } },
        {
          id: "triage",
          kind: "router",
          label: "Triage",
          config: { routes: [route("billing", "money"), route("technical", "bugs"), route("general", "the rest")] },
          position: { x: 260, y: 200 },
        },
        { id: "llm_1", kind: "llm", label: "Technical", position: { x: 560, y: 0 } },
        { id: "llm_2", kind: "llm", label: "Billing", position: { x: 560, y: 200 } },
        { id: "llm_3", kind: "llm", label: "General", position: { x: 560, y: 400 } },
        { id: "end", kind: "end", position: { x: 860, y: 200 } },
      ],
      edges: [
        { id: "a", from: "start", to: "triage" },
        { id: "b", from: "triage", to: "llm_1" },
        { id: "c", from: "triage", to: "llm_2" },
        { id: "d", from: "triage", to: "llm_3" },
        { id: "e", from: "llm_1", to: "end" },
        { id: "f", from: "llm_2", to: "end" },
        { id: "g", from: "llm_3", to: "end" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const problems = page.locator(".problems");
  // Three routes with no edge, and a warning: no route to fall back on.
  await expect(page.getByTestId("problem-count")).toHaveText("4");
  await expect(problems.getByTestId("problems-split")).toHaveText("3 stop the run, 1 warning");
  await expect(problems.locator(".problem-warning")).toContainText("has no otherwise");
  // Up in the graph's settings (the list is far below them): how many stop
  // a run, one press from the first fix.
  const note = page.getByTestId("graph-problems-note");
  await expect(note).toContainText("3 problems stop this graph from running.");
  await note.getByRole("button", { name: "Show them" }).click();
  await expect(problems.locator(".fix-button").first()).toBeFocused();
  await page.screenshot({ path: "../target/e2e/screens/router-fixes-1280.png" });
  // Each route goes to the edge whose node is named after it, whatever
  // the order they were drawn in.
  for (const [name, to] of [
    ["billing", "Billing"],
    ["technical", "Technical"],
    ["general", "General"],
  ]) {
    await problems.getByRole("button", { name: `Send ${name} to ${to}` }).click();
  }
  await expect(page.getByTestId("problem-count")).toHaveText("1");
  // The fallback: the catch-all route, one click, at the field too.
  await page.locator('.canvas-node[data-node="triage"]').click();
  const otherwise = page.locator('input[name="config.otherwise"]');
  const otherwiseField = page.locator(".field", { has: otherwise }).last();
  await expect(otherwiseField.locator(".field-error")).toContainText("has no otherwise");
  // A name in a message is code, read without its backticks.
  await expect(otherwiseField.locator(".field-error code", { hasText: /^otherwise$/ }).first()).toBeVisible();
  // The field itself is marked, and described by its problem, for a screen
  // reader reaching it.
  await expect(otherwise).toHaveAttribute("aria-invalid", "true");
  await expect(otherwise).toHaveAccessibleDescription(/has no otherwise/);
  // A warning under its field is not an alert (it would interrupt the
  // typing); its fix, once clicked, gives the focus to the field.
  await expect(otherwiseField.locator(".field-error")).not.toHaveAttribute("role", "alert");
  await otherwiseField.getByRole("button", { name: "Take general when no route fits" }).click();
  await expect(otherwise).toHaveValue("general");
  await expect(otherwise).toBeFocused();
  await expect(otherwise).not.toHaveAttribute("aria-invalid");
  // Each row's remove button says which route it removes.
  await expect(page.getByRole("button", { name: "Remove route billing" })).toHaveCount(1);
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await saved(page);
  const routesNow = async () =>
    Object.fromEntries((await stored(page)).edges.map((edge: any) => [edge.to, edge.route ?? null]));
  expect(await routesNow()).toEqual({ triage: null, llm_1: "technical", llm_2: "billing", llm_3: "general", end: null });
  await expect(page.locator(".editor-edge-label", { hasText: "billing" })).toHaveCount(1);

  // A route renamed in the form takes its edge, and the fallback, along.
  const general = page.locator('input[name="config.routes.2.route"]');
  await general.fill("anything_else_at_all");
  await general.press("Tab");
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(otherwise).toHaveValue("anything_else_at_all");
  // The node named as the route was takes the new name (a typo corrected
  // in a route is corrected on its node).
  await expect(page.locator('.canvas-node[data-node="llm_3"] .canvas-node-label')).toHaveText("Anything else at all");
  await saved(page);
  expect(await routesNow()).toEqual({
    triage: null,
    llm_1: "technical",
    llm_2: "billing",
    llm_3: "anything_else_at_all",
    end: null,
  });
  // The router's labels, long ones too, lie apart and off the nodes.
  const boxes = async (selector: string) =>
    Promise.all((await page.locator(selector).all()).map(async (element) => (await element.boundingBox())!));
  const overlap = (a: any, b: any) =>
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  const labels = await boxes(".editor-edge-label");
  const nodes = await boxes(".canvas-node");
  expect(labels).toHaveLength(3);
  for (const [i, label] of labels.entries()) {
    for (const other of labels.slice(i + 1)) expect(overlap(label, other)).toBe(false);
    for (const node of nodes) expect(overlap(label, node)).toBe(false);
  }
  await page.screenshot({ path: "../target/e2e/screens/router-labels-1280.png" });
  // Zoomed out, the routes still read: never under 9 px on screen (11 px
  // scaled down with the graph would be 4 at 36%).
  const routeOnScreen = () =>
    page.locator(".editor-edge-label").first().evaluate((label) => {
      const scale = label.getBoundingClientRect().height / (label as HTMLElement).offsetHeight;
      return { zoom: scale, px: parseFloat(getComputedStyle(label).fontSize) * scale };
    });
  // Each label lies on its own edge's line: the line runs through the
  // label's middle (within 4 px on screen: a label where its edge arrives
  // ends short of the arrowhead, where the curve is still levelling out),
  // not above or beside it. (Zoomed far out, a label with no room on its
  // line between two close nodes goes above its target instead.)
  const offTheirEdges = () =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>(".editor-edge-label")].flatMap((label) => {
        const id = label.getAttribute("data-edge");
        const line = document.querySelector<SVGPathElement>(`g[data-edge="${id}"] .editor-edge-line`)!;
        const box = label.getBoundingClientRect();
        const middle = box.y + box.height / 2;
        const toScreen = line.getScreenCTM()!;
        let nearest = Infinity;
        const length = line.getTotalLength();
        for (let at = 0; at <= length; at += 0.5) {
          const { x, y } = line.getPointAtLength(at).matrixTransform(toScreen);
          const across = x < box.x ? box.x - x : x > box.right ? x - box.right : 0;
          nearest = Math.min(nearest, Math.hypot(across, y - middle));
        }
        return nearest > 4 ? [`${label.textContent}: ${nearest.toFixed(1)} px off`] : [];
      }),
    );
  expect(await offTheirEdges()).toEqual([]);
  const near = await routeOnScreen();
  expect(near.px).toBeGreaterThanOrEqual(8.95);
  for (let i = 0; i < 3; i++) await page.getByRole("button", { name: "Zoom out" }).click();
  const far = await routeOnScreen();
  expect(far.zoom).toBeLessThan(near.zoom * 0.6);
  expect(far.px).toBeGreaterThanOrEqual(8.95);
  for (let i = 0; i < 3; i++) await page.getByRole("button", { name: "Zoom in" }).click();
  expect((await routeOnScreen()).px).toBeCloseTo(near.px, 1);

  // Renamed behind the form's back (its JSON), the edge is left on a route
  // the router no longer has: the problem names the edge by its ends,
  // selects it when clicked, and its fix gives the edge the new name.
  await page.locator(".form-advanced summary").click();
  const json = page.locator('textarea[name="config"]');
  const config = JSON.parse(await json.inputValue());
  config.routes[2].route = "other";
  config.otherwise = "other";
  await json.fill(JSON.stringify(config, null, 2));
  await json.press("Tab");
  const stale = problems.locator("li", { hasText: "Triage → Anything else at all" });
  await expect(stale).toContainText("has no route anything_else_at_all");
  await stale.locator(".problem").click();
  await expect(page.locator(".editor-edge-label.selected")).toHaveText("anything_else_at_all");
  await expect(page.locator(".inspector")).toContainText("Edge");
  await stale.getByRole("button", { name: "Send other to Anything else at all, not anything_else_at_all" }).click();
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await saved(page);
  expect((await routesNow()).llm_3).toBe("other");
  // "Run to" names the nodes as they read.
  await page.getByRole("tab", { name: "Run" }).click();
  await expect(page.getByTestId("run-to").locator("option", { hasText: "before Billing (llm_2)" })).toHaveCount(1);
  expect(errors).toEqual([]);
});

test("routes, values and channels are edited as forms, and what is typed stays", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs", { data: {} });
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);

  // The state channels: add one, name it, type it; the reducers offered fit the type.
  await page.getByRole("button", { name: "+ Add channel" }).click();
  const card = page.locator(".channel-card").first();
  await card.locator('input[name="channel-name"]').fill("approved");
  await card.locator('input[name="channel-name"]').press("Tab");
  await page.locator(".channel-card", { hasText: "approved" }).locator('select[name="channel-type"]').selectOption("boolean");
  const reducers = page.locator(".channel-card", { hasText: "approved" }).locator('select[name="channel-reducer"] option');
  await expect(reducers).toHaveText(["replace"]);
  await page.getByRole("button", { name: "+ Add channel" }).click();
  await saved(page);
  let document = await stored(page);
  expect(document.state.channels.approved).toEqual({ type: "boolean", reducer: "replace" });
  expect(document.state.channels.channel).toEqual({ type: "string", reducer: "replace" });

  // The graph's description survives a click on the canvas and a reload.
  await page.locator('textarea[name="graph-description"]').fill("Decides refunds.");
  await page.locator(".editor-canvas").click({ position: { x: 300, y: 300 } });
  await saved(page);

  // A condition's routes: a list of route + expression rows, checked as typed.
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await place(page, "condition", canvas.x + 300, canvas.y + 200);
  await page.locator('.canvas-node[data-node="condition"]').click();
  await page.locator(".config-form").getByRole("button", { name: "+ Add" }).first().click();
  // The row added takes the focus: one types its route at once.
  await expect(page.locator('input[name="config.routes.0.route"]')).toBeFocused();
  // Nothing in it is said to be empty while it is being filled in; left
  // empty, it is.
  const rowErrors = page.locator(".config-form .form-row .field-error");
  await expect(rowErrors.first()).toBeAttached();
  await expect(rowErrors.first()).toBeHidden();
  await page.locator('input[name="config.otherwise"]').focus();
  await expect(rowErrors.first()).toBeVisible();
  await page.locator('input[name="config.routes.0.route"]').fill("yes");
  await page.locator('input[name="config.routes.0.route"]').press("Tab");
  const when = page.locator('input[name="config.routes.0.when"]');
  await when.fill("approved ==");
  const whenField = page.locator(".field", { has: when }).last();
  await expect(whenField.locator(".field-error", { hasText: "at column" })).toBeVisible();
  await when.fill("approved == true");
  await when.press("Tab");
  await page.locator('input[name="config.otherwise"]').fill("no");
  await page.locator('input[name="config.otherwise"]').press("Tab");
  await saved(page);
  document = await stored(page);
  expect(document.nodes[0].config).toEqual({ routes: [{ route: "yes", when: "approved == true" }], otherwise: "no" });

  // A set node's values: a map from channel to a value, an expression or a template.
  await place(page, "set", canvas.x + 600, canvas.y + 200);
  await page.locator('.canvas-node[data-node="set"]').click();
  await page.locator(".config-form").getByRole("button", { name: "+ Add" }).first().click();
  const key = page.locator(".config-form select.form-key").first();
  await expect(key).toHaveValue("approved");
  await page.locator(".config-form select.form-variant").first().selectOption("value");
  await page.locator('textarea[name="config.values.approved.value"]').fill("true");
  await page.locator('textarea[name="config.values.approved.value"]').press("Tab");
  await saved(page);
  document = await stored(page);
  expect(document.nodes[1].config).toEqual({ values: { approved: { value: true } } });

  // Every one of those is still there after a reload.
  await page.reload();
  await hydrated(page);
  await expect(page.locator('textarea[name="graph-description"]')).toHaveValue("Decides refunds.");
  await page.locator('.canvas-node[data-node="condition"]').click();
  await expect(page.locator('input[name="config.routes.0.when"]')).toHaveValue("approved == true");
  await expect(page.locator('input[name="config.otherwise"]')).toHaveValue("no");
  await page.screenshot({ path: "../target/e2e/screens/builder-condition-light.png" });
  expect(errors).toEqual([]);
});

/** A new graph from the Chat agent template, from the home page. */
async function newChatAgent(page: Page) {
  await page.goto("/");
  await hydrated(page);
  await page.getByRole("button", { name: "New graph" }).first().click();
  await page.getByRole("button", { name: /^Chat agent/ }).first().click();
  await expect(page).toHaveURL(/\/graphs\/[0-9a-f-]{36}$/);
  await hydrated(page);
}

test("at 1024×700 the canvas comes first, the panels fold away, and the run panel is resized by its edge", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await newChatAgent(page);
  await expect(page.locator(".canvas-node")).toHaveCount(3);

  // The canvas comes first: the node kinds are a rail of icons, and the
  // inspector waits until there is something to edit.
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  expect(canvas.width).toBeGreaterThan(940);
  // The page is the window's height: nothing (not the rail's hidden
  // words) makes it scroll.
  expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBe(700);
  expect((await page.locator(".palette").boundingBox())!.width).toBeLessThanOrEqual(56);
  await expect(page.locator(".inspector")).toBeHidden();
  const tabs = await page.locator(".run-tab").evaluateAll((all) =>
    all.map((tab) => Math.round(tab.getBoundingClientRect().top)),
  );
  expect(new Set(tabs).size).toBe(1);
  // The whole graph is in view, clear of the minimap (hidden: nothing is out of view).
  for (const node of await page.locator(".canvas-node").all()) {
    const box = (await node.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(canvas.x);
    expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width);
  }
  await expect(page.locator(".minimap")).toBeHidden();
  await page.screenshot({ path: "../target/e2e/screens/builder-1024-light.png" });

  // Its search button, or the focus, opens the rail over the canvas with
  // the kinds' names and the search; the canvas does not move. Escape in
  // the search folds it again. Under the pointer, an icon's tip says at
  // once what its kind does, beside the rail, over the canvas; it goes
  // with the pointer.
  await page.locator('.palette-item[data-kind="router"]').hover();
  const tip = page.getByTestId("palette-tip");
  await expect(tip).toHaveText(/^router: The model picks a route/);
  await expect(tip).toBeVisible();
  const rail = (await page.locator(".palette").boundingBox())!;
  expect((await tip.boundingBox())!.x).toBeGreaterThanOrEqual(rail.x + rail.width);
  await page.screenshot({ path: "../target/e2e/screens/builder-1024-rail-tip-light.png" });
  await expect(page.locator(".palette")).toHaveJSProperty("offsetWidth", 52);
  await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
  await expect(tip).toHaveCount(0);
  await page.getByTitle("Show the node kinds' names, and search them").click();
  await expect(page.locator(".palette")).toHaveJSProperty("offsetWidth", 220);
  await expect(page.locator(".palette-search")).toBeFocused();
  expect(await page.locator(".palette-search").evaluate((search: HTMLElement) => search.offsetWidth)).toBeGreaterThan(150);
  expect((await page.locator(".editor-canvas").boundingBox())!.width).toBe(canvas.width);
  await page.screenshot({ path: "../target/e2e/screens/builder-1024-rail-light.png" });
  await page.keyboard.press("Escape");
  await expect(page.locator(".palette")).toHaveJSProperty("offsetWidth", 52);
  await expect(page.locator(".editor-canvas")).toBeFocused();
  await page.locator('.palette-item[data-kind="llm"]').focus();
  await expect(page.locator(".palette")).toHaveJSProperty("offsetWidth", 220);
  await expect(page.locator('.palette-item[data-kind="llm"]')).toHaveAccessibleName(/^llm/);

  // A node selected: the inspector opens beside the canvas, the graph
  // staying where it was under the pointer. The toolbar stays left of it.
  const agent = page.locator('.canvas-node[data-node="agent"]');
  const was = (await agent.boundingBox())!;
  await agent.click();
  await expect(page.locator(".inspector")).toBeVisible();
  await expect(page.locator('.inspector input[name="label"]')).toBeVisible();
  const now = (await agent.boundingBox())!;
  expect(Math.abs(now.x - was.x) + Math.abs(now.y - was.y)).toBeLessThan(2);
  const toolbar = (await page.locator(".editor-toolbar").boundingBox())!;
  const inspector = (await page.locator(".inspector").boundingBox())!;
  expect(toolbar.x + toolbar.width).toBeLessThanOrEqual(inspector.x);
  await page.screenshot({ path: "../target/e2e/screens/builder-1024-selected-light.png" });
  await page.keyboard.press("Escape");
  await expect(page.locator(".inspector")).toBeHidden();

  // A problem that stops the graph from running keeps it open, selection
  // or not: a router with no routes. Undone, the inspector goes again.
  await page.locator('.palette-item[data-kind="router"]').focus();
  await page.keyboard.press("Enter");
  await expect(page.locator(".canvas-node")).toHaveCount(4);
  await page.locator(".editor-canvas").focus();
  await page.keyboard.press("Escape");
  await expect(page.locator(".canvas-node.selected")).toHaveCount(0);
  await expect(page.locator(".inspector")).toBeVisible();
  await expect(page.locator(".problem-list")).toContainText("route");
  await page.keyboard.press("Control+z");
  await expect(page.locator(".canvas-node")).toHaveCount(3);
  await expect(page.locator(".inspector")).toBeHidden();

  // Both side panels fold away, and the canvas takes the room; the
  // inspector folded stays folded, selection or not, until shown again.
  await page.getByTestId("toggle-palette").click();
  await expect(page.locator(".palette")).toHaveCount(0);
  await agent.click();
  await expect(page.locator(".inspector")).toBeVisible();
  await expect(page.getByTestId("toggle-inspector")).toHaveAttribute("aria-pressed", "true");
  await page.getByTestId("toggle-inspector").click();
  await expect(page.locator(".inspector")).toBeHidden();
  const wide = (await page.locator(".editor-canvas").boundingBox())!;
  expect(wide.width).toBeGreaterThanOrEqual(1020);
  await agent.click();
  await expect(page.locator(".inspector")).toBeHidden();
  // Shown again, it stays, with nothing selected too.
  await page.getByTestId("toggle-inspector").click();
  await expect(page.locator(".inspector")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.locator(".inspector")).toBeVisible();

  // A new conversation leaves the canvas most of the stage; the run
  // panel's top edge drags it taller; the arrow keys move it too.
  const panel = page.getByTestId("run-panel");
  const before = (await panel.boundingBox())!;
  const stage = (await page.locator(".editor-stage").boundingBox())!;
  expect(before.height).toBeLessThanOrEqual(stage.height * 0.4 + 1);
  await page.mouse.move(before.x + 200, before.y + 1);
  await page.mouse.down();
  await page.mouse.move(before.x + 200, before.y - 99, { steps: 5 });
  await page.mouse.up();
  const dragged = (await panel.boundingBox())!;
  expect(Math.abs(dragged.height - (before.height + 100))).toBeLessThanOrEqual(4);
  await page.getByTestId("run-panel-grip").focus();
  await page.keyboard.press("ArrowUp");
  const taller = (await panel.boundingBox())!;
  expect(Math.round(taller.height - dragged.height)).toBe(24);
  // The grip says the height it set, as a separator's value.
  const said = Number(await page.getByTestId("run-panel-grip").getAttribute("aria-valuenow"));
  expect(Math.abs(said - taller.height)).toBeLessThanOrEqual(2);

  // Made as short as it goes, the chat keeps its box to type in in sight,
  // inside the window.
  const top = (await panel.boundingBox())!;
  await page.mouse.move(top.x + 200, top.y + 1);
  await page.mouse.down();
  await page.mouse.move(top.x + 200, top.y + 600, { steps: 5 });
  await page.mouse.up();
  const least = (await panel.boundingBox())!;
  expect(Math.round(least.height)).toBe(180);
  const input = (await page.getByTestId("chat-input").boundingBox())!;
  expect(input.y).toBeGreaterThanOrEqual(least.y);
  expect(input.y + input.height).toBeLessThanOrEqual(Math.min(least.y + least.height, 700));
  await expect(page.getByTestId("chat-input")).toBeInViewport({ ratio: 1 });

  // This browser remembers the layout on the next graph it opens: the
  // node kinds folded, the run panel's height (not one that short: a
  // reply would have no room).
  await page.getByTestId("run-panel-grip").focus();
  for (let i = 0; i < 5; i++) await page.keyboard.press("ArrowUp");
  await expect(panel).toHaveJSProperty("offsetHeight", 300);
  await page.getByTestId("toggle-palette").click();
  await expect(page.locator(".palette")).toHaveCount(1);
  await page.getByTestId("toggle-palette").click();
  await expect(page.locator(".palette")).toHaveCount(0);
  await newChatAgent(page);
  await expect(page.locator(".palette")).toHaveCount(0);
  await expect(page.locator(".inspector")).toBeVisible();
  await expect(panel).toHaveJSProperty("offsetHeight", 300);
  await page.getByTestId("toggle-palette").click();
  await expect(page.locator(".palette")).toHaveCount(1);
  expect(errors).toEqual([]);
});

test("at 1024×700 the palette open over the canvas keeps the tools in one row and working, and a chain built from it in sight", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const created = await page.request.post("/api/v1/graphs", {
    data: { document: { format_version: 2, name: "Narrow build", nodes: [], edges: [] } },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  // An empty graph opens with the focus in the kinds' search: the palette
  // is open over the canvas.
  const search = page.locator(".palette-search");
  await expect(search).toBeFocused();
  await expect(page.locator(".palette")).toHaveJSProperty("offsetWidth", 220);
  for (const kind of ["start", "llm", "end"]) {
    await search.fill(kind);
    await page.keyboard.press("Enter");
  }
  await expect(page.locator(".canvas-node")).toHaveCount(3);
  await expect(search).toBeFocused();
  // The chain is in sight right of the open palette, its start too.
  const palette = (await page.locator(".palette").boundingBox())!;
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  for (const node of await page.locator(".canvas-node").all()) {
    const box = (await node.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(palette.x + palette.width);
    expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width);
  }
  // The tools stepped aside are one row, left of the inspector.
  const toolbar = (await page.locator(".editor-toolbar").boundingBox())!;
  expect(toolbar.height).toBeLessThan(50);
  expect(toolbar.x).toBeGreaterThanOrEqual(palette.x + palette.width);
  await page.screenshot({ path: "../target/e2e/screens/builder-1024-palette-open-chain.png" });
  // A press on one of them does what it says (the palette closing under
  // the press used to move them away before the click).
  await page.getByRole("button", { name: "Note", exact: true }).click();
  await expect(page.locator(".sticky-note")).toHaveCount(1);
  await expect(page.locator(".sticky-note textarea")).toBeFocused();
  // Closed, the palette gives the tools their place and Export back.
  await expect(page.locator(".palette")).toHaveJSProperty("offsetWidth", 52);
  await expect(page.getByRole("link", { name: "Export" })).toBeVisible();
  // Escape from the search goes back to the canvas on the node just
  // added, so the arrows go on from it.
  await search.focus();
  await search.fill("set");
  await page.keyboard.press("Enter");
  await expect(page.locator(".canvas-node")).toHaveCount(4);
  await page.keyboard.press("Escape");
  await expect(page.locator(".canvas-node.selected")).toHaveCount(1);
  await expect(page.locator(".canvas-node.selected")).toBeFocused();
  expect(errors).toEqual([]);
});

test("templates complete channel names as typed, and a channel renamed is renamed everywhere", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Renames",
      state: {
        channels: {
          question: { type: "string" },
          answer: { type: "string" },
          messages: { type: "messages", reducer: "add_messages" },
        },
      },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["question"] }, position: { x: 0, y: 0 } },
        { id: "reply", kind: "llm", config: { prompt: "Answer", messages: "messages", output: "answer" }, position: { x: 260, y: 0 } },
        { id: "end", kind: "end", position: { x: 520, y: 0 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "reply", condition: "len(question) > 0" },
        { id: "e2", from: "reply", to: "end" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);

  // In the prompt, `{{` offers the channels; typing narrows them, Enter takes one.
  await page.locator('.canvas-node[data-node="reply"]').click();
  const prompt = page.locator('textarea[name="config.prompt"]');
  await prompt.click();
  await prompt.press("End");
  await prompt.pressSequentially(" {{ qu");
  const offered = page.getByTestId("template-complete");
  await expect(offered.getByRole("option")).toHaveText(["question"]);
  await prompt.press("Enter");
  await expect(offered).toHaveCount(0);
  await expect(prompt).toHaveValue("Answer {{ question }}");
  // With the mouse: pick from the list.
  await prompt.pressSequentially(" or {{ ");
  await expect(offered.getByRole("option")).toHaveText(["answer", "messages", "question"]);
  await offered.getByRole("option", { name: "answer" }).click();
  await expect(prompt).toHaveValue("Answer {{ question }} or {{ answer }}");
  // Escape closes the list and keeps what is typed.
  await prompt.pressSequentially(" {{ m");
  await prompt.press("Escape");
  await expect(offered).toHaveCount(0);
  await prompt.pressSequentially("essages }}");
  await page.locator(".editor-canvas").click({ position: { x: 600, y: 400 } });
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored(page)).nodes[1].config.prompt).toBe("Answer {{ question }} or {{ answer }} {{ messages }}");

  // Renaming `question` renames it everywhere it is used, as one undo step.
  await page.locator(".channel-card summary", { hasText: "question" }).click();
  const name = page.locator(".channel-card", { hasText: "question" }).locator('input[name="channel-name"]');
  await name.fill("query");
  await name.press("Tab");
  await expect(page.getByTestId("rename-notice")).toHaveText("Renamed `question` to `query` in 4 places.");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  let document = await stored(page);
  expect(Object.keys(document.state.channels).sort()).toEqual(["answer", "messages", "query"]);
  expect(document.nodes[0].config.inputs).toEqual(["query"]);
  expect(document.nodes[1].config.prompt).toBe("Answer {{ query }} or {{ answer }} {{ messages }}");
  expect(document.edges[0].condition).toBe("len(query) > 0");
  // The renamed card stays open; a name that is taken is refused, and
  // nothing changes.
  const again = page.locator(".channel-card", { hasText: "query" }).locator('input[name="channel-name"]');
  await expect(again).toBeVisible();
  await again.fill("answer");
  await again.press("Tab");
  await expect(page.getByTestId("rename-notice")).toHaveText("Not renamed: a channel named `answer` exists already.");
  await expect(again).toHaveValue("query");
  // One undo puts the old name back everywhere.
  await page.locator(".editor-canvas").click({ position: { x: 600, y: 400 } });
  await page.keyboard.press("Control+z");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  document = await stored(page);
  expect(document.edges[0].condition).toBe("len(question) > 0");
  expect(document.nodes[0].config.inputs).toEqual(["question"]);
  expect(errors).toEqual([]);
});

test("a problem many nodes share is one line with one fix, at 1440", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // Five model nodes read a conversation no channel holds: five problems,
  // one fix for all of them.
  const steps = ["Plan", "Draft", "Check", "Polish", "Sum up"];
  const nodes: any[] = [{ id: "start", kind: "start" }];
  steps.forEach((label, i) => nodes.push({ id: `s${i}`, kind: "llm", label }));
  nodes.push({ id: "end", kind: "end" });
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, from: nodes[i].id, to: node.id }));
  const created = await page.request.post("/api/v1/graphs", {
    data: { document: { format_version: 2, name: "Shared problem", nodes, edges } },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const problems = page.locator(".problems");
  const shared = /messages is not a channel/;
  const line = problems.locator(".problem-list > li", { hasText: shared });
  await expect(line).toHaveCount(1);
  await expect(line).toContainText("Plan (s0), Draft (s1), Check (s2) and 2 more nodes");
  await expect(line.locator(".fix-button")).toHaveCount(1);
  await expect(problems.locator(".fix-button")).toHaveCount(
    await problems.locator(".problem-list > li").count(),
  );
  await line.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../target/e2e/screens/shared-problem-1440.png" });
  // Its place selects every node it names.
  await line.locator(".problem").click();
  await expect(page.locator(".canvas-node.selected")).toHaveCount(5);
  await page.keyboard.press("Escape");
  await page.locator(".editor-canvas").click({ position: { x: 5, y: 300 } });
  // One press fixes it at every node.
  await expect(line).toHaveCount(1);
  await line.locator(".fix-button").click();
  await expect(problems.locator(".problem-list > li", { hasText: shared })).toHaveCount(0);
  expect(errors).toEqual([]);
});

test("+ Add takes the press that lands on it, though leaving the field draws a warning above it", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 2,
      name: "Add under a warning",
      state: { channels: { messages: { type: "messages", reducer: "add_messages" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        {
          id: "triage",
          kind: "router",
          config: { routes: [{ route: "billing", description: "invoices and refunds" }] },
          position: { x: 300, y: 120 },
        },
      ],
      edges: [{ id: "e1", from: "start", to: "triage" }],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="triage"]').click();
  const routes = page.getByRole("group", { name: /^Routes/ });
  const add = routes.getByRole("button", { name: "+ Add" });
  await add.click();
  const rows = routes.locator(".form-row");
  await expect(rows).toHaveCount(2);
  // A route with no description: leaving its field warns of it, above
  // the button. The press lands where the button was before that.
  await page.keyboard.type("lookup");
  const where = (await add.boundingBox())!;
  await page.mouse.click(where.x + where.width / 2, where.y + where.height / 2);
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(2).getByRole("textbox", { name: /^Route/ })).toBeFocused();
  await expect(rows.nth(1).getByRole("textbox", { name: /^Route/ })).toHaveValue("lookup");
  expect(errors).toEqual([]);
});
