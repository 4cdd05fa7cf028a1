import { test, expect, hydrated, place } from "./fixtures";
for (const [w, h] of [[1440, 900], [1024, 700]]) {
  test(`look ${w}`, async ({ page }) => {
    await page.setViewportSize({ width: w, height: h });
    const r = (route: string) => ({ route, description: route });
    const created = await page.request.post("/api/v1/graphs/import", {
      data: {
        format_version: 3, name: "Look",
        state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
        nodes: [
          { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 40, y: 200 } },
          { id: "triage", kind: "router", config: { routes: [r("billing"), r("refunds"), r("tech_support")], otherwise: "tech_support" }, position: { x: 300, y: 200 } },
          { id: "a", kind: "llm", position: { x: 600, y: 60 } },
          { id: "b", kind: "llm", position: { x: 600, y: 200 } },
          { id: "c", kind: "llm", position: { x: 600, y: 340 } },
          { id: "end", kind: "end", position: { x: 900, y: 200 } },
        ],
        edges: [{ id: "e1", from: "start", to: "triage" },
          { id: "e2", from: "triage", to: "a", route: "billing" },
          { id: "e3", from: "triage", to: "b", route: "refunds" },
          { id: "e4", from: "triage", to: "c", route: "tech_support" },
          { id: "e5", from: "a", to: "end" }, { id: "e6", from: "b", to: "end" }, { id: "e7", from: "c", to: "end" }],
        groups: [{ id: "g1", label: "Answers", nodes: ["a", "b", "c"], collapsed: true }],
      },
    });
    expect(created.status()).toBe(201);
    await page.goto(`/graphs/${(await created.json()).id}`);
    await hydrated(page);
    await page.waitForTimeout(500);
    await page.screenshot({ path: `/tmp/look/group-${w}.png` });
  });
}
