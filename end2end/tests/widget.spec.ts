// The chat widget on another site: a shop's page (served here by a second
// local server, so its origin differs from Heddle's) embeds the script;
// a visitor opens the bubble and chats, and the conversation goes on.
// The same page on an origin the widget does not allow shows the chat as
// unavailable and sends nothing.
import { createServer, Server } from "node:http";
import { AddressInfo } from "node:net";
import { test, expect, expectAccessible } from "./fixtures";

const CHAT = {
  format_version: 2,
  name: "Shop assistant",
  state: { channels: { messages: { type: "messages", reducer: "add_messages", scope: "thread" } } },
  nodes: [
    { id: "start", kind: "start", config: { inputs: ["messages"] }, position: { x: 0, y: 0 } },
    { id: "reply", kind: "llm", config: { system: "You help shoppers." }, position: { x: 240, y: 0 } },
    { id: "end", kind: "end", position: { x: 480, y: 0 } },
  ],
  edges: [
    { id: "e1", from: "start", to: "reply" },
    { id: "e2", from: "reply", to: "end" },
  ],
};

/** A shop's page, on its own port, embedding the widget `token()` names. */
function shop(heddle: string, token: () => string): Promise<Server> {
  const server = createServer((_, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><html><head><title>Shop</title></head><body>
      <h1>The shop</h1>
      <script src="${heddle}/widget.js" data-heddle-widget="${token()}" async></script>
    </body></html>`);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

test("a visitor of an allowed site chats through the widget; another site cannot", async ({
  page,
  browser,
  errors,
}) => {
  const imported = await page.request.post("/api/v1/graphs/import", { data: CHAT });
  expect(imported.status()).toBe(201);
  const id = (await imported.json()).id;
  expect((await page.request.put(`/api/v1/graphs/${id}/published`, { data: { version: 1 } })).status()).toBe(200);
  await page.goto("/");
  const heddle = new URL(page.url()).origin;

  let token = "";
  const site = await shop(heddle, () => token);
  const sitePort = (site.address() as AddressInfo).port;
  const made = await page.request.post(`/api/v1/graphs/${id}/widgets`, {
    data: {
      name: "Shop bubble",
      allowed_origins: [`http://127.0.0.1:${sitePort}`],
      greeting: "Hi! Ask me anything.",
      color: "#0f766e",
    },
  });
  expect(made.status()).toBe(201);
  token = (await made.json()).token;

  try {
    // A visitor with no Heddle session.
    const visitor = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    const shopper = await visitor.newPage();
    await shopper.setViewportSize({ width: 1024, height: 700 });
    await shopper.goto(`http://127.0.0.1:${sitePort}/`);
    const bubble = shopper.getByRole("button", { name: "Open the chat: Shop assistant" });
    await bubble.click();
    const chat = shopper.getByRole("dialog", { name: "Shop assistant" });
    await expect(chat).toContainText("Hi! Ask me anything.");
    await chat.getByLabel("Your message").fill("Hi, my name is Ada");
    await chat.getByLabel("Your message").press("Enter");
    await expect(chat).toContainText("Nice to meet you, Ada.");
    await chat.getByLabel("Your message").fill("What is my name?");
    await chat.getByRole("button", { name: "Send" }).click();
    await expect(chat).toContainText("Your name is Ada.");
    await shopper.screenshot({ path: "../target/e2e/screens/widget-shop-1024.png" });
    // The widget is ours to make accessible; the shop's page is not.
    await expectAccessible(shopper, "the chat widget", "[data-heddle-widget-root]");
    // A reload keeps the conversation's thread.
    await shopper.reload();
    await shopper.getByRole("button", { name: "Open the chat: Shop assistant" }).click();
    await shopper.getByLabel("Your message").fill("What is my name?");
    await shopper.getByLabel("Your message").press("Enter");
    await expect(shopper.getByRole("dialog", { name: "Shop assistant" })).toContainText("Your name is Ada.");

    // The same page on another origin: unavailable, nothing sent.
    const elsewhere = await visitor.newPage();
    await elsewhere.goto(`http://localhost:${sitePort}/`);
    await elsewhere.getByRole("button", { name: /Open the chat/ }).click();
    await expect(elsewhere.getByRole("dialog")).toContainText("this chat is not available on this site");
    await expect(elsewhere.getByLabel("Your message")).toBeDisabled();
    await visitor.close();

    // The owner sees the conversation's runs, labelled.
    const runs = await (await page.request.get(`/api/v1/graphs/${id}/runs`)).json();
    expect(runs.length).toBe(3);
    expect(runs.every((run: { origin: string; origin_label: string }) =>
      run.origin === "widget" && run.origin_label === "Shop bubble")).toBe(true);
    expect(new Set(runs.map((run: { thread_id: string }) => run.thread_id)).size).toBe(1);
  } finally {
    site.close();
  }
});
