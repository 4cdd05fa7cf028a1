// Groups: a frame around a set of nodes, kept in the document for people.
// Made from a selection with Ctrl+G, named in the inspector, moved by its
// bar, collapsed to one card that edges end at and a run's progress shows
// on, reached and expanded from the keyboard, kept across a reload, undone,
// and ungrouped.
import { test, expect, hydrated, expectAccessible } from "./fixtures";

const row = (id: string, kind: string, x: number, label?: string) => ({
  id,
  kind,
  ...(label ? { label } : {}),
  ...(kind === "set" ? { config: { values: { note: { value: id } } } } : {}),
  position: { x, y: 120 },
});

// A set node named `label` whose top-left corner is at (x, y).
const at = (id: string, label: string, x: number, y: number) => ({
  id,
  kind: "set",
  label,
  config: { values: { note: { value: id } } },
  position: { x, y },
});

const graph = {
  format_version: 2,
  name: "Grouped",
  state: { channels: { note: { type: "string" } } },
  nodes: [
    row("start", "start", 0),
    row("fetch", "set", 240, "Fetch"),
    row("summarise", "set", 480, "Summarise"),
    row("write", "set", 720, "Write"),
    row("end", "end", 960),
  ],
  edges: [
    { id: "e1", from: "start", to: "fetch" },
    { id: "e2", from: "fetch", to: "summarise" },
    { id: "e3", from: "summarise", to: "write" },
    { id: "e4", from: "write", to: "end" },
  ],
};

