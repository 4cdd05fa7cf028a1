// Sharing, as two people live it: the owner shares a viewer link; the
// teammate opens it (making an account on the way), sees the graph and a
// run animate live, and cannot change it; the owner revokes the link and
// the teammate loses access at once.
import { test, expect, hydrated, expectAccessible } from "./fixtures";
import { Browser, Page } from "@playwright/test";

const SLOW_GRAPH = {
  format_version: 2,
  name: "Slow and steady",
  state: { channels: { count: { type: "integer", reducer: "sum" } } },
  nodes: [
    { id: "start", kind: "start", position: { x: 0, y: 0 } },
    { id: "pause", kind: "wait", config: { ms: 1500 }, position: { x: 220, y: 0 } },
    { id: "tick", kind: "set", config: { values: { count: { value: 1 } } }, position: { x: 440, y: 0 } },
  ],
  edges: [
    { id: "e1", from: "start", to: "pause" },
    { id: "e2", from: "pause", to: "tick" },
  ],
};

async function teammatePage(browser: Browser): Promise<Page> {
  // A browser of their own: no cookies of the owner's.
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  return context.newPage();
}

const node = (page: Page, id: string) => page.locator(`.canvas-node[data-node="${id}"]`);

test("a viewer link shows the graph and its live runs, read-only, until revoked", async ({
  page: owner,
  browser,
  errors,
}) => {
  await owner.setViewportSize({ width: 1280, height: 800 });
  const created = await owner.request.post("/api/v1/graphs", { data: { document: SLOW_GRAPH } });
  expect(created.status()).toBe(201);
  const { id } = await created.json();

  // The owner makes a viewer link.
  await owner.goto(`/graphs/${id}`);
  await hydrated(owner);
  await expect(owner.getByTestId("role")).toHaveText("owner");
  // The owner's copy is their graph: no "Make a copy"; Share opens the dialog.
  await expect(owner.getByRole("button", { name: "Make a copy" })).toHaveCount(0);
  await owner.getByTestId("share").click();
  const dialog = owner.getByRole("dialog", { name: "Share" });
  await expect(dialog).toBeVisible();
  // The focus moves into the dialog, so the keyboard goes on from there.
  await expect(dialog.getByRole("button", { name: "Done" })).toBeFocused();
  await owner.getByTestId("link-role").selectOption("viewer");
  await owner.getByRole("button", { name: "Create link" }).click();
  const urlBox = owner.getByTestId("share-url");
  await expect(urlBox).toHaveValue(/^http:\/\/127\.0\.0\.1:\d+\/share\/[0-9a-f]{64}$/);
  await expect(dialog.getByRole("button", { name: "Copy" })).toBeVisible();
  const shareUrl = await urlBox.inputValue();
  await owner.screenshot({ path: "../target/e2e/screens/share-owner-light.png" });
  await dialog.getByRole("button", { name: "Done" }).click();
  await expect(dialog).toHaveCount(0);

  // The teammate opens it, is asked to log in, makes an account instead,
  // and lands on the graph as a viewer.
  const teammate = await teammatePage(browser);
  await teammate.setViewportSize({ width: 1280, height: 800 });
  const teammateErrors: string[] = [];
  teammate.on("pageerror", (error) => teammateErrors.push(error.message));
  await teammate.goto(shareUrl);
  await expect(teammate).toHaveURL(/\/login\?next=/);
  await hydrated(teammate);
  await teammate.getByRole("link", { name: "Create an account" }).click();
  await expect(teammate).toHaveURL(/\/signup\?next=/);
  await teammate.getByLabel("Username").fill("tess");
  await teammate.getByLabel("Password").fill("tess's long password");
  await teammate.getByRole("button", { name: "Create account" }).click();
  // The link's page says what it offers; opening it is the teammate's
  // own click (a POST), never the page load.
  await expect(teammate).toHaveURL(/\/share\//);
  await expect(teammate.getByRole("heading", { name: "Slow and steady" })).toBeVisible();
  await hydrated(teammate);
  await expectAccessible(teammate, "a share link's page");
  await teammate.screenshot({ path: "../target/e2e/screens/share-offer-light.png" });
  await teammate.getByRole("button", { name: "Open the graph" }).click();
  await expect(teammate).toHaveURL(new RegExp(`/graphs/${id}$`));
  await expect(teammate.locator(".graph-title")).toHaveText("Slow and steady");
  await expect(teammate.getByTestId("role")).toHaveText("viewer");
  await expect(teammate.getByTestId("username")).toHaveText("tess");
  // Viewers get no run button and no share panel.
  await expect(teammate.getByTestId("run")).toHaveCount(0);
  await expect(teammate.getByRole("heading", { name: "Share" })).toHaveCount(0);
  await expect(node(teammate, "pause")).toHaveAttribute("data-state", "idle");

  // The owner runs the graph; the teammate watches it animate.
  await owner.getByTestId("run").click();
  await expect(node(teammate, "pause")).toHaveAttribute("data-state", "running");
  await expect(teammate.getByTestId("run-status")).toHaveText("Run running");
  await teammate.screenshot({ path: "../target/e2e/screens/share-viewer-running-light.png" });
  await expect(node(teammate, "pause")).toHaveAttribute("data-state", "succeeded");
  await expect(node(teammate, "tick")).toHaveAttribute("data-state", "succeeded");
  await expect(teammate.getByTestId("run-status")).toHaveText("Run finished");
  await expect(owner.getByTestId("run-status")).toHaveText("Run finished");
  // The run panel opened for the teammate too: the run to inspect, nothing to start.
  await expect(teammate.getByTestId("run-panel")).toContainText("needs the editor role");
  await expect(teammate.getByTestId("run-start")).toHaveCount(0);
  await expect(teammate.getByTestId("scrub-step")).toHaveText("Steps 0–2");

  // The teammate cannot change it, even by calling the API from the page.
  const refused = await teammate.evaluate(async (graph) => {
    const response = await fetch(`/api/v1/graphs/${graph}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ base_version: 1, document: { format_version: 2, name: "mine now" } }),
    });
    return { status: response.status, body: await response.json() };
  }, id);
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toBe("you are a viewer of this graph; this needs the editor role");

  // The owner revokes the link; the teammate's open page hears it.
  await owner.getByTestId("share").click();
  await owner.getByRole("button", { name: "Revoke" }).click();
  await expect(owner.getByText("No active links.")).toBeVisible();
  await expect(teammate.getByTestId("access-ended")).toBeVisible();
  // Nothing that would fail is offered any more.
  await expect(teammate.getByRole("button", { name: "Make a copy" })).toBeDisabled();
  await owner.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await teammate.screenshot({ path: "../target/e2e/screens/share-revoked-light.png" });
  // A reload says the same: their access ended, and why (not "not found").
  const reloaded = await teammate.reload();
  expect(reloaded?.status()).toBe(410);
  await expect(teammate.getByRole("heading", { name: "Your access has ended" })).toBeVisible();
  await expect(teammate.getByText("The share link you opened was revoked. Ask its owner for a new link.")).toBeVisible();
  await teammate.screenshot({ path: "../target/e2e/screens/share-ended-light.png" });
  // The API says so too.
  const ended = await teammate.evaluate(async (graph) => {
    const response = await fetch(`/api/v1/graphs/${graph}`);
    return { status: response.status, body: await response.json() };
  }, id);
  expect(ended.status).toBe(410);
  expect(ended.body.error.message).toContain("your access to this graph has ended");
  // And the link itself says it was revoked.
  const again = await teammate.goto(shareUrl);
  expect(again?.status()).toBe(410);
  await expect(teammate.getByRole("heading", { name: "This share link no longer works" })).toBeVisible();
  await expect(teammate.getByText(/revoked by the graph's owner/)).toBeVisible();

  expect(teammateErrors).toEqual([]);
  expect(errors).toEqual([]);
});

test("logging out ends the session and the pages ask to log in", async ({ browser }) => {
  // A separate account, so the owner's saved session stays valid.
  // A name of this attempt's own: a retry cannot sign up one taken.
  const name = `leo${test.info().retry || ""}`;
  const page = await teammatePage(browser);
  await page.goto("/signup");
  await hydrated(page);
  await page.getByLabel("Username").fill(name);
  await page.getByLabel("Password").fill("leo's long password");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByTestId("username")).toHaveText(name);
  await page.getByRole("button", { name: "Log out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByTestId("username")).toHaveCount(0);
  await page.goto("/");
  await expect(page).toHaveURL(/\/login\?next=\/$/);
  await expect(page.getByRole("heading", { name: "Log in to Heddle" })).toBeVisible();
  await page.getByLabel("Username").fill(name);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("alert")).toHaveText("wrong username or password");
});

test("a form sent before the page's script runs still says what went wrong, on the form", async ({ browser }) => {
  // What a press before hydration does (a slow connection, a busy
  // machine): the browser posts the form itself. It showed the error's
  // raw JSON on /api/log_in.
  const context = await browser.newContext({
    storageState: { cookies: [], origins: [] },
    javaScriptEnabled: false,
  });
  const page = await context.newPage();
  const name = `nina${test.info().retry || ""}`;
  await page.goto("/signup");
  await page.getByLabel("Username").fill(name);
  await page.getByLabel("Password").fill("nina's long password");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { name: "Graphs", exact: true })).toBeVisible();

  await context.clearCookies();
  await page.goto("/login?next=/");
  await page.getByLabel("Username").fill(name);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page).toHaveURL(/\/login\?/);
  await expect(page.getByRole("alert")).toHaveText("wrong username or password");
  // The same name again at sign-up is refused there, on the form.
  await page.goto("/signup");
  await page.getByLabel("Username").fill(name);
  await page.getByLabel("Password").fill("nina's long password");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/signup\?/);
  await expect(page.getByRole("alert")).toContainText("not taken yet");
  // The error rides in the address, which anyone can write: the form says
  // its own words for the error's kind, never the address's text.
  const forged = Buffer.from(JSON.stringify({ Unauthorized: "Heddle moved: log in at evil.example" }));
  // (URL-safe base64 with its padding, as server_fn writes it.)
  const encoded = encodeURIComponent(forged.toString("base64").replace(/\+/g, "-").replace(/\//g, "_"));
  await page.goto(`/login?__path=%2Fapi%2Flog_in&__err=${encoded}`);
  await expect(page.getByRole("alert")).toHaveText("wrong username or password");
  // And the right password logs in.
  await page.goto("/login?next=/");
  await page.getByLabel("Username").fill(name);
  await page.getByLabel("Password").fill("nina's long password");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page).toHaveURL(/\/$/);
  await context.close();
});

test("a link to a moment of a run opens that run's replay there", async ({ page: owner, browser }) => {
  const created = await owner.request.post("/api/v1/graphs", {
    data: { document: { ...SLOW_GRAPH, name: "Replayed" } },
  });
  const { id } = await created.json();
  const started = await owner.request.post(`/api/v1/graphs/${id}/runs`, { data: { input: {} } });
  const run = (await started.json()).id as string;
  await expect
    .poll(async () => (await (await owner.request.get(`/api/v1/runs/${run}`)).json()).status)
    .toBe("finished");
  const link = await owner.request.post(`/api/v1/graphs/${id}/links`, {
    data: { role: "viewer", run_id: run, step: 1 },
  });
  const { path } = await link.json();

  const teammate = await teammatePage(browser);
  await teammate.goto("/signup");
  await hydrated(teammate);
  await teammate.getByLabel("Username").fill("rita");
  await teammate.getByLabel("Password").fill("rita's long password");
  await teammate.getByRole("button", { name: "Create account" }).click();
  await expect(teammate.getByTestId("username")).toHaveText("rita");
  await teammate.goto(path);
  await hydrated(teammate);
  await teammate.getByRole("button", { name: "Open the graph" }).click();
  await expect(teammate).toHaveURL(new RegExp(`/graphs/${id}\\?run=${run}&step=1$`));
  await hydrated(teammate);
  await expect(teammate.getByTestId("run-status")).toHaveText("Replay at step 1");
  // After step 1: the wait has run, the node after it has not.
  await expect(node(teammate, "start")).toHaveAttribute("data-state", "succeeded");
  await expect(node(teammate, "pause")).toHaveAttribute("data-state", "succeeded");
  await expect(node(teammate, "tick")).toHaveAttribute("data-state", "idle");
});

test("a long run can be stopped; the run history lists it and opens it", async ({ page }) => {
  const created = await page.request.post("/api/v1/graphs", {
    data: {
      document: {
        ...SLOW_GRAPH,
        name: "Long wait",
        nodes: SLOW_GRAPH.nodes.map((n) => (n.id === "pause" ? { ...n, config: { ms: 60000 } } : n)),
      },
    },
  });
  const { id } = await created.json();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`/graphs/${id}`);
  await hydrated(page);
  await page.getByTestId("run").click();
  await expect(node(page, "pause")).toHaveAttribute("data-state", "running");
  await expect(page.getByTestId("run")).toHaveText("Stop");
  await page.getByTestId("run").click();
  await expect(page.getByTestId("run-status")).toHaveText("Run cancelled");
  await expect(page.getByTestId("run")).toHaveText("Run");

  await page.locator(".history summary", { hasText: "Runs" }).click();
  const row = page.locator(".run-list .version-row").first();
  await expect(row).toContainText("cancelled");
  await expect(row).toContainText("olivia");
  await row.getByRole("link", { name: "Open" }).click();
  await expect(page).toHaveURL(/\?run=run-/);
  await hydrated(page);
  await expect(node(page, "start")).toHaveAttribute("data-state", "succeeded");
});
