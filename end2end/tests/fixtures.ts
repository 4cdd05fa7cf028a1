// Shared test fixtures: every page fails its test on a browser error (a
// panic in the wasm, a failed hydration, an uncaught exception), and
// `hydrated` waits until the app has taken over the server's HTML.
import { test as base, expect, Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";

export const test = base.extend<{ errors: string[] }>({
  errors: async ({ page }, use) => {
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      // A page served with a 404 on purpose logs its own status; that is
      // the page saying "not found", not a failure.
      const ownStatus =
        message.text().includes("status of 404") && message.location().url === page.url();
      // Which resource failed is in the message's location: said, so a
      // 404 seen once on CI names what was asked for.
      const where = message.location().url;
      if (!ownStatus) errors.push(`console: ${message.text()}${where ? ` (${where})` : ""}`);
    });
    await use(errors);
    expect(errors, "the browser reported errors").toEqual([]);
  },
});

export { expect };

/** Waits until the wasm has hydrated the page. */
export async function hydrated(page: Page) {
  await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
}

/** Drags a palette kind to a point of the canvas (page coordinates). */
export async function place(page: Page, kind: string, x: number, y: number) {
  const item = page.locator(`.palette-item[data-kind="${kind}"]`);
  // The palette scrolls: a person scrolls to the kind first.
  await item.scrollIntoViewIfNeeded();
  const box = (await item.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(x - 40, y, { steps: 4 });
  await page.mouse.move(x, y, { steps: 4 });
  await page.mouse.up();
}

/** Copies a gallery example into a graph of one's own, as a person does
 *  (its card, then "Use this example"), and waits for its page. */
export async function useExample(page: Page, title: RegExp) {
  await page.goto("/");
  await hydrated(page);
  // The gallery's card (a graph made from it earlier has row actions
  // named after it too: "Rename Approve before a tool runs").
  await page.locator("#gallery").getByRole("button", { name: title }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Use this example" }).click();
  await page.waitForURL(/\/graphs\//);
  await hydrated(page);
}

/** Moves the run panel's scrubber as a person dragging it would. */
export async function scrubTo(page: Page, step: number) {
  await page.getByTestId("scrub-range").evaluate((range, value) => {
    (range as HTMLInputElement).value = String(value);
    range.dispatchEvent(new Event("input", { bubbles: true }));
  }, step);
}

/** Runs axe over the page as it stands; every serious or critical
 *  finding is a soft failure naming the place it was found, so one run
 *  of the test lists them all. `within` limits it to one element (a
 *  widget on someone else's page). WCAG 2.1 A and AA. */
export async function expectAccessible(page: Page, where: string, within?: string) {
  // A page's title is set as it hydrates (leptos_meta): axe reads the page
  // once it has one. A page that never gets one still fails here.
  if (!within) await expect(page, `${where} has a title`).toHaveTitle(/\S/);
  const builder = new AxeBuilder({ page });
  if (within) builder.include(within);
  const results = await builder
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  const grave = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${where}: ${v.id} (${v.impact}): ${v.help}\n` +
        v.nodes
          .slice(0, 5)
          .map((n) => `    ${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1).join(" ")}`)
          .join("\n"),
    );
  expect.soft(grave, `axe-core findings on ${where}`).toEqual([]);
}

/** A chain of `count` `set` nodes labelled "Step i", 25 to a row, rows
 *  `rowGap` apart, each leading to the next: a big graph for tests. */
export function chainOfSteps(count: number, rowGap: number) {
  const nodes = Array.from({ length: count }, (_, i) => ({
    id: `n${i}`,
    kind: "set",
    label: `Step ${i}`,
    config: { values: {} },
    position: { x: (i % 25) * 220, y: Math.floor(i / 25) * rowGap },
  }));
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, from: nodes[i].id, to: node.id }));
  return { nodes, edges };
}

/** start → Writer (an `llm` writing `note`) → end, with no `messages`
 *  channel: the model reads the conversation by default, so the graph has
 *  one problem, fixed by creating the channel. */
export function writerWithoutAConversation() {
  return {
    format_version: 2,
    name: "Writer without a conversation",
    state: { channels: { note: { type: "string" } } },
    nodes: [
      { id: "start", kind: "start", position: { x: 0, y: 0 } },
      { id: "llm_2", kind: "llm", label: "Writer", position: { x: 260, y: 0 }, config: { prompt: "Write.", output: "note" } },
      { id: "end", kind: "end", position: { x: 520, y: 0 } },
    ],
    edges: [
      { id: "a", from: "start", to: "llm_2" },
      { id: "b", from: "llm_2", to: "end" },
    ],
  };
}