test("nodes are grouped, named, moved, collapsed to a card a run shows on, expanded from the keyboard and ungrouped", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs", { data: { document: graph } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);

  // Three nodes selected, grouped with Ctrl+G.
  await node("fetch").click();
  await node("summarise").click({ modifiers: ["Shift"] });
  await node("write").click({ modifiers: ["Shift"] });
  await page.keyboard.press("Control+g");
  const frame = page.getByTestId("group-frame");
  await expect(frame).toHaveCount(1);
  await expect(frame).toContainText("Group 1");
  await expect(frame).toContainText("3 nodes");
  // The inspector holds the group: named there.
  const name = page.getByTestId("group-label");
  await expect(name).toHaveValue("Group 1");
  await name.fill("Research");
  await name.press("Enter");
  await expect(frame).toContainText("Research");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  let document = await stored();
  expect(document.groups).toEqual([
    { id: "group-1", label: "Research", nodes: ["fetch", "summarise", "write"] },
  ]);
  // A colour, from the keyboard too: the radios of the group's inspector.
  await page.getByTestId("group-color").getByRole("radio", { name: "green" }).focus();
  await page.keyboard.press("ArrowRight");
  await expect(frame).toHaveClass(/tint-amber/);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups[0].color).toBe("amber");
  await page.screenshot({ path: "../target/e2e/screens/group-color-1440.png" });
  // One undo step.
  await page.getByRole("button", { name: "Undo" }).click();
  await expect(frame).toHaveClass(/tint-indigo/);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups[0].color).toBeUndefined();

  // The frame's bar drags its nodes together; the others stay.
  const before = await node("summarise").boundingBox();
  const startBefore = await node("start").boundingBox();
  const bar = await frame.locator(".canvas-group-bar").boundingBox();
  await page.mouse.move(bar!.x + 120, bar!.y + bar!.height / 2);
  await page.mouse.down();
  await page.mouse.move(bar!.x + 120, bar!.y + bar!.height / 2 + 120, { steps: 6 });
  await page.mouse.up();
  const after = await node("summarise").boundingBox();
  expect(Math.round(after!.y - before!.y)).toBeGreaterThan(80);
  expect((await node("start").boundingBox())!.y).toBeCloseTo(startBefore!.y, 0);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  document = await stored();
  const y = (id: string) => document.nodes.find((n: any) => n.id === id).position.y;
  expect(y("fetch")).toBe(y("write"));
  expect(y("fetch")).toBeGreaterThan(y("start") + 80);

  await page.screenshot({ path: "../target/e2e/screens/group-frame-1440.png" });

  // Collapsed: one card; edges from outside end at it, those inside go.
  await frame.getByTestId("group-collapse").click();
  const card = page.getByTestId("group-box");
  await expect(card).toHaveCount(1);
  await expect(card).toContainText("Research");
  await expect(card).toContainText("3 nodes");
  await expect(node("summarise")).toHaveCount(0);
  await expect(page.locator('.editor-edge[data-edge="e1"]')).toHaveCount(1);
  await expect(page.locator('.editor-edge[data-edge="e4"]')).toHaveCount(1);
  await expect(page.locator('.editor-edge[data-edge="e2"]')).toHaveCount(0);
  await expect(page.locator('.editor-edge[data-edge="e3"]')).toHaveCount(0);
  // The edge in ends at the card's left: its path's last point is there.
  const cardBox = await card.boundingBox();
  const edgeBox = await page.locator('.editor-edge[data-edge="e1"] path').first().boundingBox();
  expect(Math.abs(edgeBox!.x + edgeBox!.width - cardBox!.x)).toBeLessThan(30);
  // It stays selected, as a card: the inspector offers to expand it.
  await expect(card).toHaveClass(/selected/);
  await expect(page.getByTestId("group-toggle")).toHaveText("Expand");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups[0].collapsed).toBe(true);

  // A run's progress shows on the card.
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(card).toHaveAttribute("data-state", "succeeded");
  await page.screenshot({ path: "../target/e2e/screens/group-collapsed-1440.png" });
  await expectAccessible(page, "a collapsed group on the canvas");

  // Kept across a reload: the server draws the card.
  await page.reload();
  await hydrated(page);
  await expect(card).toHaveCount(1);
  await expect(node("fetch")).toHaveCount(0);

  // From the keyboard: the arrow from Start reaches the card; Enter opens
  // it and the focus goes to its first node.
  await node("start").focus();
  await page.keyboard.press("ArrowRight");
  await expect(card).toBeFocused();
  await expect(card).toHaveAttribute("aria-label", /Research, collapsed group of 3 nodes/);
  await page.keyboard.press("Enter");
  await expect(card).toHaveCount(0);
  await expect(node("fetch")).toBeFocused();
  await expect(frame).toHaveCount(1);
  // Undone, it is collapsed again, and the node that was selected inside
  // has its whole group selected: the card shows it.
  await page.keyboard.press("Control+z");
  await expect(card).toHaveCount(1);
  await expect(card).toHaveClass(/selected/);
  await page.keyboard.press("Control+y");
  await expect(card).toHaveCount(0);

  // Duplicated whole, the copies get a group of their own; undone, gone.
  await frame.locator(".canvas-group-label").click();
  await page.keyboard.press("Control+d");
  const frames = page.getByTestId("group-frame");
  await expect(frames).toHaveCount(2);
  await expect(frames.nth(1)).toContainText("Research");
  await expect(frames.nth(1)).toContainText("3 nodes");
  await page.keyboard.press("Control+z");
  await expect(frames).toHaveCount(1);

  await page.setViewportSize({ width: 1024, height: 700 });
  await page.keyboard.press("f");
  await page.screenshot({ path: "../target/e2e/screens/group-frame-1024.png" });
  // The inspector's form (a set node's here) fits its 300 px panel: no
  // field pushes it past the panel's edge.
  const overflowing = await page.evaluate(() => {
    const inspector = document.querySelector(".inspector")!;
    const edge = inspector.getBoundingClientRect().right;
    return Array.from(inspector.querySelectorAll("input, select, textarea, button"))
      .filter((e) => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().right > edge + 1)
      .map((e) => e.outerHTML.slice(0, 80));
  });
  expect(overflowing).toEqual([]);
  await expectAccessible(page, "a group's frame on the canvas");

  // Ungrouped from the inspector: the frame goes, the nodes stay.
  await frame.locator(".canvas-group-label").click();
  await expect(page.getByTestId("group-label")).toHaveValue("Research");
  await page.getByTestId("ungroup").click();
  await expect(frame).toHaveCount(0);
  await expect(node("summarise")).toHaveCount(1);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups).toBeUndefined();
  expect(errors).toEqual([]);
});

test("a router's routes into one collapsed group fan out, their labels apart", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const r = (route: string) => ({ route, description: route });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Routes into a group",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 200 } },
        {
          id: "triage",
          kind: "router",
          config: { routes: [r("billing"), r("refunds"), r("tech_support")], otherwise: "tech_support" },
          position: { x: 300, y: 200 },
        },
        { id: "a", kind: "llm", position: { x: 600, y: 60 } },
        { id: "b", kind: "llm", position: { x: 600, y: 200 } },
        { id: "c", kind: "llm", position: { x: 600, y: 340 } },
        { id: "end", kind: "end", position: { x: 900, y: 200 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "triage" },
        { id: "e2", from: "triage", to: "a", route: "billing" },
        { id: "e3", from: "triage", to: "b", route: "refunds" },
        { id: "e4", from: "triage", to: "c", route: "tech_support" },
        { id: "e5", from: "a", to: "end" },
        { id: "e6", from: "b", to: "end" },
        { id: "e7", from: "c", to: "end" },
      ],
      groups: [{ id: "g1", label: "Answers", nodes: ["a", "b", "c"], collapsed: true }],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await expect(page.getByTestId("group-box")).toHaveCount(1);
  const labels = page.locator(".editor-edge-label");
  await expect(labels).toHaveCount(3);
  const boxes = await labels.evaluateAll((all) =>
    all.map((label) => {
      const r = label.getBoundingClientRect();
      return { text: label.textContent, x: r.x, y: r.y, right: r.right, bottom: r.bottom };
    }),
  );
  for (const a of boxes) {
    for (const b of boxes) {
      if (a === b) continue;
      const apart = a.right <= b.x || b.right <= a.x || a.bottom <= b.y || b.bottom <= a.y;
      expect(apart, `${a.text} and ${b.text} overlap`).toBe(true);
    }
  }
  expect(errors).toEqual([]);
});

