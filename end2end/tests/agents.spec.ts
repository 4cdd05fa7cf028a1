// Agents that hand a conversation to each other, and what runs use:
// the triage example end to end in the browser (the handoff as an edge
// taken, the answer on the same thread), tokens and cost where a person
// looks for them, and a budget set in the graph's settings stopping a run.
import { test, expect, useExample, scrubTo, hydrated } from "./fixtures";

const saved = (page: import("@playwright/test").Page) =>
  expect(page.getByTestId("save-status")).toHaveText("Saved");

test("triage hands the conversation to billing, the handoff is the edge taken, and the run says what it used", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await useExample(page, /Triage with handoffs/);
  await page.getByTestId("chat-input").fill("I was charged twice, billing please");
  await page.getByTestId("chat-input").press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });

  // Billing answered on the same thread; technical never ran.
  const messages = page.getByTestId("chat-messages");
  await expect(messages.locator(".role-assistant").last()).toContainText("I was charged twice");
  // The chat says which way the triage sent it, before the answer.
  await expect(messages.getByTestId("chat-route")).toHaveText("Triage sent it to Billing (billing)");
  await expect(page.locator('.canvas-node[data-node="billing"]')).toHaveAttribute("data-state", "succeeded");
  await expect(page.locator('.canvas-node[data-node="technical"]')).not.toHaveAttribute(
    "data-state",
    "succeeded",
  );

  // What the models used: on the nodes that called one, and for the run.
  await expect(page.locator('.canvas-node[data-node="triage"] .node-badge').last()).toContainText(/tok · \$0/);
  await expect(page.locator('.canvas-node[data-node="billing"] .node-badge').last()).toContainText(/tok · \$0/);
  await expect(page.getByTestId("run-usage")).toContainText(/tokens · \$0/);
  await page.screenshot({ path: "../target/e2e/screens/handoff-light.png" });

  // Replayed at triage's step, the edge to billing is the one taken.
  await scrubTo(page, 1);
  await expect(page.getByTestId("scrub-step")).toContainText("Step 1");
  await expect(page.locator('.editor-edge[data-edge="to_billing"]')).toHaveClass(/taken/);
  await expect(page.locator('.editor-edge[data-edge="to_technical"]')).not.toHaveClass(/taken/);
  await expect(page.locator('.editor-edge[data-edge="answered"]')).not.toHaveClass(/taken/);
  // Each step says what its model calls used.
  await page.getByRole("tab", { name: "State" }).click();
  await expect(page.locator('.state-step[data-step="1"] .state-step-usage')).toContainText(/tokens · \$0/);
  await expect(page.locator('.state-step[data-step="0"] .state-step-usage')).toHaveCount(0);

  // The graph's runs: each with its tokens and cost, and the days' usage.
  await page.getByTestId("scrub-live").click();
  await page.locator("details.history > summary", { hasText: /^Runs$/ }).click();
  await expect(page.getByTestId("usage-chart")).toContainText(/1 run · \d[\d,]* tokens · \$0/);
  await expect(page.getByTestId("run-usage-tag").first()).toContainText(/tokens · \$0/);
  await page.screenshot({ path: "../target/e2e/screens/usage-light.png" });

  // A second question: the first answer still says where it was routed,
  // and the second says where it went.
  await page.getByRole("tab", { name: "Chat" }).click();
  await page.getByTestId("chat-input").fill("The app crashes on start, technical please");
  await page.getByTestId("chat-input").press("Enter");
  await expect(messages.locator(".role-user")).toHaveCount(2, { timeout: 20_000 });
  const routes = messages.getByTestId("chat-route");
  await expect(routes).toHaveCount(2, { timeout: 20_000 });
  await expect(routes.first()).toHaveText("Triage sent it to Billing (billing)");
  const order = await messages.locator(":scope > li").evaluateAll((items) =>
    items.map((item) => (item.getAttribute("data-testid") === "chat-route" ? "route" : item.classList.contains("role-user") ? "user" : "other")),
  );
  expect(order.indexOf("route")).toBe(order.indexOf("user") + 1);
  expect(order.lastIndexOf("route")).toBe(order.lastIndexOf("user") + 1);
  // Opened again, the earlier answer still says where it was routed (read
  // back from the run its question started), and so does the newest.
  await page.reload();
  await hydrated(page);
  await expect(routes).toHaveCount(2);
  await expect(routes.first()).toHaveText("Triage sent it to Billing (billing)");
  await expect(routes.last()).toHaveText("Triage sent it to Technical (technical)");
  expect(errors).toEqual([]);
});

