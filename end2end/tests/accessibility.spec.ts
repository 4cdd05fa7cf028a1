// axe-core over every page and every dialog a person opens, in both
// themes: no serious or critical violation of WCAG 2.1 A and AA anywhere.
// A finding is reported with its rule, what it means and the elements it
// names, so a failure says what to fix and where.
import * as fs from "fs";
import * as path from "path";
import { test, expect, hydrated, expectAccessible } from "./fixtures";

for (const scheme of ["light", "dark"] as const) {
  test(`every page and dialog passes axe-core (${scheme})`, async ({ page, browser, errors }) => {
    test.setTimeout(90_000);
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await page.setViewportSize({ width: 1440, height: 900 });

    // Home, its New graph menu and an example's dialog.
    await page.goto("/");
    await hydrated(page);
    await expectAccessible(page, "home");
    await page.getByRole("button", { name: "New graph" }).first().click();
    await expectAccessible(page, "home, New graph menu");
    await page.keyboard.press("Escape");
    await page.locator("#gallery").getByRole("button", { name: /Approve before a tool runs/ }).click();
    await expect(page.getByRole("dialog")).toBeVisible();
    await expectAccessible(page, "home, an example's dialog");
    await page.keyboard.press("Escape");

    // The editor: empty selection, a selected node, the run's panels.
    await page.getByRole("button", { name: "New graph" }).first().click();
    await page.getByRole("button", { name: /^Chat agent/ }).first().click();
    await page.waitForURL(/\/graphs\//);
    await hydrated(page);
    await expectAccessible(page, "editor");
    await page.locator(".canvas-node").nth(1).click();
    await expect(page.locator(".inspector")).toBeVisible();
    await expectAccessible(page, "editor, a node selected");

    await page.getByTestId("run").click();
    await page.getByTestId("chat-input").fill("Hello there");
    await page.getByTestId("chat-send").click();
    await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 20_000 });
    // A screen reader hears the run as it goes, from one live region.
    const announcer = page.getByTestId("run-announcer");
    await expect(announcer).toHaveAttribute("aria-live", "polite");
    await expect(announcer).toHaveText("Run finished");
    await expectAccessible(page, "editor, a run in its chat");
    for (const tab of ["Run", "Trace", "Events", "State", "Compare"]) {
      await page.getByRole("tab", { name: tab, exact: true }).click();
      await expectAccessible(page, `editor, the run's ${tab} tab`);
    }

    // Its dialogs.
    await page.getByTestId("share").click();
    const share = page.getByRole("dialog", { name: "Share" });
    await expect(share).toBeVisible();
    // Teammates are listed under their heading, not above it.
    const heading = (await share.getByRole("heading", { name: "Teammates" }).boundingBox())!;
    const none = (await share.getByText("No teammates yet").boundingBox())!;
    expect(none.y).toBeGreaterThan(heading.y);
    await expectAccessible(page, "the Share dialog");
    await page.keyboard.press("Escape");
    await page.getByTestId("add-to-dataset").click();
    await expect(page.getByTestId("add-to-dataset-confirm")).toBeVisible();
    await expectAccessible(page, "Add to dataset");
    await page.keyboard.press("Escape");

    // Published, with its history and evaluations open in the inspector.
    await page.getByTestId("publish").click();
    await expect(page.getByTestId("live-version")).toHaveText("Live v1");
    await page.keyboard.press("Escape");
    await expect(page.locator(".canvas-node.selected")).toHaveCount(0);
    await page.locator(".history summary", { hasText: "Version history" }).click();
    await page.locator(".evaluations summary").click();
    await expectAccessible(page, "the graph's history and evaluations");
    await page.getByTestId("open-datasets").click();
    await expect(page.getByRole("dialog")).toBeVisible();
    await expectAccessible(page, "the Datasets dialog");
    await page.keyboard.press("Escape");

    // A run paused at a person's gate, then a failed run: the states'
    // colours as text, in both themes.
    const gated = await page.request.post("/api/v1/graphs/import", {
      data: JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../engine/examples/graphs/tool_approval.json"), "utf8")),
    });
    await page.goto(`/graphs/${(await gated.json()).id}`);
    await hydrated(page);
    await page.getByTestId("chat-input").fill("What is 6 * 7?");
    await page.getByTestId("chat-send").click();
    await expect(page.getByTestId("interrupt")).toBeVisible({ timeout: 15_000 });
    await expect(page.getByTestId("run-announcer")).toHaveText(/^Run paused: .+ waits for an answer$/);
    await expectAccessible(page, "a run waiting at a gate");
    await page.getByTestId("reject").click();
    await expect(page.getByTestId("run-status")).not.toHaveText("Run interrupted", { timeout: 15_000 });
    await expectAccessible(page, "a run after its gate said no");

    // Settings, a missing graph, a missing page.
    await page.goto("/settings");
    await hydrated(page);
    await expectAccessible(page, "settings");
    await page.goto("/graphs/not-a-graph");
    await expectAccessible(page, "a missing graph");
    await page.goto("/no/such/page");
    await expectAccessible(page, "a missing page");

    // Logged out: log in and sign up.
    const visitor = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    const stranger = await visitor.newPage();
    await stranger.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await stranger.goto("/login");
    await hydrated(stranger);
    await expectAccessible(stranger, "log in");
    await stranger.goto("/signup");
    await hydrated(stranger);
    await expectAccessible(stranger, "sign up");
    await visitor.close();
  });
}