test("a graph with broken groups opens with a warning its fix mends, and a deleted node leaves its group", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const broken = {
    ...graph,
    groups: [{ id: "g", label: "Broken", nodes: ["fetch", "ghost", "summarise", "write"] }],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document: broken } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("problem-count")).toHaveText("1");
  await expect(page.locator(".problem-list")).toContainText("ghost");
  await expect(page.getByTestId("group-frame")).toContainText("Broken");
  // Its fix drops the missing node.
  await page.getByRole("button", { name: "Tidy the groups" }).click();
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups).toEqual([
    { id: "g", label: "Broken", nodes: ["fetch", "summarise", "write"] },
  ]);
  // A node deleted leaves its group.
  await page.locator('.canvas-node[data-node="summarise"]').click();
  await page.keyboard.press("Delete");
  await expect(page.getByTestId("group-frame")).toContainText("2 nodes");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups).toEqual([{ id: "g", label: "Broken", nodes: ["fetch", "write"] }]);
  // Deleted from the middle of the chain, it leaves its neighbours joined,
  // and a screen reader hears both.
  await expect(page.getByTestId("edit-announcer")).toHaveText("Deleted “Summarise”; “Fetch” now leads to “Write”");
  // The focus goes to the node before it, not to the page.
  await expect(page.locator('.canvas-node[data-node="fetch"]')).toBeFocused();
  expect(
    (await stored()).edges.map((edge: { from: string; to: string }) => `${edge.from}>${edge.to}`),
  ).toEqual(["start>fetch", "write>end", "fetch>write"]);

  // A node dragged well away from its group leaves it: the frame does not
  // stretch after it. One undo puts it back, in its place and its group.
  const frame = page.getByTestId("group-frame");
  const frameBefore = (await frame.boundingBox())!;
  const write = (await page.locator('.canvas-node[data-node="write"]').boundingBox())!;
  await page.mouse.move(write.x + 60, write.y + 20);
  await page.mouse.down();
  await page.mouse.move(write.x + 60, write.y + 320, { steps: 8 });
  await page.mouse.up();
  await expect(frame).toContainText("1 node");
  const frameAfter = (await frame.boundingBox())!;
  expect(frameAfter.y + frameAfter.height).toBeLessThan(write.y + 320);
  expect(frameAfter.height).toBeLessThanOrEqual(frameBefore.height);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups).toEqual([{ id: "g", label: "Broken", nodes: ["fetch"] }]);
  await page.keyboard.press("Control+z");
  await expect(frame).toContainText("2 nodes");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups).toEqual([{ id: "g", label: "Broken", nodes: ["fetch", "write"] }]);
  // Undo says what it took back.
  await expect(page.getByTestId("edit-announcer")).toHaveText(/^Undone: moved a node; edited the groups/);
  expect(errors).toEqual([]);
});

test("Layout keeps each group's nodes together: its frame holds them and no other", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // A side branch beside the main line; the group is Fetch and Write,
  // with Summarise (not in it) between them, as a person might group them.
  const document = {
    ...graph,
    name: "Grouped, laid out",
    nodes: [...graph.nodes, row("side", "set", 480, "Side"), row("side2", "set", 720, "Side 2")],
    edges: [
      ...graph.edges,
      { id: "e5", from: "start", to: "side" },
      { id: "e6", from: "side", to: "side2" },
      { id: "e7", from: "side2", to: "end" },
    ],
    groups: [{ id: "g", label: "Work", nodes: ["fetch", "write", "side2"] }],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.getByRole("button", { name: "Layout" }).click();
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const frame = (await page.getByTestId("group-frame").boundingBox())!;
  const inside = (box: { x: number; y: number; width: number; height: number }) =>
    box.x < frame.x + frame.width && frame.x < box.x + box.width && box.y < frame.y + frame.height && frame.y < box.y + box.height;
  for (const id of ["start", "summarise", "side", "end"]) {
    const box = (await page.locator(`.canvas-node[data-node="${id}"]`).boundingBox())!;
    expect(inside(box), `${id} is not in the group's frame`).toBe(false);
  }
  for (const id of ["fetch", "write", "side2"]) {
    const box = (await page.locator(`.canvas-node[data-node="${id}"]`).boundingBox())!;
    expect(inside(box), `${id} is in the group's frame`).toBe(true);
  }
  await page.screenshot({ path: "../target/e2e/screens/group-laid-out-1440.png" });
  expect(errors).toEqual([]);
});

