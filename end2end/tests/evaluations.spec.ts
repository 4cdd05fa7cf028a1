// Evaluations in the browser: a chat's answer kept as an example of a
// dataset, from the run panel, with the mouse and with the keyboard; the
// dataset read back over the API holds the chat's input and answer.
import * as fs from "fs";
import * as path from "path";
import { test, expect, hydrated } from "./fixtures";
import { Page } from "@playwright/test";

const example = (file: string) =>
  JSON.parse(
    fs.readFileSync(path.resolve(__dirname, "../../engine/examples/graphs", file), "utf8"),
  );

async function importGraph(page: Page, document: object): Promise<string> {
  const response = await page.request.post("/api/v1/graphs/import", { data: document });
  expect(response.status()).toBe(201);
  return (await response.json()).id;
}

/** Asks in the chat and waits for this question's answer and its run's end. */
async function ask(page: Page, question: string, answer: string) {
  await page.getByTestId("chat-input").fill(question);
  await page.getByTestId("chat-input").press("Enter");
  await expect(
    page.getByTestId("chat-messages").locator(".role-assistant").last(),
  ).toContainText(answer, { timeout: 15_000 });
  await expect(page.getByTestId("run-status")).toHaveText("Run finished", { timeout: 15_000 });
}

test("a chat's answer becomes an example of a new dataset, then of the same one by keyboard", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, example("react_agent.json"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await ask(page, "What is 6 * 7?", "calculator says 42.");

  // Mouse: the bar's button, a new dataset named, Add.
  await page.getByTestId("add-to-dataset").click();
  const dialog = page.getByRole("dialog", { name: "Add this run to a dataset" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("dataset-choice")).toBeFocused();
  await expect(dialog.getByTestId("dataset-choice")).toHaveValue("");
  await dialog.getByTestId("dataset-name").fill("Arithmetic");
  await dialog.getByTestId("example-label").fill("six sevens");
  await page.screenshot({ path: "../target/e2e/screens/add-to-dataset-light.png" });
  await dialog.getByTestId("add-to-dataset-confirm").click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("added-to-dataset")).toHaveText(
    "Added to “Arithmetic” (version 1, 1 example)",
  );
  await page.screenshot({ path: "../target/e2e/screens/added-to-dataset-light.png" });
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.getByTestId("add-to-dataset").click();
  await page.screenshot({ path: "../target/e2e/screens/add-to-dataset-small-light.png" });
  await page.keyboard.press("Escape");
  await page.setViewportSize({ width: 1440, height: 900 });

  // A name already taken is refused in the dialog, which stays open.
  await page.getByTestId("add-to-dataset").click();
  await dialog.getByTestId("dataset-choice").selectOption("");
  await dialog.getByTestId("dataset-name").fill("Arithmetic");
  await dialog.getByTestId("add-to-dataset-confirm").click();
  await expect(dialog.getByRole("alert")).toContainText("already has a dataset named `Arithmetic`");
  // That refusal (a 400 it was meant to get) is the browser's one logged
  // error; nothing else went wrong.
  const refused = errors.filter((error) => error.includes("status of 400"));
  expect(refused).toHaveLength(1);
  errors.splice(0, errors.length, ...errors.filter((error) => !refused.includes(error)));
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();

  // Keyboard: another question, then Tab to the button, Enter; the
  // existing dataset is chosen; Enter in the label adds.
  await ask(page, "What is 2 + 3?", "calculator says 5.");
  await expect(page.getByTestId("added-to-dataset")).toHaveCount(0);
  await page.getByTestId("add-to-dataset").focus();
  await page.keyboard.press("Enter");
  await expect(dialog.getByTestId("dataset-choice").locator("option:checked")).toHaveText(
    "Arithmetic (1 example)",
  );
  // The dialog takes the focus: the dataset, then Tab to the label.
  await expect(dialog.getByTestId("dataset-choice")).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(dialog.getByTestId("example-label")).toBeFocused();
  await page.keyboard.type("two and three");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("added-to-dataset")).toHaveText(
    "Added to “Arithmetic” (version 2, 2 examples)",
  );

  // Over the API: the chat's inputs, and its answers as the references.
  const datasets = await (await page.request.get(`/api/v1/graphs/${graph}/datasets`)).json();
  expect(datasets.map((d: any) => [d.name, d.version, d.examples])).toEqual([["Arithmetic", 2, 2]]);
  const version = await (
    await page.request.get(`/api/v1/graphs/${graph}/datasets/${datasets[0].id}`)
  ).json();
  expect(version.examples.map((e: any) => e.label)).toEqual(["six sevens", "two and three"]);
  expect(version.examples[0].input.messages[0].content).toBe("What is 6 * 7?");
  expect(version.examples[0].reference.answer).toBe("(offline model) calculator says 42.");
  expect(version.examples[1].reference.answer).toBe("(offline model) calculator says 5.");
});
