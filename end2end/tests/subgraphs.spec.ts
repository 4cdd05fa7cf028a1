// Nested work opened from its node: a subgraph's embedded graph is made a
// saved graph in one click, then opened from the inspector or the node's
// menu; a saved graph is picked by name; the editor accepts a saved
// subgraph (the server embeds it when the run starts) and the run uses it.
// An agent's sub-agents get the same.
import * as fs from "fs";
import * as path from "path";
import { test, expect, hydrated, expectAccessible } from "./fixtures";

const child = {
  format_version: 2,
  name: "Say a word",
  state: { channels: { word: { type: "string" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    { id: "say", kind: "set", config: { values: { word: { value: "nested hello" } } }, position: { x: 220, y: 0 } },
  ],
  edges: [{ id: "e", from: "start", to: "say" }],
};

const parent = {
  format_version: 2,
  name: "Parent",
  state: { channels: { heard: { type: "string" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    {
      id: "inner",
      kind: "subgraph",
      label: "Ask the child",
      config: { graph: child, outputs: { heard: "word" } },
      position: { x: 240, y: 0 },
    },
  ],
  edges: [{ id: "e", from: "start", to: "inner" }],
};

test("a subgraph's graph is made a saved graph, opened from its node, picked by name, and run", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const created = await page.request.post("/api/v1/graphs", { data: { document: parent } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("problem-count")).toHaveText("0");

  // The embedded graph, made a saved graph of its own.
  await page.locator('.canvas-node[data-node="inner"]').click();
  const source = page.getByTestId("subgraph-source");
  await expect(source).toContainText("Runs the graph embedded in this node (2 nodes).");
  await source.getByTestId("make-subgraph-saved").click();
  const open = source.getByTestId("open-subgraph");
  await expect(open).toHaveText("Say a word");
  // The editor accepts a saved subgraph: the server embeds it at run start.
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const stored = (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  const inner = stored.nodes.find((node: any) => node.id === "inner");
  expect(inner.config.graph).toBeUndefined();
  const childId = inner.config.graph_id;
  expect(childId).toMatch(/^[0-9a-f-]{36}$/);
  expect(await open.getAttribute("href")).toBe(`/graphs/${childId}`);
  await page.screenshot({ path: "../target/e2e/screens/subgraph-source-1440.png" });
  await expectAccessible(page, "a subgraph's source in the inspector");

  // Run: the saved graph runs inside, and its word comes back.
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
  const [run] = await (await page.request.get(`/api/v1/graphs/${id}/runs`)).json();
  const finished = await (await page.request.get(`/api/v1/runs/${run.id}`)).json();
  expect(finished.output.heard).toBe("nested hello");

  // Picked by name: none, then the child again.
  const pick = source.getByTestId("subgraph-pick");
  await pick.selectOption("");
  await expect(source).toContainText("Pick the saved graph this node runs.");
  await expect(page.getByTestId("problem-count")).not.toHaveText("0");
  await pick.selectOption({ label: "Say a word (2 nodes)" });
  await expect(open).toHaveText("Say a word");
  await expect(page.getByTestId("problem-count")).toHaveText("0");

  // The node's menu opens it too, and so does the link.
  await page.locator('.canvas-node[data-node="inner"]').click({ button: "right" });
  await page.getByTestId("node-menu-open-subgraph").click();
  await expect(page).toHaveURL(new RegExp(`/graphs/${childId}$`));
  await hydrated(page);
  await expect(page.locator(".canvas-node")).toHaveCount(2);
  await page.goBack();
  await hydrated(page);
  await page.locator('.canvas-node[data-node="inner"]').click();
  // An edit made just before leaving for the child's page is not lost: the
  // page goes in place (no reload), and its draft is written as it goes.
  const label = page.locator('.inspector input[name="label"]');
  await label.fill("Ask the child, renamed");
  await label.press("Enter");
  await page.getByTestId("open-subgraph").click();
  await expect(page).toHaveURL(new RegExp(`/graphs/${childId}$`));
  await expect(page.locator(".canvas-node")).toHaveCount(2);
  await expect(page.locator(".graph-title")).toHaveText("Say a word");
  await expect(page).toHaveTitle("Say a word · Heddle");
  // The child's page works: its node is selected and moved by the keyboard.
  await page.locator('.canvas-node[data-node="say"]').click();
  await page.keyboard.press("Alt+ArrowDown");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  await page.goBack();
  await expect(page.locator(".graph-title")).toHaveText("Parent");
  await expect(page.locator('.canvas-node[data-node="inner"]')).toContainText("Ask the child, renamed");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const parentNow = (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  expect(parentNow.nodes.find((node: any) => node.id === "inner").label).toBe("Ask the child, renamed");
  expect(errors).toEqual([]);
});

test("an agent's sub-agent is made a saved graph from its inspector, runs from there, and opens from the agent's menu", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const supervisor = JSON.parse(
    fs.readFileSync(path.join(__dirname, "../../engine/examples/graphs/supervisor.json"), "utf8"),
  );
  const created = await page.request.post("/api/v1/graphs", { data: { document: supervisor } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await page.locator('.canvas-node[data-node="supervisor"]').click();
  const sources = page.getByTestId("sub-agent-source");
  await expect(sources).toHaveCount(2);
  const mathematician = sources.filter({ hasText: "mathematician" });
  await expect(mathematician).toContainText("Runs the graph embedded in this sub-agent");
  await mathematician.getByTestId("make-subgraph-saved").click();
  await expect(mathematician.getByTestId("open-subgraph")).toHaveText("mathematician");
  await expect(page.getByTestId("problem-count")).toHaveText("0");
  await expect(page.getByTestId("save-status")).toHaveText("Saved");
  const stored = (await (await page.request.get(`/api/v1/graphs/${id}`)).json()).document;
  const sub = stored.nodes.find((node: any) => node.id === "supervisor").config.sub_agents[0];
  expect(sub.graph).toBeUndefined();
  expect(sub.graph_id).toMatch(/^[0-9a-f-]{36}$/);
  await page.screenshot({ path: "../target/e2e/screens/sub-agent-source-1440.png" });
  await expectAccessible(page, "an agent's sub-agents in the inspector");

  // The run embeds it: the mathematician answers through its saved graph.
  await page.getByTestId("run").click();
  await page.getByTestId("chat-input").fill("Ask the mathematician: what is 7 * 6?");
  await page.getByTestId("chat-send").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });
  const [run] = await (await page.request.get(`/api/v1/graphs/${id}/runs`)).json();
  const finished = await (await page.request.get(`/api/v1/runs/${run.id}`)).json();
  const tool = finished.output.messages.find((m: any) => m.role === "tool");
  expect(tool.content).toContain("42");

  // The agent's menu opens it.
  await page.locator('.canvas-node[data-node="supervisor"]').click({ button: "right" });
  await page.getByRole("menuitem", { name: "Open sub-agent mathematician" }).click();
  await expect(page).toHaveURL(new RegExp(`/graphs/${sub.graph_id}$`));
  await expect(page.locator(".graph-title")).toHaveText("mathematician");
  expect(errors).toEqual([]);
});
