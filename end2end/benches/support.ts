// What the browser benches share: signing the bench user in, and timing
// frames with requestAnimationFrame while something happens.
import { Page } from "@playwright/test";

/** Signs up (or, on a reused database, logs in) the bench user. */
export async function signIn(page: Page) {
  await page.goto("/login");
  await page.setViewportSize({ width: 1440, height: 900 });
  const account = { username: "bench", password: "bench password" };
  const signup = await page.request.post("/api/v1/auth/signup", { data: account });
  if (signup.status() !== 201) {
    await page.request.post("/api/v1/auth/login", { data: account });
  }
}

/** Frame times, in ms, summarised. */
export interface Frames {
  frames: number;
  median: number;
  p95: number;
  max: number;
  /** Frames longer than `over` ms. */
  slow: number;
}

/** Times every frame while `during` runs; frames longer than `over` ms are counted as slow. */
export async function timeFrames(page: Page, over: number, during: () => Promise<void>): Promise<Frames> {
  await page.evaluate(() => {
    const w = window as any;
    w.__frames = [];
    w.__recording = true;
    const tick = (t: number) => {
      w.__frames.push(t);
      if (w.__recording) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await during();
  const times: number[] = await page.evaluate(() => {
    const w = window as any;
    w.__recording = false;
    return w.__frames;
  });
  const gaps = times.slice(1).map((t, i) => t - times[i]).sort((a, b) => a - b);
  const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))];
  return {
    frames: gaps.length,
    median: at(0.5),
    p95: at(0.95),
    max: gaps[gaps.length - 1],
    slow: gaps.filter((gap) => gap > over).length,
  };
}

/** The benches' graph: `nodes` nodes in a grid of 25 columns, a chain through them, and
 * random forward edges up to `edges` in all (seeded: the same graph every time). */
export function bigGraph(nodes: number, edges: number) {
  const list = [];
  for (let i = 0; i < nodes; i++) {
    list.push({
      id: `n${i}`,
      kind: "set",
      config: { values: { count: { expr: "count + 1" } } },
      position: { x: (i % 25) * 220, y: Math.floor(i / 25) * 100 },
    });
  }
  const links = [];
  for (let i = 1; i < nodes; i++) links.push({ id: `c${i}`, from: `n${i - 1}`, to: `n${i}` });
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  while (links.length < edges) {
    const a = Math.floor(random() * (nodes - 1));
    const b = a + 1 + Math.floor(random() * Math.min(30, nodes - a - 1));
    if (b < nodes) links.push({ id: `x${links.length}`, from: `n${a}`, to: `n${b}` });
  }
  return {
    format_version: 2,
    name: "Benchmark: 500 nodes",
    state: { channels: { count: { type: "integer", reducer: "sum" } } },
    nodes: list,
    edges: links,
    limits: { max_steps: 1000 },
  };
}

/** The live benches' graph: a script node prints 250 lines every quarter second (1,000 events a
 * second, in bursts) for ten seconds. */
export const LOUD = {
  format_version: 2,
  name: "Benchmark: 1,000 events a second",
  state: { channels: { n: { type: "integer", reducer: "sum" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    {
      id: "emit",
      kind: "script",
      config: { source: "for i in 0..250 { print(i); } #{ n: 1 }" },
      position: { x: 240, y: 0 },
    },
    { id: "pace", kind: "wait", config: { ms: 250 }, position: { x: 480, y: 0 } },
    { id: "end", kind: "end", position: { x: 720, y: 0 } },
  ],
  edges: [
    { id: "e1", from: "start", to: "emit" },
    { id: "e2", from: "emit", to: "pace" },
    { id: "again", from: "pace", to: "emit", condition: "n < 40" },
    { id: "done", from: "pace", to: "end", condition: "n >= 40" },
  ],
  limits: { max_steps: 1000 },
};

/** Creates a big graph (500 nodes and 700 edges unless said); returns its id. */
export async function createBig(page: Page, nodes = 500, edges = 700): Promise<string> {
  const document = bigGraph(nodes, edges);
  document.name = `Benchmark: ${nodes} nodes`;
  const created = await page.request.post("/api/v1/graphs", { data: { document } });
  return (await created.json()).id;
}

/** Opens a big graph's page and waits for it hydrated with its start (`n0`) drawn; gives how
 * many nodes the page draws (only those near the view: canvas/culling.rs). */
export async function openBig(page: Page, id: string): Promise<number> {
  await page.goto(`/graphs/${id}`);
  await page.waitForFunction(() => document.documentElement.dataset.hydrated === "true");
  await page.waitForFunction(() => document.querySelector('.canvas-node[data-node="n0"]') !== null);
  return page.locator(".canvas-node").count();
}

/** Creates the LOUD graph and opens its page on the run panel's Events tab; returns its id. */
export async function openLoud(page: Page): Promise<string> {
  const created = await page.request.post("/api/v1/graphs", { data: { document: LOUD } });
  const { id } = await created.json();
  await page.goto(`/graphs/${id}`);
  await page.waitForFunction(() => document.documentElement.dataset.hydrated === "true");
  await page.getByRole("tab", { name: "Events" }).click();
  return id;
}

/** Clicks the canvas's bottom left (clear of the toolbar, the note and the minimap) so the page
 * has settled on it, and gives the pan the benches time: a drag of the background from there,
 * 120 pointer moves. */
export async function panGesture(page: Page): Promise<() => Promise<void>> {
  const canvas = (await page.locator(".editor-canvas").boundingBox())!;
  await page.locator(".editor-canvas").click({ position: { x: 20, y: canvas.height - 80 } });
  return async () => {
    const x = canvas.x + 20;
    const y = canvas.y + canvas.height - 80;
    await page.mouse.move(x, y);
    await page.mouse.down();
    for (let i = 1; i <= 120; i++) await page.mouse.move(x + i * 4, y - i * 2);
    await page.mouse.up();
  };
}

/** Signs in, opens the 2,000-node, 2,800-edge graph at its start, and gives the pan gesture. */
export async function atTheStartOf2000(page: Page): Promise<() => Promise<void>> {
  await signIn(page);
  const id = await createBig(page, 2000, 2800);
  await openBig(page, id);
  await page.waitForTimeout(500);
  return panGesture(page);
}