test("a group made of nodes picked here and there frames them alone: nodes its frame would cover step out, in the same undo step", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // Technical, Check and Ask on a diagonal; Billing and Set between them.
  const document = {
    format_version: 2,
    name: "Picked",
    state: { channels: { note: { type: "string" } } },
    nodes: [
      at("technical", "Technical", 0, 200),
      at("check", "Check", 260, 200),
      at("ask", "Ask", 520, 140),
      at("billing", "Billing", 0, 110),
      at("set", "Set", 260, 110),
    ],
    edges: [],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);
  const box = async (id: string) => (await node(id).boundingBox())!;
  const before = { technical: await box("technical"), check: await box("check"), ask: await box("ask") };
  await node("technical").click();
  await node("check").click({ modifiers: ["Shift"] });
  await node("ask").click({ modifiers: ["Shift"] });
  await page.keyboard.press("Control+g");
  const frame = page.getByTestId("group-frame");
  await expect(frame).toHaveCount(1);
  // Its own nodes stay where they were put; the others are out of it.
  for (const [id, was] of Object.entries(before)) {
    const now = await box(id);
    expect(Math.abs(now.x - was.x) + Math.abs(now.y - was.y)).toBeLessThan(1);
  }
  const framed = (await frame.boundingBox())!;
  for (const id of ["billing", "set"]) {
    const b = await box(id);
    const inside =
      b.x < framed.x + framed.width && framed.x < b.x + b.width && b.y < framed.y + framed.height && framed.y < b.y + b.height;
    expect(inside, `${id} is under the frame`).toBe(false);
  }
  await page.screenshot({ path: "../target/e2e/screens/group-picked-1440.png" });
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const saved = await stored();
  expect(saved.groups).toEqual([{ id: "group-1", label: "Group 1", nodes: ["technical", "check", "ask"] }]);
  // One undo: the group goes and the nodes are back where they were.
  await page.keyboard.press("Control+z");
  await expect(frame).toHaveCount(0);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const undone = await stored();
  expect(undone.groups ?? []).toEqual([]);
  expect(undone.nodes.find((n: any) => n.id === "billing").position).toEqual({ x: 0, y: 110 });
  expect(undone.nodes.find((n: any) => n.id === "set").position).toEqual({ x: 260, y: 110 });
  expect(errors).toEqual([]);
});

test("a node dropped into a frame joins its group; a group dragged over a node leaves it be: each one undo step", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const document = {
    format_version: 2,
    name: "Dropped in",
    state: { channels: { note: { type: "string" } } },
    nodes: [at("fetch", "Fetch", 0, 0), at("write", "Write", 520, 0), at("check", "Check", 260, 320), at("draft", "Draft", 900, 320)],
    edges: [],
    groups: [{ id: "group-1", label: "Research", nodes: ["fetch", "write"] }],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const stored = async () => (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  const place = (document: any, id: string) => document.nodes.find((n: any) => n.id === id).position;
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);
  const box = async (id: string) => (await node(id).boundingBox())!;
  const frame = page.getByTestId("group-frame");
  await expect(frame).toContainText("2 nodes");
  const drag = async (from: { x: number; y: number }, to: { x: number; y: number }) => {
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 8 });
    await page.mouse.up();
  };
  const middle = (b: { x: number; y: number; width: number; height: number }) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 });

  // Check dragged into the gap between Fetch and Write: it joins.
  const [fetch, write] = [await box("fetch"), await box("write")];
  await drag(middle(await box("check")), { x: (fetch.x + fetch.width + write.x) / 2, y: fetch.y + fetch.height / 2 });
  await expect(frame).toContainText("3 nodes");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  expect((await stored()).groups[0].nodes).toEqual(["fetch", "write", "check"]);

  // The group dragged by its bar over Draft, and back: only its own nodes
  // move; Draft stays where it was, and out of the group.
  const draftWas = place(await stored(), "draft");
  const bar = (await frame.locator(".canvas-group-bar").boundingBox())!;
  const framed = (await frame.boundingBox())!;
  const draft = middle(await box("draft"));
  const grab = { x: bar.x + 40, y: bar.y + bar.height / 2 };
  const over = { x: grab.x + (draft.x - middle(framed).x), y: grab.y + (draft.y - middle(framed).y) };
  await drag(grab, over);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  let now = await stored();
  expect(place(now, "draft")).toEqual(draftWas);
  expect(place(now, "fetch")).not.toEqual({ x: 0, y: 0 });
  expect(now.groups[0].nodes).toEqual(["fetch", "write", "check"]);
  await page.screenshot({ path: "../target/e2e/screens/group-dragged-over-1440.png" });
  await drag(over, grab);
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  now = await stored();
  expect(place(now, "draft")).toEqual(draftWas);
  expect(place(now, "fetch")).toEqual({ x: 0, y: 0 });

  // Undone twice, the group is back where it was; once more, Check is out
  // of the group and back in its place.
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Control+z");
  await expect(frame).toContainText("2 nodes");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const undone = await stored();
  expect(undone.groups[0].nodes).toEqual(["fetch", "write"]);
  expect(place(undone, "check")).toEqual({ x: 260, y: 320 });
  expect(place(undone, "draft")).toEqual(draftWas);
  expect(errors).toEqual([]);
});