test("a turn whose run failed keeps saying why after the next, and after a reload", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const r = (route: string) => ({ route, description: route });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "No otherwise",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        { id: "triage", kind: "router", label: "Triage", config: { routes: [r("billing"), r("refunds")] }, position: { x: 300, y: 120 } },
        { id: "bill", kind: "llm", label: "Billing", position: { x: 560, y: 40 } },
        { id: "refund", kind: "llm", label: "Refunds", position: { x: 560, y: 200 } },
        { id: "end", kind: "end", position: { x: 820, y: 120 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "triage" },
        { id: "e2", from: "triage", to: "bill", route: "billing" },
        { id: "e3", from: "triage", to: "refund", route: "refunds" },
        { id: "e4", from: "bill", to: "end" },
        { id: "e5", from: "refund", to: "end" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const input = page.getByTestId("chat-input");
  // No route fits and the router has no otherwise: the run fails.
  await input.fill("hello there");
  await input.press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run failed", { timeout: 15_000 });
  await expect(page.getByTestId("chat-failure")).toContainText("no route");
  // The next turn is answered; the first still says why it has no answer.
  await input.fill("a billing question");
  await input.press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(page.getByTestId("chat-failure")).toHaveCount(0);
  const earlier = page.getByTestId("chat-failure-earlier");
  await expect(earlier).toHaveCount(1);
  await expect(earlier).toContainText("no route");
  await expect(earlier).toContainText("Triage");
  // Read back from its run after a reload.
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("chat-failure-earlier")).toContainText("no route");
  await page.screenshot({ path: "../target/e2e/screens/chat-failure-earlier-1440.png" });
  expect(errors).toEqual([]);
});

test("on a small window the chat yields to the canvas while the graph is worked on, and takes its room back when spoken to", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await useExample(page, /Triage with handoffs/);
  const input = page.getByTestId("chat-input");
  await input.fill("I was charged twice, billing please");
  await input.press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });
  const canvas = page.locator(".editor-canvas");
  const panel = page.getByTestId("run-panel");
  const answer = page.getByTestId("chat-messages").locator(".role-assistant").last();
  await expect(panel).not.toHaveClass(/yielding/);
  const talking = (await canvas.boundingBox())!.height;
  await page.screenshot({ path: "../target/e2e/screens/chat-talking-1024.png" });

  // The person goes to the graph: the chat leaves the canvas the room,
  // keeping its newest lines and the box to type in.
  await page.locator('.canvas-node[data-node="billing"]').click();
  await expect(panel).toHaveClass(/yielding/);
  const working = (await canvas.boundingBox())!.height;
  expect(working).toBeGreaterThan(talking + 100);
  await expect(answer).toBeInViewport();
  await expect(input).toBeInViewport();
  await page.screenshot({ path: "../target/e2e/screens/chat-yielding-1024.png" });

  // Back to the chat, from the keyboard as from the mouse: its room again.
  await input.focus();
  await expect(panel).not.toHaveClass(/yielding/);
  await expect.poll(async () => (await canvas.boundingBox())!.height).toBeCloseTo(talking, 0);
  await expect(answer).toBeInViewport();

  // A height the person dragged the panel to is theirs: it does not yield.
  const grip = page.getByTestId("run-panel-grip");
  await grip.focus();
  await page.keyboard.press("ArrowUp");
  const dragged = (await panel.boundingBox())!.height;
  await page.locator('.canvas-node[data-node="triage"]').click();
  expect((await panel.boundingBox())!.height).toBeCloseTo(dragged, 0);
  expect(errors).toEqual([]);
});

test("a chat graph opens with its Chat tab unless it was folded the last time", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs/import", {
    data: {
      format_version: 3,
      name: "Folded chat",
      state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
      nodes: [
        { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 120 } },
        { id: "reply", kind: "llm", position: { x: 300, y: 120 } },
        { id: "end", kind: "end", position: { x: 560, y: 120 } },
      ],
      edges: [
        { id: "e1", from: "start", to: "reply" },
        { id: "e2", from: "reply", to: "end" },
      ],
    },
  });
  expect(created.status()).toBe(201);
  await page.goto(`/graphs/${(await created.json()).id}`);
  await hydrated(page);
  const toggle = page.locator(".run-panel-toggle");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("chat-input")).toBeVisible();
  // Folded away, it stays folded on the next visit: the canvas has the room.
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await page.reload();
  await hydrated(page);
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(page.getByTestId("chat-input")).toHaveCount(0);
  // Opened again, it opens again.
  await page.getByRole("tab", { name: "Chat" }).click();
  await expect(page.getByTestId("chat-input")).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("chat-input")).toBeVisible();
  expect(errors).toEqual([]);
});

