// Watching and debugging runs from the graph page, as an editor does: a
// chat with the ReAct example on the offline model (nodes animate in the
// order of the trace, the answer appears in the chat), a human gate
// approved from its form, the input form and run-to-node, a finished run
// replayed and scrubbed, and a fork from a step with an edited state.
import * as fs from "fs";
import * as path from "path";
import { test, expect, hydrated, scrubTo, writerWithoutAConversation } from "./fixtures";
import { Page } from "@playwright/test";

const example = (file: string) =>
  JSON.parse(
    fs.readFileSync(path.resolve(__dirname, "../../engine/examples/graphs", file), "utf8"),
  );

const COUNTER = {
  format_version: 2,
  name: "Counter",
  state: {
    channels: {
      count: { type: "integer", reducer: "sum" },
      target: { type: "integer", description: "Where to stop" },
    },
  },
  nodes: [
    { id: "start", kind: "start", config: { inputs: ["target"] }, position: { x: 0, y: 0 } },
    { id: "tick", kind: "set", config: { values: { count: { value: 1 } } }, position: { x: 240, y: 0 } },
  ],
  edges: [
    { id: "e1", from: "start", to: "tick" },
    { id: "again", from: "tick", to: "tick", condition: "count < target" },
  ],
};

async function importGraph(page: Page, document: object): Promise<string> {
  const response = await page.request.post("/api/v1/graphs/import", { data: document });
  expect(response.status()).toBe(201);
  return (await response.json()).id;
}

async function runs(page: Page, graph: string): Promise<any[]> {
  return (await page.request.get(`/api/v1/graphs/${graph}/runs`)).json();
}

async function finishedRun(page: Page, graph: string, input: object): Promise<string> {
  const started = await page.request.post(`/api/v1/graphs/${graph}/runs`, { data: { input } });
  expect(started.status()).toBe(202);
  const { id } = await started.json();
  await expect
    .poll(async () => (await (await page.request.get(`/api/v1/runs/${id}`)).json()).status)
    .toBe("finished");
  return id;
}

/** One value of the Run tab's result, as it lists the final state. */
const resultValue = (page: Page, channel: string) =>
  page
    .getByTestId("run-result")
    .locator(".run-values dt", { hasText: new RegExp(`^${channel}$`) })
    .locator("xpath=following-sibling::dd[1]");

/** Records every node state the canvas shows, in order. */
async function recordStates(page: Page) {
  await page.evaluate(() => {
    // Each change with the frame it was drawn in: the events a frame
    // takes in (a burst, under load) are drawn together, in no order.
    const seen: [string, string, number][] = [];
    (window as any).__states = seen;
    let frame = 0;
    const tick = () => {
      frame += 1;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const observer = new MutationObserver((mutations) => {
      for (const mutation of mutations) {
        const node = mutation.target as HTMLElement;
        seen.push([node.dataset.node ?? "", node.dataset.state ?? "", frame]);
      }
    });
    document.querySelectorAll(".canvas-node").forEach((node) =>
      observer.observe(node, { attributes: true, attributeFilter: ["data-state"] }),
    );
  });
}

test("the ReAct example answers in the chat, animating node by node in the order of its trace", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, example("react_agent.json"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await recordStates(page);

  // A chat graph opens on its chat.
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByTestId("chat-messages")).toContainText("No messages yet");
  await page.getByTestId("chat-input").fill("What is 6 * 7?");
  await page.getByTestId("chat-input").press("Enter");

  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  const messages = page.getByTestId("chat-messages");
  await expect(messages.locator(".role-assistant").last()).toContainText(
    "(offline model) calculator says 42.",
  );
  // The reply is named by the node that wrote it, once finished too.
  await expect(messages.locator(".role-assistant").last().locator(".chat-role")).toHaveText("Agent");
  // Someone who does not see it hears it: the reply is read out, named.
  await expect(page.getByTestId("chat-announcer")).toHaveText("Agent: (offline model) calculator says 42.");
  // The tool call and its result are there, folded.
  await expect(messages.getByText("Called calculator")).toBeVisible();
  await expect(messages.getByText("Result of calculator")).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/run-chat-light.png" });
  // The conversation is named by its first message.
  await expect(page.getByTestId("chat-thread").locator("option:checked")).toContainText("What is 6 * 7? · 1 run");

  // The canvas went through the nodes in the order the trace records.
  const [run] = await runs(page, graph);
  const events: any[] = await (await page.request.get(`/api/v1/runs/${run.id}/events`)).json();
  const started = events.filter((e) => e.type === "node_started").map((e) => e.node);
  const firstSeen = (list: string[]) => list.filter((n, i) => list.indexOf(n) === i);
  const states: [string, string, number][] = await page.evaluate(() => (window as any).__states);
  const shown = states.filter(([, s]) => s === "running" || s === "succeeded");
  // Every node the trace records was shown, none earlier than a node the
  // trace has before it (nodes first drawn in one frame are drawn together).
  const order = firstSeen(started);
  const firstFrame = (node: string) => shown.find(([n]) => n === node)?.[2];
  expect(firstSeen(shown.map(([n]) => n)).sort()).toEqual([...order].sort());
  for (let i = 1; i < order.length; i++) {
    expect(firstFrame(order[i])!, `${order[i]} after ${order[i - 1]}`).toBeGreaterThanOrEqual(firstFrame(order[i - 1])!);
  }
  // The model streams its answer over several frames: it is seen running,
  // then succeeded.
  const agent = states.filter(([n]) => n === "agent").map(([, s]) => s);
  expect(agent.indexOf("running")).toBeGreaterThanOrEqual(0);
  expect(agent.lastIndexOf("succeeded")).toBeGreaterThan(agent.indexOf("running"));
  for (const node of new Set(started)) {
    await expect(page.locator(`.canvas-node[data-node="${node}"]`)).toHaveAttribute(
      "data-state",
      "succeeded",
    );
  }
  // The agent ran twice (a loop) and shows its count and its tokens.
  await expect(page.locator('.canvas-node[data-node="agent"] .canvas-node-count')).toHaveText("×2");
  await expect(page.locator('.canvas-node[data-node="agent"] .node-badge').last()).toContainText("tok");

  // The trace: a bar per execution, and every event in the log. The panel
  // keeps its height from tab to tab: nothing on the stage jumps.
  const panelHeight = async () => (await page.getByTestId("run-panel").boundingBox())!.height;
  const chatHeight = await panelHeight();
  await page.getByRole("tab", { name: "Trace" }).click();
  await expect(page.locator(".timeline-bar")).toHaveCount(started.length);
  expect(await panelHeight()).toBe(chatHeight);
  // Lanes are named as the canvas names the nodes; bars say how long they took.
  await expect(page.locator('.timeline-lane[data-lane="tools"] .timeline-label')).toHaveText("Run tools");
  await expect(page.locator(".timeline-bar").first()).toHaveAttribute("aria-label", /step \d+ · attempt 1 · /);
  await page.screenshot({ path: "../target/e2e/screens/run-trace-light.png" });
  await page.getByRole("tab", { name: "Events" }).click();
  const nonTokens = events.filter((e) => !(e.type === "custom" && e.name === "token")).length;
  await expect(page.getByTestId("event-count")).toHaveText(`${nonTokens} events`);
  // The numbers' gaps are said: the streamed tokens are events too.
  await expect(page.getByTestId("event-unlisted")).toHaveText(`numbers skip ${events.length - nonTokens} token events`);
  await expect(page.getByTestId("run-panel")).toHaveAttribute("data-events", String(nonTokens));
  // Another tab is drawn anew: the state opens at its top, its Fork button
  // in sight, not scrolled where the event list was (at its newest row).
  await expect.poll(() => page.locator(".event-scroll").evaluate((e) => e.scrollTop)).toBeGreaterThan(0);
  await page.getByRole("tab", { name: "State" }).click();
  await expect(page.getByTestId("fork-open")).toBeInViewport();
  expect(await page.locator(".state-detail").evaluate((e) => e.scrollTop)).toBe(0);
  await page.getByRole("tab", { name: "Events" }).click();
  // Picked by its label ("Run tools"); every row names it so.
  await page.getByTestId("event-node").selectOption({ label: "Run tools" });
  await expect(page.locator(".event-row .event-node").first()).toHaveText("Run tools");
  await page.screenshot({ path: "../target/e2e/screens/run-events-light.png" });
  expect(await panelHeight()).toBe(chatHeight);

  // Opened again, the graph goes on with its latest conversation; New
  // starts another.
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("chat-thread").locator("option:checked")).toContainText("What is 6 * 7? · 1 run");
  await expect(messages).toContainText("calculator says 42");
  await page.getByTestId("chat-new").click();
  await expect(messages).toContainText("No messages yet");
  await expect(page.getByTestId("chat-thread").locator("option:checked")).toHaveText("New conversation");

  // New pressed while the conversation's messages are on their way (a
  // slow answer): they never land in the new one.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/get_thread", async (route) => {
    await held;
    await route.continue();
  });
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("chat-thread").locator("option:checked")).toContainText("What is 6 * 7? · 1 run");
  await page.getByTestId("chat-new").click();
  const answered = page.waitForResponse("**/api/get_thread");
  release();
  await answered;
  await page.waitForLoadState("networkidle");
  await expect(messages).toContainText("No messages yet");
  await expect(messages).not.toContainText("calculator says 42");
  await page.unroute("**/api/get_thread");
});