test("a group made of nodes at the canvas's top shows its bar whole, the view moved down at its zoom", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // Fitted whole, the top row sits just under the toolbar: a frame's bar
  // (above its nodes) would lie under it.
  const document = {
    format_version: 2,
    name: "Top row",
    state: { channels: { note: { type: "string" } } },
    nodes: [at("billing", "Billing", 0, 0), at("technical", "Technical", 240, 0), at("other", "Other", 120, 420)],
    edges: [],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  await page.getByRole("button", { name: "Fit", exact: true }).click();
  const zoom = await page.getByTestId("zoom").textContent();
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);
  await node("billing").click();
  await node("technical").click({ modifiers: ["Shift"] });
  await page.keyboard.press("Control+g");
  const bar = page.getByTestId("group-frame").locator(".canvas-group-bar");
  await expect(bar).toBeVisible();
  const toolbar = (await page.locator(".editor-toolbar").boundingBox())!;
  const top = (await bar.boundingBox())!.y;
  expect(top).toBeGreaterThanOrEqual(toolbar.y + toolbar.height);
  await expect(page.getByTestId("zoom")).toHaveText(zoom!);
  expect(errors).toEqual([]);
});

test("a node of a selected group is selected alone by one click; pressed and dragged, the group moves", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const document = {
    format_version: 2,
    name: "Click inside",
    state: { channels: { note: { type: "string" } } },
    nodes: [at("fetch", "Fetch", 0, 0), at("write", "Write", 300, 0)],
    edges: [],
    groups: [{ id: "group-1", label: "Research", nodes: ["fetch", "write"] }],
  };
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const node = (id: string) => page.locator(`.canvas-node[data-node="${id}"]`);
  const frame = page.getByTestId("group-frame");
  const inspectorTitle = page.locator(".inspector .inspector-title").first();
  // The group picked by its bar: its form.
  const bar = (await frame.locator(".canvas-group-bar").boundingBox())!;
  await page.mouse.click(bar.x + 40, bar.y + bar.height / 2);
  await expect(page.locator(".canvas-node.selected")).toHaveCount(2);
  await expect(inspectorTitle).toHaveText("Group");
  // Pressed on one of its nodes and dragged: both move, both stay picked.
  const was = (await node("write").boundingBox())!;
  const fetch = (await node("fetch").boundingBox())!;
  await page.mouse.move(fetch.x + 60, fetch.y + 20);
  await page.mouse.down();
  await page.mouse.move(fetch.x + 60, fetch.y + 120, { steps: 6 });
  await page.mouse.up();
  await expect(page.locator(".canvas-node.selected")).toHaveCount(2);
  expect((await node("write").boundingBox())!.y).toBeGreaterThan(was.y + 50);
  // Clicked (no move): that node alone, its form, its name typed into it.
  const moved = (await node("fetch").boundingBox())!;
  await page.mouse.click(moved.x + 60, moved.y + 20);
  await expect(page.locator(".canvas-node.selected")).toHaveCount(1);
  await expect(node("fetch")).toHaveClass(/\bselected\b/);
  await expect(page.locator(".inspector")).not.toContainText("Frames 2 nodes");
  await expect(frame).toContainText("Research");
  expect(errors).toEqual([]);
});