test("a token budget set in the graph's settings is kept and stops a run naming itself", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await useExample(page, /Triage with handoffs/);
  const id = page.url().split("/graphs/")[1].split(/[?#]/)[0];
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  // Nothing selected: the inspector holds the graph's settings. At this
  // width it waits out of the way until asked for, by name.
  await page.mouse.click(canvas.x + 20, canvas.y + canvas.height - 20);
  await page.getByRole("button", { name: "Graph settings" }).click();
  const budget = page.locator('input[name="max_tokens"]');
  await budget.scrollIntoViewIfNeeded();
  await budget.fill("5");
  // Straight to the canvas: the value is kept all the same.
  await page.mouse.click(canvas.x + 20, canvas.y + canvas.height - 20);
  await saved(page);
  await page.reload();
  await expect(page.locator('input[name="max_tokens"]')).toHaveValue("5");
  const stored = await (await page.request.get(`/api/v1/graphs/${id}`)).json();
  expect(stored.document.limits.max_tokens).toBe(5);

  await page.getByTestId("chat-input").fill("hello there");
  await page.getByTestId("chat-input").press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run failed", { timeout: 20_000 });
  const runs = await (await page.request.get(`/api/v1/graphs/${id}/runs`)).json();
  expect(runs[0].error).toContain("`limits.max_tokens` is 5");
  await expect(page.getByTestId("chat-failure")).toContainText("limits.max_tokens is 5");
  await page.screenshot({ path: "../target/e2e/screens/budget-1024.png" });
  expect(errors).toEqual([]);
});

test("a sub-agent's work shows inside its agent: on the canvas while it runs, in the trace and the log after, in the usage", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await useExample(page, /Supervisor with two sub-agents/);
  // What the supervisor says while the mathematician works, kept as the
  // page shows it: the sub-agent's turn can be shorter than a poll from
  // here on a loaded machine, so the page itself records it.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as any).__inside = seen;
    new MutationObserver(() => {
      for (const shown of document.querySelectorAll('.canvas-node[data-node="supervisor"] [data-testid="node-inside"]')) {
        seen.push(shown.textContent ?? "");
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByTestId("chat-input").fill("Ask the mathematician: what is 7 * 6?");
  await page.getByTestId("chat-input").press("Enter");

  // While the mathematician works, the supervisor says so.
  const inside = page.locator('.canvas-node[data-node="supervisor"] [data-testid="node-inside"]');
  await expect
    .poll(() => page.evaluate(() => (window as any).__inside.join(" | ")), { timeout: 20_000 })
    .toContain("mathematician ›");
  if ((await inside.count()) > 0) {
    await page.screenshot({ path: "../target/e2e/screens/sub-agent-running-light.png" });
  }
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });
  await expect(inside).toHaveCount(0);
  // The sub-agent's nodes are not the graph's: none of them lit up.
  await expect(page.locator('.canvas-node[data-node="work"]')).toHaveCount(0);

  // Its model calls count on the supervisor and in the run.
  const runs = await (await page.request.get(`/api/v1/graphs/${page.url().split("/graphs/")[1].split(/[?#]/)[0]}/runs`)).json();
  const run = runs[0];
  const events = await (await page.request.get(`/api/v1/runs/${run.id}/events?from_seq=0`)).json();
  const calls = events.filter((e: any) => e.type === "custom" && e.name === "usage");
  const nested = calls.filter((e: any) => e.path?.[0]?.child === "mathematician");
  expect(nested.length).toBeGreaterThan(0);
  expect(run.usage.calls).toBe(calls.length);

  // The trace: the sub-agent's nodes in lanes of their own, under the supervisor.
  await page.getByRole("tab", { name: "Trace" }).click();
  const lanes = page.locator(".timeline-lane");
  const names = await lanes.locator(".timeline-label").allTextContents();
  const supervisor = names.findIndex((name) => /Supervisor|supervisor/.test(name));
  expect(supervisor).toBeGreaterThanOrEqual(0);
  expect(names[supervisor + 1]).toMatch(/^↳ mathematician › /);
  await expect(page.locator(".timeline-lane.nested").first()).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/sub-agent-trace-light.png" });
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect(page.locator(".timeline.has-nested")).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/sub-agent-trace-small-light.png" });

  // The log says where each of its events happened.
  await page.getByRole("tab", { name: "Events" }).click();
  await page.getByTestId("event-node").selectOption("supervisor");
  await expect(page.locator(".event-row .event-summary", { hasText: "inside mathematician › work" }).first()).toBeVisible();
  expect(errors).toEqual([]);
});

test("a framed graph stays whole when the chat takes the panel's room, a node selected or not", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await useExample(page, /Support router/);
  // Framed while the panel is short (on the Trace tab), a node selected
  // to edit its prompt: then the chat opens and grows the panel.
  await page.getByRole("tab", { name: "Trace" }).click();
  await page.getByRole("button", { name: "Layout" }).click();
  await page.locator('.canvas-node[data-node="billing"]').click();
  await page.getByRole("tab", { name: "Chat" }).click();
  const input = page.getByTestId("chat-input");
  await input.fill("I was charged twice, billing please");
  await input.press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });
  // Every node whole inside the canvas, none cut at the panel's edge.
  const whole = async () => {
    const canvas = (await page.locator(".editor-canvas").boundingBox())!;
    const boxes = await Promise.all(
      (await page.locator(".canvas-node").all()).map(async (node) => (await node.boundingBox())!),
    );
    return boxes.filter(
      (box) =>
        box.x < canvas.x - 1 ||
        box.y < canvas.y - 1 ||
        box.x + box.width > canvas.x + canvas.width + 1 ||
        box.y + box.height > canvas.y + canvas.height + 1,
    ).length;
  };
  await expect.poll(whole).toBe(0);
  await expect(page.locator('.canvas-node[data-node="billing"]')).toHaveClass(/selected/);
  await page.screenshot({ path: "../target/e2e/screens/chat-framed-whole-1440.png" });
  // New stands beside the conversation's picker, centred on it.
  const middle = async (testId: string) => {
    const box = (await page.getByTestId(testId).boundingBox())!;
    return box.y + box.height / 2;
  };
  expect(Math.abs((await middle("chat-new")) - (await middle("chat-thread")))).toBeLessThanOrEqual(1);

  // A message no route fits: the chat says the route was the router's
  // otherwise, not the model's choice; its trace bar shows the reply.
  const routes = page.getByTestId("chat-messages").getByTestId("chat-route");
  await expect(routes.first()).toHaveText("Triage sent it to Billing (billing)");
  await input.fill("hello there");
  await input.press("Enter");
  await expect(routes).toHaveCount(2, { timeout: 20_000 });
  await expect(routes.last()).toHaveText(/^Triage sent it to .+ \(general\), its otherwise: no route fit$/);
  // The way the run went is drawn on the canvas; the routes not taken stay
  // grey and dashed.
  const edge = (id: string) => page.locator(`.editor-edge[data-edge="${id}"]`);
  for (const id of ["in", "to-general", "g-end"]) await expect(edge(id)).toHaveClass(/\bwalked\b/);
  for (const id of ["to-billing", "to-technical", "b-end"]) await expect(edge(id)).not.toHaveClass(/\bwalked\b/);
  const line = (id: string) => edge(id).locator(".editor-edge-line").evaluate((l) => getComputedStyle(l).strokeDasharray);
  expect(await line("to-general")).toBe("none");
  expect(await line("to-billing")).not.toBe("none");
  await page.getByRole("tab", { name: "Trace" }).click();
  // Beside the router's bar, where it sent the run, and how.
  await expect(page.locator('.timeline-lane[data-lane="triage"] .timeline-route').last()).toHaveText(
    "→ general (its otherwise)",
  );
  await page.screenshot({ path: "../target/e2e/screens/trace-route-1440.png" });
  await page.locator('.timeline-lane[data-lane="triage"] .timeline-bar').last().click();
  const detail = page.getByTestId("execution-detail");
  await expect(detail.getByTestId("execution-route")).toHaveText("general — its otherwise: the reply named none of its routes");
  await expect(detail.getByTestId("execution-reply")).toHaveText("(offline model) no route matches");
  // An earlier turn watched (the Trace's Earlier), the chat still draws
  // each turn's own route under its question: the newest drew the
  // watched turn's ("Billing" under "hello there").
  await page.getByTestId("turn-earlier").click();
  await expect(page.getByTestId("turn-picker")).toContainText("Turn 1 of 2");
  await page.getByRole("tab", { name: "Chat" }).click();
  await expect(routes).toHaveCount(2);
  await expect(routes.first()).toHaveText("Triage sent it to Billing (billing)");
  await expect(routes.last()).toHaveText(/^Triage sent it to .+ \(general\), its otherwise: no route fit$/);
  // And the newest reply is in sight whole: the routes read back after the
  // messages pushed it down, under the list's foot.
  await expect(page.getByTestId("chat-messages").locator(".role-assistant").last()).toBeInViewport({ ratio: 0.99 });
  // The state names each answer's author as the canvas does, beside its id
  // (drawn by the style sheet: the value's text is the value).
  await page.getByRole("tab", { name: "State" }).click();
  const author = page.locator('.state-table tr[data-channel="messages"] .named[data-label="Billing"]').first();
  await expect(author).toHaveText(/"name": "billing"/);
  expect(await author.evaluate((line) => getComputedStyle(line, "::after").content)).toContain("Billing");
  expect(errors).toEqual([]);
});