test("a human gate shows its tool call; approving it finishes the run", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, example("tool_approval.json"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByTestId("chat-input").fill("What is 6 * 7?");
  await page.getByTestId("chat-send").click();

  const gate = page.getByTestId("interrupt");
  await expect(gate).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("run-status")).toHaveText("Run interrupted");
  await expect(gate.locator(".tool-call-name")).toHaveText("calculator");
  const waiting = await gate.getAttribute("data-node");
  await expect(page.locator(`.canvas-node[data-node="${waiting}"]`)).toHaveAttribute(
    "data-state",
    "interrupted",
  );
  await page.screenshot({ path: "../target/e2e/screens/run-gate-light.png" });
  await page.getByTestId("approve").click();

  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(gate).toHaveCount(0);
  await expect(page.getByTestId("chat-messages").locator(".role-assistant").last()).toContainText(
    "calculator says 42",
  );
});

test("a run sent from the chat while the page still opens is followed, even once it has paused", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, example("tool_approval.json"));
  // The page asks which run is going before it opens its socket: that
  // answer is held until the run sent meanwhile has paused at its gate,
  // so neither the answer nor the server's notices can name it.
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/run_to_show*", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByTestId("chat-input").fill("What is 6 * 7?");
  await page.getByTestId("chat-send").click();
  await expect
    .poll(async () => (await runs(page, graph))[0]?.status, { timeout: 15_000 })
    .toBe("interrupted");
  release();
  // The page follows the run it started: its gate, state and status.
  await expect(page.getByTestId("interrupt")).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("run-status")).toHaveText("Run interrupted");
  await page.unroute("**/api/run_to_show*");
});

test("a yes-or-no question is answered with Yes and No, and the refund is approved", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, example("approval.json"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Run" }).click();
  await page.getByTestId("run-form").locator('[name="request"]').fill("order 7, 40 EUR");
  await page.getByTestId("run-start").click();
  const gate = page.getByTestId("interrupt");
  await expect(gate).toContainText("Approve this refund: order 7, 40 EUR?");
  // The answer channel is a boolean: two buttons, no text to type.
  await expect(gate.getByTestId("answer-text")).toHaveCount(0);
  await page.screenshot({ path: "../target/e2e/screens/run-question-light.png" });
  await gate.getByTestId("answer-yes").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(resultValue(page, "decision")).toHaveText("Refund approved: order 7, 40 EUR");
  await expect(resultValue(page, "approved")).toHaveText("true");
  const [run] = await runs(page, graph);
  expect(run.output.approved).toBe(true);
  await page.screenshot({ path: "../target/e2e/screens/run-result-light.png" });
});

