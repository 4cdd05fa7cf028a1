// Parallel work you can see: the "Parallel research" example fans a plan
// out to three instances of its Research node. While they run, the node
// shows a line per instance and the chat a bubble per instance, each with
// its own words (never interleaved); once done, the node says how many
// items it took, the chat keeps each instance's words folded under the
// answer, and the trace has a lane per instance.
import * as fs from "fs";
import * as path from "path";
import { test, expect, hydrated, expectAccessible } from "./fixtures";
import { Page } from "@playwright/test";

const research = () =>
  JSON.parse(
    fs.readFileSync(path.resolve(__dirname, "../../engine/examples/graphs/research.json"), "utf8"),
  );

async function ask(page: Page, question: string) {
  await page.getByTestId("chat-input").fill(question);
  await page.getByTestId("chat-input").press("Enter");
}

test("a fan-out's three instances are seen side by side, each with its own words and trace lane", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs/import", { data: research() });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  // The dashed link says what is spread; its nodes stand close, so the
  // words sit above them rather than under them. A start node draws no
  // port to arrive at (nothing leads into it).
  const spread = page.locator(".editor-send-label");
  await expect(spread).toHaveText("each item of topics");
  const words = (await spread.boundingBox())!;
  for (const box of await page.locator(".canvas-node").evaluateAll((all) =>
    all.map((n) => n.getBoundingClientRect().toJSON()),
  )) {
    const apart =
      words.x + words.width <= box.x ||
      box.x + box.width <= words.x ||
      words.y + words.height <= box.y ||
      box.y + box.height <= words.y;
    expect(apart, `the link's words on a node at ${box.x},${box.y}`).toBe(true);
  }
  await expect(page.locator('.canvas-node[data-node="start"] .port-in')).toHaveCount(0);
  await expect(page.locator('.canvas-node[data-node="plan"] .port-in')).toHaveCount(1);

  await ask(page, "How do heat pumps work?");
  const node = page.locator('.canvas-node[data-node="research"]');
  const lines = node.getByTestId("node-instance");
  // While they run: a line each, #1 to #3, on the node.
  await expect(lines).toHaveCount(3, { timeout: 15_000 });
  await expect(node.getByTestId("node-instances")).toBeVisible();
  await expect(lines.locator(".canvas-node-instance-n")).toHaveText(["#1", "#2", "#3"]);
  // Each line is named by its item too: the topic it researches.
  const topic = (i: number) => `offline topic ${i}: how do heat pumps work?`;
  await expect(lines.locator(".canvas-node-instance-item")).toHaveText([topic(1), topic(2), topic(3)]);
  // In the chat, a bubble each, named by the node and the item, holding
  // that item's words and no other's.
  const bubbles = page.getByTestId("chat-streaming");
  await expect(bubbles).toHaveCount(3);
  for (const i of [0, 1, 2]) {
    await expect(bubbles.nth(i).locator(".chat-role")).toHaveText(`Research #${i + 1} · ${topic(i + 1)}`);
    await expect(bubbles.nth(i)).toContainText(`offline topic ${i + 1}:`);
    for (const other of [1, 2, 3].filter((n) => n !== i + 1)) {
      await expect(bubbles.nth(i)).not.toContainText(`topic ${other}:`);
    }
  }
  await page.screenshot({ path: "../target/e2e/screens/fan-out-running-1440.png" });

  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });
  await expect(bubbles).toHaveCount(0);
  await expect(node).toHaveAttribute("data-state", "succeeded");
  await expect(node.locator(".canvas-node-count")).toHaveText("3 items");
  // The answers are the thread's: one per topic in the notes, then the
  // summary in the chat.
  await expect(page.getByTestId("chat-messages").locator(".role-assistant").last()).toContainText(
    "Findings: 3 topics researched.",
  );
  // The summary's prompt is the node's, not the person's: named for it,
  // never drawn as something the person said.
  const chat = page.getByTestId("chat-messages");
  await expect(chat.locator(".role-prompt")).toContainText("Summarize's prompt");
  await expect(chat.locator(".role-prompt")).toContainText("Findings: 3 topics researched.");
  await expect(chat.locator(".role-user").filter({ hasText: "Findings" })).toHaveCount(0);
  // The node's prompt is folded (context, not talk). The instances' words
  // stay, folded where their work happened: after the question, before the
  // prompt and the answer made of them. Opened, each is named by its item
  // and holds its own words.
  await expect(chat.locator(".role-prompt details")).not.toHaveAttribute("open", "");
  const order = await chat.locator(":scope > li").evaluateAll((items) =>
    items.map((item) =>
      ["role-user", "chat-instances", "role-prompt", "role-assistant"].find((c) => item.classList.contains(c)),
    ),
  );
  expect(order).toEqual(["role-user", "chat-instances", "role-prompt", "role-assistant"]);
  const kept = page.getByTestId("chat-instances");
  await expect(kept.locator("summary")).toHaveText("Research: 3 instances");
  await kept.locator("summary").click();
  const each = kept.locator(".chat-instance-list > li");
  await expect(each).toHaveCount(3);
  for (const i of [0, 1, 2]) {
    await expect(each.nth(i).locator(".chat-role")).toHaveText(`Research #${i + 1} · ${topic(i + 1)}`);
    await expect(each.nth(i).locator("p")).toContainText(`offline topic ${i + 1}:`);
  }
  await page.screenshot({ path: "../target/e2e/screens/fan-out-kept-1440.png" });
  // The trace: a lane per instance, under the node's label, a bar each.
  await page.getByRole("tab", { name: "Trace" }).click();
  for (const i of [1, 2, 3]) {
    const lane = page.locator(`.timeline-lane[data-lane="research #${i}"]`);
    await expect(lane.locator(".timeline-label")).toContainText(`Research #${i}`);
    await expect(lane.locator(".timeline-item")).toHaveText(topic(i));
    await expect(lane.locator(".timeline-bar")).toHaveCount(1);
    const named = `Research #${i} (${topic(i)}) · step 3 · `.replace(/[()?]/g, "\\$&");
    await expect(lane.locator(".timeline-bar")).toHaveAttribute("aria-label", new RegExp(`^${named}`));
  }
  await expect(page.locator('.timeline-lane[data-lane="research"]')).toHaveCount(0);
  // A bar clicked says what that instance did: its item, and what it wrote.
  await page.locator('.timeline-lane[data-lane="research #2"] .timeline-bar').click();
  const detail = page.getByTestId("execution-detail");
  await expect(detail.locator("h3")).toHaveText("Research #2");
  await expect(detail).toContainText("step 3 · attempt 1 · succeeded");
  await expect(detail.getByTestId("execution-item")).toHaveText(topic(2));
  await expect(detail.getByTestId("execution-wrote")).toContainText("offline topic 2:");
  await expect(detail.getByTestId("execution-wrote")).not.toContainText("offline topic 1:");
  // And what it asked its model: the system prompt, and its own prompt
  // rendered with its own item.
  await expect(detail.getByTestId("execution-asked-system")).toHaveText("You research one topic and report three facts.");
  await expect(detail.getByTestId("execution-asked-last")).toHaveText(`Research: ${topic(2)}`);
  await page.screenshot({ path: "../target/e2e/screens/fan-out-trace-1440.png" });
  // In a narrow panel the details come under the lanes, brought into view.
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.locator('.timeline-lane[data-lane="research #3"] .timeline-bar').click();
  await expect(detail.locator("h3")).toHaveText("Research #3");
  await expect(detail).toBeInViewport();
  await page.screenshot({ path: "../target/e2e/screens/fan-out-trace-1024.png" });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.getByRole("button", { name: "Close the details" }).click();
  await expect(detail).toHaveCount(0);
  await expectAccessible(page, "the trace of a fan-out");

  // The event log tells the instances apart too, named by their label
  // ("Research #2"), the id in the tooltip.
  await page.getByRole("tab", { name: "Events" }).click();
  await page.getByTestId("event-node").selectOption("research");
  const done = page.locator('.event-row[data-type="node_succeeded"] .event-node');
  await expect(done).toHaveCount(3);
  expect((await done.allTextContents()).map((text) => text.trim()).sort()).toEqual([
    "Research #1",
    "Research #2",
    "Research #3",
  ]);
  await expect(done.first()).toHaveAttribute("title", "research");

  // At 1024x700, a second question: the lines still fit and read.
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.getByRole("tab", { name: "Chat" }).click();
  await ask(page, "And why are they efficient?");
  await expect(lines).toHaveCount(3, { timeout: 15_000 });
  await expect(bubbles).toHaveCount(3);
  await page.screenshot({ path: "../target/e2e/screens/fan-out-running-1024.png" });
  await expectAccessible(page, "a fan-out running");
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });

  // Opened again, the conversation reads the same: each turn's instances,
  // read from its run's stored events (no stream to watch any more),
  // between its question and the answer made of them.
  await page.reload();
  await hydrated(page);
  await expect(kept).toHaveCount(2);
  await expect(kept.locator("summary")).toHaveText(["Research: 3 instances", "Research: 3 instances"]);
  const order2 = await chat.locator(":scope > li").evaluateAll((items) =>
    items.map((item) =>
      ["role-user", "chat-instances", "role-prompt", "role-assistant"].find((c) => item.classList.contains(c)),
    ),
  );
  expect(order2).toEqual([
    "role-user",
    "chat-instances",
    "role-prompt",
    "role-assistant",
    "role-user",
    "chat-instances",
    "role-prompt",
    "role-assistant",
  ]);
  await kept.first().locator("summary").click();
  await expect(kept.first().locator(".chat-instance-list > li .chat-role").first()).toHaveText(
    `Research #1 · ${topic(1)}`,
  );
  const newest = kept.last().locator(".chat-instance-list > li");
  await kept.last().locator("summary").click();
  for (const i of [0, 1, 2]) {
    await expect(newest.nth(i).locator(".chat-role")).toHaveText(
      `Research #${i + 1} · offline topic ${i + 1}: and why are they efficient?`,
    );
    await expect(newest.nth(i).locator("p")).not.toBeEmpty();
  }
  // The page opened on the last run: its trace is there as before the
  // reload, a lane per instance.
  await expect(page.getByTestId("run-status")).toHaveText("Run finished");
  await page.getByRole("tab", { name: "Trace" }).click();
  for (const i of [1, 2, 3]) {
    await expect(page.locator(`.timeline-lane[data-lane="research #${i}"] .timeline-bar`)).toHaveCount(1);
  }
  expect(errors).toEqual([]);
});