test("the input form starts a run, and a run can stop before a chosen node", async ({
  page,
  errors,
}) => {
  const graph = await importGraph(page, COUNTER);
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  // Nothing to show yet: the panel is closed and the canvas has the room.
  await expect(page.getByRole("tab", { name: "Run" })).toHaveAttribute("aria-selected", "false");
  await page.getByRole("tab", { name: "Run" }).click();
  await expect(page.getByRole("tab", { name: "Run" })).toHaveAttribute("aria-selected", "true");
  const form = page.getByTestId("run-form");
  await expect(form.locator('input[name="target"]')).toHaveAttribute("type", "number");
  await expect(form).toContainText("Where to stop");
  await form.locator('input[name="target"]').fill("3");
  await page.getByTestId("run-start").click();
  await expect(resultValue(page, "count")).toHaveText("3");
  await expect(page.locator('.canvas-node[data-node="tick"] .canvas-node-count')).toHaveText("×3");

  // Run to a node: the run pauses before it, and "Continue" goes on.
  await page.getByTestId("run-to").selectOption("tick");
  await page.getByTestId("run-start").click();
  await expect(page.getByTestId("interrupt")).toContainText("Paused before `tick`");
  await expect(page.getByTestId("run-status")).toHaveText("Run interrupted");
  await page.getByTestId("continue").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished");
  await expect(resultValue(page, "count")).toHaveText("3");

  // The same from the canvas: a node's menu runs to it, and sets a
  // breakpoint that is part of the graph (saved, shown on the node).
  await page.getByTestId("run-to").selectOption("");
  const tick = page.locator('.canvas-node[data-node="tick"]');
  await tick.click({ button: "right" });
  await page.getByTestId("node-menu").getByRole("menuitem", { name: "Run to here…" }).click();
  await expect(page.getByTestId("run-to")).toHaveValue("tick");
  await expect(form.locator('input[name="target"]')).toHaveValue("3"); // kept
  await page.getByTestId("run-start").click();
  await expect(page.getByTestId("interrupt")).toContainText("Paused before `tick`");
  await page.getByTestId("continue").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished");
  await tick.click({ button: "right" });
  await page.getByRole("menuitemcheckbox", { name: "Pause after “tick”" }).click();
  await expect(tick.getByTestId("breakpoint")).toHaveAttribute("title", "Pauses after this node");
  await expect(page.getByTestId("save-status")).toHaveAttribute("data-state", "saved");
  const saved = await (await page.request.get(`/api/v1/graphs/${graph}`)).json();
  expect(saved.document.nodes.find((n: any) => n.id === "tick").interrupt_after).toBe(true);
});

test("a run of a thousand steps replays in the browser to its state at each step", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, {
    ...COUNTER,
    name: "A thousand ticks",
    state: {
      channels: {
        ...COUNTER.state.channels,
        log: { type: "list", reducer: "append" },
        last: { type: "string" },
      },
    },
    nodes: [
      COUNTER.nodes[0],
      {
        ...COUNTER.nodes[1],
        config: {
          values: {
            count: { value: 1 },
            log: { template: "tick {{ count }}" },
            last: { template: "at {{ count }} of {{ target }}" },
          },
        },
      },
    ],
    limits: { max_steps: 5000 },
  });
  const run = await finishedRun(page, graph, { target: 1000 });
  const output = (await (await page.request.get(`/api/v1/runs/${run}`)).json()).output;
  await page.goto(`/graphs/${graph}?run=${run}`);
  await hydrated(page);
  await expect(page.getByTestId("scrub-step")).toHaveText("Steps 0–1000");
  await page.getByRole("tab", { name: "State" }).click();
  const value = (channel: string) =>
    page.locator(`.state-table tr[data-channel="${channel}"] pre.json`).first();
  // Each step's state is rebuilt in the page from the step's changes, by
  // the engine's own code: step s is the s-th tick.
  for (const step of [1, 2, 3, 10, 99, 500, 777, 998, 999]) {
    await scrubTo(page, step);
    await expect(page.getByTestId("scrub-step")).toHaveText(`Step ${step} of 0–1000`);
    await expect(value("count")).toHaveText(String(step));
    await expect(value("last")).toHaveText(`at ${step - 1} of 1000`);
  }
  // The end: what the server says the run ended with.
  await page.getByTestId("scrub-forward").click();
  await expect(page.getByTestId("scrub-step")).toHaveText("Steps 0–1000");
  await expect(value("count")).toHaveText(String(output.count));
  await expect(value("last")).toHaveText(output.last);
  expect(output.log).toHaveLength(1000);
  expect(errors).toEqual([]);
});

test("a finished run replays step by step, and forks from a step with an edited state", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, COUNTER);
  const run = await finishedRun(page, graph, { target: 5 });
  await page.goto(`/graphs/${graph}?run=${run}`);
  await hydrated(page);
  // Steps 0 (start) to 5 (the fifth tick).
  await expect(page.getByTestId("scrub-step")).toHaveText("Steps 0–5");
  const tick = page.locator('.canvas-node[data-node="tick"]');
  await expect(tick.locator(".canvas-node-count")).toHaveText("×5");

  // Scrub back to step 2: the canvas and the state show that moment.
  await scrubTo(page, 2);
  await expect(page.getByTestId("scrub-step")).toHaveText("Step 2 of 0–5");
  await expect(page.getByTestId("run-status")).toHaveText("Replay at step 2");
  // Looking back at a finished run is not running it.
  await expect(page.getByTestId("run")).toHaveText("Run");
  await expect(tick.locator(".canvas-node-count")).toHaveText("×2");
  await page.getByRole("tab", { name: "State" }).click();
  const count = page.locator('.state-table tr[data-channel="count"]');
  await expect(count.locator("pre.json").first()).toHaveText("2");
  await expect(count).toHaveClass(/changed/);
  // What the step changed is marked inside the value.
  await expect(count.locator("pre.json").first().locator("span.differs")).toHaveText("2");
  await page.getByTestId("scrub-back").click();
  await expect(page.getByTestId("scrub-step")).toHaveText("Step 1 of 0–5");
  await expect(count.locator("pre.json").first()).toHaveText("1");
  await page.screenshot({ path: "../target/e2e/screens/run-state-light.png" });
  // Play goes on to the end by itself.
  await page.getByTestId("scrub-speed").selectOption("4");
  await page.getByTestId("scrub-play").click();
  await expect(page.getByTestId("scrub-step")).toHaveText("Steps 0–5", { timeout: 10_000 });
  await expect(page.getByTestId("run-status")).toHaveText("Run finished");

  // Fork after step 2 with a higher target: a new run on the same thread
  // goes on from a count of 2 to 8; the original keeps its 5.
  await page.locator('.state-step[data-step="2"]').click();
  await page.getByTestId("fork-open").click();
  const form = page.getByTestId("fork-form");
  // Each channel is a field of its type, showing the state after step 2.
  await expect(form.locator('input[name="count"]')).toHaveValue("2");
  await expect(form.locator('input[name="target"]')).toHaveValue("5");
  await expect(page.getByTestId("fork-changes")).toHaveText(
    "No change: the fork goes on from this state as it was.",
  );
  // As JSON, a value of the wrong type is refused as typed.
  await page.getByTestId("fork-mode-json").click();
  const editor = form.locator("textarea");
  const state = JSON.parse(await editor.inputValue());
  expect(state).toMatchObject({ count: 2, target: 5 });
  await editor.fill(JSON.stringify({ ...state, target: "eight" }));
  await expect(form).toContainText("cannot set `target`");
  await expect(page.getByTestId("fork-run")).toBeDisabled();
  await expect(page.getByTestId("fork-mode-fields")).toBeDisabled();
  await editor.fill(JSON.stringify({ ...state, target: 8 }));
  await expect(page.getByTestId("fork-changes")).toHaveText("Changes target.");
  // Back to the fields: the edit carries over, marked.
  await page.getByTestId("fork-mode-fields").click();
  await expect(form.locator('input[name="target"]')).toHaveValue("8");
  await expect(form.locator(".fork-field.changed")).toHaveCount(1);
  await page.screenshot({ path: "../target/e2e/screens/run-fork-light.png" });
  await page.getByTestId("fork-run").click();

  await expect(page.getByTestId("run-status")).toHaveText("Run finished");
  await expect(tick.locator(".canvas-node-count")).toHaveText("×6", { timeout: 10_000 });
  const [fork, original] = await runs(page, graph);
  expect(fork.id).not.toBe(run);
  expect(fork.thread_id).toBe(original.thread_id);
  expect(fork.output.count).toBe(8);
  expect(original.output.count).toBe(5);
  await page.getByRole("tab", { name: "Run" }).click();
  await expect(resultValue(page, "count")).toHaveText("8");
  // The fork is marked as one: in its record, its address (a reload or a
  // copied link opens it), the run panel's bar and the run list.
  expect(fork.forked_from).toEqual({ run_id: run, step: 3 });
  expect(original.forked_from).toBeNull();
  await expect(page).toHaveURL(new RegExp(`run=${fork.id}`));
  const badge = page.getByTestId("fork-badge");
  await expect(badge).toHaveText(`Fork of ${run.slice(4, 12)} at step 3`);
  await page.reload();
  await hydrated(page);
  await expect(badge).toHaveText(`Fork of ${run.slice(4, 12)} at step 3`);
  await expect(tick.locator(".canvas-node-count")).toHaveText("×6");
  await page.locator("details.history summary", { hasText: "Runs" }).click();
  await expect(page.locator(`.run-list li[data-run="${fork.id}"] .fork-tag`)).toHaveText(
    `fork of ${run.slice(4, 12)} at step 3`,
  );
  await expect(page.locator(`.run-list li[data-run="${run}"] .fork-tag`)).toHaveCount(0);

  // Side by side with the run it branched from (the other run of its
  // thread): they part at step 3, where the fork's target took effect.
  await page.getByRole("tab", { name: "Compare" }).click();
  await expect(page.getByTestId("compare-with")).toHaveValue(run);
  await expect(page.getByTestId("compare-parted")).toHaveText("The runs part at step 3.");
  const countRow = page.locator('.compare-table tr[data-channel="count"]');
  await expect(countRow).toHaveClass(/differs/);
  await expect(countRow.locator("td").first()).toHaveText("8");
  await expect(countRow.locator("td").last()).toHaveText("5");
  // Inside the values, what differs is marked.
  await expect(countRow.locator("td").first().locator(".differs")).toHaveText("8");
  // Steps 0 to 2 are the original's alone; the fork goes on past its end.
  const step0 = page.locator('.compare-table tr[data-step="0"]');
  await expect(step0.locator("td").first()).toHaveText("before its branch");
  await expect(step0).not.toHaveClass(/differs/);
  await expect(page.locator('.compare-table tr[data-step="7"] td').last()).toHaveText("ended");
  // Only the differences: the shared history goes.
  await page.getByText("Only differences").click();
  await expect(step0).toBeHidden();
  await expect(page.locator('.compare-table tr[data-step="3"]')).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/run-compare-light.png" });
  await page.getByText("Only differences").click();
  // The states after a chosen step: after step 3 both counted to 3, and
  // only the target differs; at step 1 the fork had not begun.
  await page.locator('.compare-table tr[data-step="3"]').click();
  await expect(page.getByTestId("compare-state-heading")).toHaveText("State after step 3");
  await expect(countRow).not.toHaveClass(/differs/);
  await expect(countRow.locator("td").first()).toHaveText("3");
  await expect(page.locator('.compare-table tr[data-channel="target"]')).toHaveClass(/differs/);
  await page.locator('.compare-table tr[data-step="1"]').click();
  await expect(countRow.locator("td").first()).toHaveText("before its branch");
  await expect(countRow.locator("td").last()).toHaveText("1");
  await page.locator('.compare-table tr[data-step="1"]').click();
  await expect(page.getByTestId("compare-state-heading")).toHaveText("State at the end");

  // Start from a chosen node with a step's state: after the fork's step 5
  // (its steps start at 3, where it branched), `tick` with a target of 6.
  await page.getByRole("tab", { name: "State" }).click();
  // Each step says which nodes ran in it.
  await expect(page.locator(".state-step").first().locator(".state-step-number")).toHaveText("Step 3");
  await expect(page.locator(".state-step").first().locator(".state-step-nodes")).toHaveText("tick");
  await page.locator('.state-step[data-step="5"]').click();
  await page.getByTestId("fork-open").click();
  const again = page.getByTestId("fork-form");
  await expect(again.locator('input[name="count"]')).toHaveValue("5");
  await expect(again.locator('input[name="target"]')).toHaveValue("8");
  // Undo puts every field back.
  await again.locator('input[name="target"]').fill("60");
  await expect(page.getByTestId("fork-changes")).toHaveText("Changes target.");
  await page.getByTestId("fork-undo").click();
  await expect(again.locator('input[name="target"]')).toHaveValue("8");
  await expect(page.getByTestId("fork-undo")).toBeDisabled();
  await again.locator('input[name="target"]').fill("6");
  await page.getByTestId("fork-start-at").selectOption("tick");
  await page.getByTestId("fork-run").click();
  await expect.poll(async () => (await runs(page, graph)).length).toBe(3);
  await expect(page.getByTestId("run-status")).toHaveText("Run finished");
  const [third] = await runs(page, graph);
  expect(third.output.count).toBe(6);

  // From the comparison, open the other run: the page replays it.
  await page.getByRole("tab", { name: "Compare" }).click();
  await page.getByTestId("compare-with").selectOption(run);
  await page.getByTestId("compare-open").click();
  await expect(page).toHaveURL(new RegExp(`run=${run}`));
  await expect(tick.locator(".canvas-node-count")).toHaveText("×5");
});

test("a long event log draws only the rows in view and follows the newest", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  // One script node printing 600 lines: 600 report events and the run's own.
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Chatty",
    state: { channels: { n: { type: "integer" } } },
    nodes: [
      { id: "start", kind: "start", position: { x: 0, y: 0 } },
      { id: "emit", kind: "script", config: { source: "for i in 0..600 { print(i); } #{ n: 1 }" }, position: { x: 240, y: 0 } },
    ],
    edges: [{ id: "e1", from: "start", to: "emit" }],
  });
  const run = await finishedRun(page, graph, {});
  const events: any[] = await (await page.request.get(`/api/v1/runs/${run}/events`)).json();
  const stored = events.filter((e) => !(e.type === "custom" && e.name === "token"));
  expect(stored.length).toBeGreaterThan(600);

  await page.goto(`/graphs/${graph}?run=${run}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Events" }).click();
  await expect(page.getByTestId("event-count")).toHaveText(`${stored.length} events`);
  // It opens on the newest, drawing a window of rows, not all of them.
  const rows = page.locator(".event-row");
  await expect(rows.last().locator(".event-seq")).toHaveText(String(stored[stored.length - 1].seq));
  expect(await rows.count()).toBeLessThan(80);
  await expect(page.getByTestId("event-jump")).toHaveCount(0);

  // Scrolled to the top: the first events, and a way back to the newest.
  const scroller = page.locator(".event-scroll");
  await scroller.evaluate((el) => el.scrollTo({ top: 0 }));
  await expect(rows.first().locator(".event-type")).toHaveText("run_started");
  expect(await rows.count()).toBeLessThan(80);
  // From the keyboard: Enter on an event moves the replay to its step.
  await rows.nth(1).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("scrub-step")).toHaveText("Step 0 of 0–1");
  await page.getByTestId("scrub-live").click();
  // Halfway down: the rows there, as many as before.
  const half = Math.floor(stored.length / 2);
  await scroller.evaluate((el, top) => el.scrollTo({ top }), half * 24);
  await expect(page.locator(`.event-row .event-seq >> text="${stored[half].seq}"`)).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/run-events-scrolled-light.png" });
  await page.getByTestId("event-jump").click();
  await expect(rows.last().locator(".event-seq")).toHaveText(String(stored[stored.length - 1].seq));
  await expect(page.getByTestId("event-jump")).toHaveCount(0);

  // Scrubbing to step 0 brings that step's events into view, highlighted.
  await scrubTo(page, 0);
  await expect(page.locator(".event-row.current").first()).toBeInViewport();
  await expect(page.locator(".event-row.current .event-type").first()).toHaveText("step_started");
  await page.getByTestId("scrub-live").click();

  // A filter narrows the count and the rows drawn.
  await page.getByPlaceholder("Search events").fill("run_");
  await expect(page.getByTestId("event-count")).toHaveText(
    `${stored.filter((e) => e.type.startsWith("run_")).length} events`,
  );
  await page.getByPlaceholder("Search events").fill("nothing like this");
  await expect(page.getByTestId("event-log")).toContainText("No event matches these filters.");
});

test("the event log follows a live run to its last event", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  // Bursts of 40 lines a tenth of a second apart, 12 times.
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Bursts",
    state: { channels: { n: { type: "integer", reducer: "sum" } } },
    nodes: [
      { id: "start", kind: "start", position: { x: 0, y: 0 } },
      { id: "emit", kind: "script", config: { source: "for i in 0..40 { print(i); } #{ n: 1 }" }, position: { x: 240, y: 0 } },
      { id: "pace", kind: "wait", config: { ms: 100 }, position: { x: 480, y: 0 } },
      { id: "end", kind: "end", position: { x: 720, y: 0 } },
    ],
    edges: [
      { id: "e1", from: "start", to: "emit" },
      { id: "e2", from: "emit", to: "pace" },
      { id: "again", from: "pace", to: "emit", condition: "n < 12" },
      { id: "done", from: "pace", to: "end", condition: "n >= 12" },
    ],
  });
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Events" }).click();
  const run = await finishedRun(page, graph, {});
  const events: any[] = await (await page.request.get(`/api/v1/runs/${run}/events`)).json();
  const stored = events.filter((e) => !(e.type === "custom" && e.name === "token"));
  await expect(page.getByTestId("event-count")).toHaveText(`${stored.length} events`);
  // Still at the end: the newest row shown, no "Newest" button.
  const last = page.locator(".event-row").last();
  await expect(last.locator(".event-seq")).toHaveText(String(stored[stored.length - 1].seq));
  await expect(last).toBeInViewport();
  await expect(page.getByTestId("event-jump")).toHaveCount(0);

  // The graph's only run has nothing to be compared with, and says so.
  await page.getByRole("tab", { name: "Compare" }).click();
  await expect(page.getByTestId("compare")).toContainText("This graph has no other run to compare with yet.");
  await expect(page.getByTestId("compare-with")).toBeHidden();
});

/** start -> `emit` (a script writing `out`) -> end. */
const emitting = (name: string) => ({
  format_version: 2,
  name,
  state: { channels: { out: { type: "string" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    { id: "emit", kind: "script", config: { source: '#{ out: "one" }' }, position: { x: 240, y: 0 } },
    { id: "end", kind: "end", position: { x: 480, y: 0 } },
  ],
  edges: [
    { id: "e1", from: "start", to: "emit" },
    { id: "e2", from: "emit", to: "end" },
  ],
});

test("every way to start a run runs what is on screen, saved first", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, emitting("What runs"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Run" }).click();
  await page.locator('.canvas-node[data-node="emit"]').click();
  const source = page.locator('textarea[name="config.source"]');
  const edit = async (text: string) => {
    await source.fill(`#{ out: "${text}" }`);
    await source.press("Tab");
  };

  // Typed, then Start run at once: no waiting for the autosave.
  await edit("two");
  await page.getByTestId("run-start").click();
  await expect(resultValue(page, "out")).toHaveText("two");
  const [first] = await runs(page, graph);
  expect(first.output.out).toBe("two");
  await expect(page.getByTestId("version")).toHaveText(`v${first.graph_version}`);

  // The graph bar's Run, just as fast.
  await edit("three");
  await page.getByTestId("run").click();
  await expect.poll(async () => (await runs(page, graph)).length).toBe(2);
  await expect.poll(async () => (await runs(page, graph))[0].status).toBe("finished");
  const [second] = await runs(page, graph);
  expect(second.output.out).toBe("three");
  expect(second.graph_version).toBeGreaterThan(first.graph_version);

  // The first run, opened again, is drawn on the version it ran.
  await page.goto(`/graphs/${graph}?run=${first.id}`);
  await hydrated(page);
  const notice = page.getByTestId("run-version-notice");
  await expect(notice).toContainText(`This run ran version ${first.graph_version}`);
  await expect(page.getByTestId("run-version-overlay").locator('[data-node="emit"]')).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/run-on-its-version.png" });
  await page.getByTestId("run-version-toggle").click();
  await expect(page.getByTestId("run-version-overlay")).toHaveCount(0);
  // Back on the draft, the notice keeps clear of the canvas's toolbar.
  const toolbar = (await page.getByRole("button", { name: "Layout", exact: true }).boundingBox())!;
  const box = (await notice.boundingBox())!;
  expect(box.y).toBeGreaterThan(toolbar.y + toolbar.height);
  // The newest run ran what the editor holds: no notice.
  await page.goto(`/graphs/${graph}?run=${second.id}`);
  await hydrated(page);
  await expect(page.locator('.canvas-node[data-node="emit"]')).toBeVisible();
  await expect(page.getByTestId("run-version-notice")).toHaveCount(0);

  // Edited while that run's record is on its way (a slow answer, a page
  // still loading): the run is compared with what the canvas held as it
  // was opened, so the draft being edited is not swapped for the run's
  // version when the answer comes.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/get_run", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`/graphs/${graph}?run=${second.id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="emit"]').click();
  await edit("four");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  await expect(page.getByTestId("version")).toHaveText(`v${second.graph_version + 1}`);
  const answered = page.waitForResponse("**/api/get_run");
  release();
  await answered;
  await page.waitForLoadState("networkidle");
  await expect(page.getByTestId("run-version-notice")).toHaveCount(0);
  await expect(page.locator('.canvas-node[data-node="emit"]')).toBeVisible();
  await page.unroute("**/api/get_run");
});

test("the run a page opens on ran the version it opened with: edited before it came, the draft stays", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const graph = await importGraph(page, emitting("Opened on its run"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByTestId("run").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  const run = (await page.getByTestId("run-status").getAttribute("data-run"))!;
  // Opened again, the page asks which run to open on; under load, the
  // answer comes after the person has edited (CI's groups test lost its
  // frame so).
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/run_to_show*", async (route) => {
    // Answered by the server at once, the answer held on its way.
    const response = await route.fetch();
    await held;
    await route.fulfill({ response });
  });
  await page.reload();
  await hydrated(page);
  await page.locator('.canvas-node[data-node="emit"]').click();
  await page.locator('textarea[name="config.source"]').fill('#{ out: "edited" }');
  await page.locator('textarea[name="config.source"]').press("Tab");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  await expect(page.getByTestId("version")).toHaveText("v2");
  const answered = page.waitForResponse("**/api/get_run");
  release();
  await answered;
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-run", run);
  await page.waitForLoadState("networkidle");
  await expect(page.getByTestId("run-version-notice")).toHaveCount(0);
  await expect(page.locator('.canvas-node[data-node="emit"]')).toBeVisible();
  await page.unroute("**/api/run_to_show*");
  expect(errors).toEqual([]);
});

// Without the `errors` fixture: the aborted save is a failed request the
// browser logs.
test("a run whose edits cannot be saved does not start, and says why", async ({ page }) => {
  const graph = await importGraph(page, emitting("Unsaved"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Run" }).click();
  await page.locator('.canvas-node[data-node="emit"]').click();
  await page.route("**/api/save_graph", (route) => route.abort());
  const source = page.locator('textarea[name="config.source"]');
  await source.fill('#{ out: "two" }');
  await source.press("Tab");
  await page.getByTestId("run-start").click();
  await expect(page.getByRole("alert").filter({ hasText: "Not started" })).toContainText(
    "the graph could not be saved",
  );
  await page.getByTestId("run").click();
  await expect(page.locator(".graph-bar").getByRole("alert")).toContainText("Not started");
  expect((await runs(page, graph)).length).toBe(0);
  await page.screenshot({ path: "../target/e2e/screens/run-not-started.png" });
  await page.unroute("**/api/save_graph");
  // Reachable again: the same press runs what was typed.
  await page.getByTestId("run-start").click();
  await expect(resultValue(page, "out")).toHaveText("two");
});

test("a chat message runs the reply as just edited", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const reply = (text: string) => `#{ messages: [#{ role: "assistant", content: "${text}" }] }`;
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Chat as shown",
    state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
    nodes: [
      { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 0, y: 0 } },
      { id: "reply", kind: "script", config: { source: reply("old reply") }, position: { x: 240, y: 0 } },
      { id: "end", kind: "end", position: { x: 480, y: 0 } },
    ],
    edges: [
      { id: "e1", from: "start", to: "reply" },
      { id: "e2", from: "reply", to: "end" },
    ],
  });
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await expect(page.getByRole("tab", { name: "Chat" })).toHaveAttribute("aria-selected", "true");
  await page.locator('.canvas-node[data-node="reply"]').click();
  const source = page.locator('textarea[name="config.source"]');
  await source.fill(reply("new reply"));
  await source.press("Tab");
  await page.getByTestId("chat-input").fill("hello");
  await page.getByTestId("chat-input").press("Enter");
  const messages = page.getByTestId("chat-messages");
  await expect(messages.locator(".role-assistant").last()).toContainText("new reply");
  await expect(messages).not.toContainText("old reply");
  // The second turn's run holds only what changed; its log builds on the
  // first turn's last checkpoint, which the page is sent once: the State
  // tab still shows the whole conversation at its step.
  await page.getByTestId("chat-input").fill("and again");
  await page.getByTestId("chat-input").press("Enter");
  await expect(messages.locator(".role-assistant")).toHaveCount(2);
  await page.getByRole("tab", { name: "State" }).click();
  const state = page.getByTestId("state-inspector");
  await expect(state).toContainText("hello");
  await expect(state).toContainText("and again");
  await page.screenshot({ path: "../target/e2e/screens/state-of-a-second-turn-light.png" });
  expect(errors).toEqual([]);
});

test("a question asked inside a subgraph pauses the run and is answered in the run panel", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Greets inside",
    state: { channels: { heard: { type: "string" } } },
    nodes: [
      { id: "start", kind: "start", position: { x: 0, y: 0 } },
      {
        id: "inner",
        kind: "subgraph",
        label: "Greeter",
        position: { x: 260, y: 0 },
        config: {
          graph: {
            format_version: 2,
            name: "greeter",
            state: { channels: { who: { type: "string" }, greeting: { type: "string" } } },
            nodes: [
              { id: "start", kind: "start" },
              { id: "ask", kind: "ask", config: { prompt: "What is your name?", answer: "who" } },
              { id: "greet", kind: "set", config: { values: { greeting: { template: "Hello, {{who}}!" } } } },
            ],
            edges: [
              { id: "a", from: "start", to: "ask" },
              { id: "b", from: "ask", to: "greet" },
            ],
          },
          outputs: { heard: "greeting" },
        },
      },
    ],
    edges: [{ id: "e", from: "start", to: "inner" }],
  });
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Run" }).click();
  await page.getByTestId("run-start").click();
  // The child's question is the run's: asked at the subgraph node.
  const gate = page.getByTestId("interrupt");
  await expect(gate).toContainText("What is your name?", { timeout: 15_000 });
  // Named as the canvas names it, and which of the child's nodes asks.
  await expect(gate.locator("h3")).toHaveText("Waiting at Greeter › ask");
  await expect(page.locator('.canvas-node[data-node="inner"]')).toHaveAttribute("data-state", "interrupted");
  await page.screenshot({ path: "../target/e2e/screens/subgraph-question-light.png" });
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect(gate.getByTestId("answer-text")).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/subgraph-question-small-light.png" });
  // Answered with the keyboard only: type, Tab to the button, Enter.
  await gate.getByTestId("answer-text").focus();
  await page.keyboard.type("Ada");
  await page.keyboard.press("Tab");
  await expect(gate.getByTestId("answer")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(resultValue(page, "heard")).toHaveText("Hello, Ada!");
  const [run] = await runs(page, graph);
  expect(run.output.heard).toBe("Hello, Ada!");
  expect(errors).toEqual([]);
});

test("a sub-agent's question pauses the chat, is answered there, and the agent goes on", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Lead with a clerk",
    state: { channels: { messages: { type: "messages", reducer: "add_messages" } } },
    nodes: [
      { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 0, y: 0 } },
      {
        id: "lead",
        kind: "agent",
        label: "Lead",
        position: { x: 260, y: 0 },
        config: {
          sub_agents: [
            {
              name: "clerk",
              description: "Signs forms.",
              graph: {
                format_version: 2,
                name: "clerk",
                state: {
                  channels: {
                    messages: { type: "messages", reducer: "add_messages" },
                    who: { type: "string" },
                  },
                },
                nodes: [
                  { id: "start", kind: "start" },
                  { id: "ask", kind: "ask", config: { prompt: "Who signs the form?", answer: "who" } },
                  {
                    id: "sign",
                    kind: "set",
                    config: { values: { messages: { expr: '{"role": "assistant", "content": "signed by " + who}' } } },
                  },
                ],
                edges: [
                  { id: "a", from: "start", to: "ask" },
                  { id: "b", from: "ask", to: "sign" },
                ],
              },
            },
          ],
        },
      },
    ],
    edges: [{ id: "e", from: "start", to: "lead" }],
  });
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByTestId("chat-input").fill("Have the clerk sign the form.");
  await page.getByTestId("chat-input").press("Enter");
  // The clerk's question is the run's, asked at the agent, naming the
  // sub-agent and its node.
  const gate = page.getByTestId("interrupt");
  await expect(gate).toContainText("Who signs the form?", { timeout: 15_000 });
  await expect(gate.locator("h3")).toHaveText("Waiting at Lead › clerk › ask");
  await expect(page.locator('.canvas-node[data-node="lead"]')).toHaveAttribute("data-state", "interrupted");
  await page.screenshot({ path: "../target/e2e/screens/sub-agent-question-light.png" });
  await page.setViewportSize({ width: 1024, height: 700 });
  await expect(gate.getByTestId("answer-text")).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/sub-agent-question-small-light.png" });
  // Answered with the keyboard only: type, Tab to the button, Enter.
  await gate.getByTestId("answer-text").focus();
  await page.keyboard.type("Ada");
  await page.keyboard.press("Tab");
  await expect(gate.getByTestId("answer")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  await expect(page.locator(".chat-message.role-assistant").last()).toContainText("signed by Ada");
  const [run] = await runs(page, graph);
  // Two model calls of the agent's: before the question and after it.
  expect(run.usage.calls).toBe(2);
  await page.screenshot({ path: "../target/e2e/screens/sub-agent-answered-light.png" });
  expect(errors).toEqual([]);
});

test("a run refused for the graph's problems names them by their nodes' labels", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, writerWithoutAConversation());
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  // The bar's Run knows already (the editor validates as the server does)
  // and asks nothing; the Run tab's Start run asks the server, which names
  // the problem by the node's label.
  await page.getByTestId("run").click();
  await expect(page.locator(".graph-bar .run-refusal")).toHaveText("Fix the problem first (see Problems).");
  expect(await runs(page, graph)).toEqual([]);
  await page.getByRole("tab", { name: "Run" }).click();
  await page.getByTestId("run-start").click();
  const refusal = page.getByRole("alert").filter({ hasText: "stops it from running" });
  await expect(refusal).toContainText("the graph has a problem that stops it from running: Writer:");
  await expect(refusal).toContainText("`messages` is not a channel");
  expect(await runs(page, graph)).toEqual([]);
  await page.screenshot({ path: "../target/e2e/screens/run-refused-light.png" });
  // The refusal itself is the browser's one logged error (a 422 it was
  // meant to get); nothing else went wrong.
  const refused = errors.filter((error) => error.includes("status of 422"));
  expect(refused).toHaveLength(1);
  errors.splice(0, errors.length, ...errors.filter((error) => !refused.includes(error)));
  expect(errors).toEqual([]);
});

test("a condition's bar in the Trace says where it sent the run, as a router's does", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Refunds",
    state: { channels: { amount: { type: "number" } } },
    nodes: [
      { id: "start", kind: "start", config: { inputs: ["amount"] }, position: { x: 0, y: 100 } },
      {
        id: "big",
        kind: "condition",
        label: "Refund over 100?",
        config: { routes: [{ route: "large", when: "amount > 100" }], otherwise: "small" },
        position: { x: 280, y: 100 },
      },
      { id: "end", kind: "end", position: { x: 560, y: 100 } },
    ],
    edges: [
      { id: "a", from: "start", to: "big" },
      { id: "b", from: "big", to: "end", route: "large" },
      { id: "c", from: "big", to: "end", route: "small" },
    ],
  });
  const run = await finishedRun(page, graph, { amount: 40 });
  await page.goto(`/graphs/${graph}?run=${run}`);
  await hydrated(page);
  await page.getByRole("tab", { name: "Trace" }).click();
  await expect(page.locator('.timeline-lane[data-lane="big"] .timeline-route')).toHaveText("→ small");
  expect(errors).toEqual([]);
});

test("a graph longer than its step limit fails saying so, its nodes named by their labels", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const nodes: any[] = [{ id: "start", kind: "start", position: { x: 0, y: 0 } }];
  const edges: any[] = [];
  for (let i = 0; i < 6; i++) {
    nodes.push({ id: `s${i}`, kind: "set", label: `Step ${i}`, config: { values: { out: { value: `${i}` } } }, position: { x: 240 * (i + 1), y: 0 } });
    edges.push({ id: `e${i}`, from: i === 0 ? "start" : `s${i - 1}`, to: `s${i}` });
  }
  const graph = await importGraph(page, {
    format_version: 2,
    name: "Too long",
    state: { channels: { out: { type: "string" } } },
    limits: { max_steps: 3 },
    nodes,
    edges,
  });
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.getByTestId("run").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run failed", { timeout: 15_000 });
  // The panel opened on its Run tab, with the result.
  await expect(page.getByRole("tab", { name: "Run" })).toHaveAttribute("aria-selected", "true");
  const failed = page.getByTestId("run-result");
  await expect(failed).toContainText(
    "the run passed its limit of 3 steps; it does not loop, but had “Step 2” still to run: a graph this long needs a higher limit",
  );
  await expect(failed).not.toContainText("`");
  expect(errors).toEqual([]);
});
