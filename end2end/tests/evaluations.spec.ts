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
  // A turn of a conversation: kept with what came before it, unless unticked.
  await expect(dialog.getByTestId("with-conversation")).toBeChecked();
  await expect(dialog.locator("label.check")).toContainText(/With the conversation before it \(\d+ earlier messages\)/);
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
  // The second turn's example asks it after the first turn, as the chat did.
  const asked = version.examples[1].input.messages.filter((m: any) => m.role === "user");
  expect(asked.map((m: any) => m.content)).toEqual(["What is 6 * 7?", "What is 2 + 3?"]);
  expect(version.examples[1].input.messages.at(-1).content).toBe("What is 2 + 3?");
});

/** Runs the graph on `question` over the API and waits for its end; its id. */
async function answered(page: Page, graph: string, question: string): Promise<string> {
  const started = await page.request.post(`/api/v1/graphs/${graph}/runs`, {
    data: { input: { messages: [{ role: "user", content: question }] } },
  });
  expect(started.status()).toBe(202);
  const id = (await started.json()).id;
  await expect
    .poll(async () => (await (await page.request.get(`/api/v1/runs/${id}`)).json()).status, {
      timeout: 15_000,
    })
    .toBe("finished");
  return id;
}

/** Starts an experiment of the version on screen from the Evaluations section. */
async function runExperiment(page: Page, version: number, replies?: string) {
  await page.getByRole("button", { name: "New experiment" }).click();
  const dialog = page.getByRole("dialog", { name: "New experiment" });
  await expect(dialog.getByTestId("experiment-dataset")).toBeFocused();
  await expect(dialog.getByTestId("experiment-version")).toHaveValue(String(version));
  if (replies) {
    await dialog.getByTestId("experiment-replies").selectOption({ label: replies });
    await page.screenshot({ path: `../target/e2e/screens/new-experiment-replies-${version}.png` });
  }
  await dialog.getByTestId("start-experiment").click();
  await expect(dialog).toBeHidden();
  const row = page.locator(".experiment-row", { hasText: `Version ${version} on Arithmetic` });
  await expect(row).toHaveAttribute("data-status", "finished", { timeout: 30_000 });
  return row;
}

test("version 2 of a graph, run over the same examples as version 1, shows its regression side by side", async ({
  page,
  errors,
}) => {
  // Two experiments, each up to 30 s to finish: about 18 s on a quiet
  // machine, and it once went past the default 30 s on CI's busy one.
  test.setTimeout(75_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, example("react_agent.json"));
  // Three answers kept as a dataset's examples.
  const made = await page.request.post(`/api/v1/graphs/${graph}/datasets`, {
    data: { name: "Arithmetic" },
  });
  const dataset = (await made.json()).id;
  let last = "";
  for (const [question, label] of [
    ["What is 6 * 7?", "six sevens"],
    ["What is 12 + 30?", "twelve and thirty"],
    ["What is 9 - 4?", "nine less four"],
  ]) {
    const run = await answered(page, graph, question);
    last = run;
    const added = await page.request.post(
      `/api/v1/graphs/${graph}/datasets/${dataset}/examples/from-run`,
      { data: { run_id: run, label } },
    );
    expect(added.status()).toBe(200);
  }

  // Version 1 over them: every answer holds its reference.
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.locator(".evaluations summary").click();
  await expect(page.locator(".evaluations .empty-note")).toContainText("No experiments yet");
  const first = await runExperiment(page, 1, "Ask them, and record their replies");
  // Three runs of a model, a tool and the model again, each reply kept.
  await expect(first.locator(".experiment-replies")).toHaveText("0 of 9 replies replayed");
  await expect(first.locator(".score-chip")).toHaveText("answer 1.00");
  await expect(first).toContainText("3 of 3 runs");
  // The page heard of the experiment's runs but did not follow them: the
  // canvas shows the run it opened on (the last a person started), and
  // the chat goes on with the latest of the conversations people held,
  // never an experiment's.
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-run", last);
  await expect(page.getByTestId("chat-thread").locator("option")).toHaveCount(4);
  await expect(page.getByTestId("chat-messages").locator(".role-user p")).toHaveText(["What is 9 - 4?"]);

  // Version 2 loses its calculator: its answers change.
  const current = await (await page.request.get(`/api/v1/graphs/${graph}`)).json();
  const document = current.document;
  for (const node of document.nodes) {
    if (node.config?.tools) node.config.tools = ["current_time"];
  }
  const saved = await page.request.put(`/api/v1/graphs/${graph}`, {
    data: { base_version: 1, document },
  });
  expect(saved.status()).toBe(200);
  await page.reload();
  await hydrated(page);
  await page.locator(".evaluations summary").click();
  // Replaying version 1's replies: version 2's model is offered other
  // tools, so no request is the same and every call is made anew.
  const second = await runExperiment(page, 2, "Replay those of “Version 1 on Arithmetic v3”");
  await expect(second.locator(".score-chip")).toHaveText("answer 0.00");
  await expect(second.locator(".experiment-replies")).toHaveText(/^0 of \d+ replies replayed$/);
  // The trend: the answer scorer's mean fell from version 1 to version 2.
  const trend = page.getByTestId("score-trend");
  await expect(trend.locator('[data-scorer="answer"] circle')).toHaveCount(2);
  await expect(trend.getByRole("img")).toHaveAttribute(
    "aria-label",
    "Mean scores over 2 experiments on Arithmetic: answer from 1.00 to 0.00",
  );
  await expect(trend.locator("text", { hasText: "v2" })).toBeVisible();

  // Both chosen, compared: version 2's mean is worse, and every example
  // is marked as a regression, with its changed answer beside the old.
  await page.getByRole("checkbox", { name: "Compare “Version 1 on Arithmetic v3”" }).check();
  await page.getByRole("checkbox", { name: "Compare “Version 2 on Arithmetic v3”" }).check();
  await page.getByRole("button", { name: "Compare 2" }).click();
  const compare = page.getByRole("dialog", { name: "Compare experiments" });
  const scores = compare.getByTestId("compare-scores");
  await expect(scores.locator("thead th").nth(1)).toContainText("Version 1 on Arithmetic v3");
  const answerRow = scores.locator("tbody tr", { hasText: "answer" });
  await expect(answerRow.locator("td").nth(1)).toHaveClass(/worse/);
  await expect(answerRow.locator("td").nth(1)).toContainText("(-1.00)");
  const examples = compare.getByTestId("compare-examples");
  await expect(examples.locator("tbody tr.regressed")).toHaveCount(3);
  await expect(examples.locator("tbody tr").first().locator("td").first()).toContainText(
    "calculator says",
  );
  await expect(examples.locator("tbody tr").first().locator("td.changed")).toHaveCount(1);
  await page.screenshot({ path: "../target/e2e/screens/compare-experiments-1440.png" });
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: "../target/e2e/screens/compare-experiments-1024.png" });
  await page.keyboard.press("Escape");
  await expect(compare).toBeHidden();
  await page.screenshot({ path: "../target/e2e/screens/evaluations-1024.png" });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: "../target/e2e/screens/evaluations-1440.png" });

  // Each example is an ordinary run: listed with the experiment's name.
  const runs = await (await page.request.get(`/api/v1/graphs/${graph}/runs`)).json();
  expect(runs.filter((run: any) => run.origin === "experiment")).toHaveLength(6);

  // The version history shows each version's scores.
  await page.locator(".history summary", { hasText: "Version history" }).click();
  await expect(page.locator('.version-row[data-version="2"] [data-testid="version-scores"]')).toHaveText(
    "answer 0.00 on Arithmetic v3",
  );
  await expect(page.locator('.version-row[data-version="1"] [data-testid="version-scores"]')).toHaveText(
    "answer 1.00 on Arithmetic v3",
  );

  // Version 1 goes live; then publishing is gated on the dataset, from
  // the section, and Publish refuses the worse version 2, saying why.
  expect(
    (await page.request.put(`/api/v1/graphs/${graph}/published`, { data: { version: 1 } })).status(),
  ).toBe(200);
  await page.reload();
  await hydrated(page);
  await page.locator(".evaluations summary").click();
  const gate = page.getByTestId("publish-gate");
  await expect(gate).toContainText("No publishing gate");
  await gate.getByRole("button", { name: "Gate publishing" }).click();
  await gate.getByRole("button", { name: "Save gate" }).click();
  await expect(gate).toContainText("scores no worse than the live one on “Arithmetic” version 3");
  await page.getByTestId("publish").click();
  await expect(page.getByTestId("publish-error")).toContainText(
    "version 2 scores worse than the live version 1",
  );
  await expect(page.getByTestId("live-version")).toHaveText("Live v1");
  await page.screenshot({ path: "../target/e2e/screens/publish-gate-1440.png" });
  // The refusal (a 409 it was meant to get) is the browser's one logged error.
  const refused = errors.filter((error) => error.includes("status of 409"));
  expect(refused).toHaveLength(1);
  errors.splice(0, errors.length, ...errors.filter((error) => !refused.includes(error)));
  expect(errors).toEqual([]);
});

test("a dataset is made, filled from a CSV file with its columns mapped, and edited in its table", async ({
  page,
  errors,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const graph = await importGraph(page, example("react_agent.json"));
  await page.goto(`/graphs/${graph}`);
  await hydrated(page);
  await page.locator(".evaluations summary").click();
  await page.getByTestId("open-datasets").click();
  const dialog = page.getByRole("dialog", { name: "Datasets" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("datasets-choose")).toBeFocused();

  // Made by name; it starts empty.
  await dialog.getByTestId("dataset-new-name").fill("Support questions");
  await dialog.getByTestId("dataset-new-name").press("Enter");
  await expect(dialog.getByTestId("datasets-said")).toContainText("Made “Support questions”");
  await expect(dialog.getByTestId("examples-empty")).toBeVisible();

  // A ragged table pasted: refused at its line, nothing added.
  await dialog.getByTestId("dataset-import").click();
  const text = dialog.getByTestId("import-text");
  await text.fill("id,question,expected\nr1,Where is my order?,shipped\nr2,Refund?\n");
  await expect(dialog.getByTestId("import-problems")).toContainText(
    "line 3: 2 cells where the header has 3",
  );
  await expect(dialog.getByTestId("import-add")).toBeDisabled();

  // The file: each column mapped by its name (question fills the chat).
  await dialog.getByTestId("import-file").setInputFiles({
    name: "support.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(
      'id,question,expected\nr1,"Where is my order, please?",shipped\nr2,How long do refunds take?,14 days\nr3,Do you ship abroad?,yes\n',
    ),
  });
  const mapping = dialog.getByTestId("import-mapping");
  await expect(mapping.locator('select[data-column="id"]')).toHaveValue("label");
  await expect(mapping.locator('select[data-column="question"]')).toHaveValue("input:messages");
  await expect(mapping.locator('select[data-column="expected"]')).toHaveValue("reference:answer");
  await expect(dialog.getByTestId("import-preview")).toContainText("3 examples ready");
  await page.screenshot({ path: "../target/e2e/screens/dataset-import-1440.png" });
  // Leaving the input out is refused, naming why; putting it back fixes it.
  await mapping.locator('select[data-column="question"]').selectOption("skip");
  await expect(dialog.getByTestId("import-problems")).toContainText("no column fills an input");
  await mapping.locator('select[data-column="question"]').selectOption("input:messages");
  await dialog.getByTestId("import-add").click();
  await expect(dialog.getByTestId("datasets-choose")).toContainText("version 1 · 3 examples");
  const table = dialog.getByTestId("example-table");
  await expect(table.locator("tbody tr")).toHaveCount(3);
  await expect(table.locator("tbody tr").first()).toContainText("Where is my order, please?");
  await expect(table.locator("tbody tr").first()).toContainText("answer: shipped");
  await expect(dialog.getByTestId("example-range")).toHaveText("1–3 of 3");
  await expect(dialog.getByRole("button", { name: "Next" })).toBeDisabled();
  await page.screenshot({ path: "../target/e2e/screens/dataset-table-1440.png" });

  // Edited in place: a bad reference is refused in the row; Escape leaves
  // the edit, not the dialog.
  await table.getByRole("button", { name: "Edit “r2”" }).click();
  await expect(table.getByLabel("Label")).toBeFocused();
  await dialog.getByTestId("example-reference").fill('{"answer": "14 days"');
  await dialog.getByTestId("example-save").click();
  await expect(table.locator(".example-editing")).toContainText("Reference: not JSON");
  await page.keyboard.press("Escape");
  await expect(table.locator(".example-editing")).toHaveCount(0);
  await expect(dialog).toBeVisible();
  // The edit's first field takes the focus a frame after it is drawn; a
  // field put in focus before that frame keeps it. (Taken back, the
  // typing went into the label: r2{"answer": …}, 1 run in 8 under load.)
  const kept = await page.evaluate(async () => {
    const edit = document.querySelector<HTMLButtonElement>('button[aria-label="Edit “r2”"]');
    edit?.click();
    const reference = () =>
      document.querySelector<HTMLTextAreaElement>('[data-testid="example-reference"]');
    for (let tick = 0; tick < 100 && !reference(); tick++) await Promise.resolve();
    reference()?.focus();
    await new Promise((frame) => requestAnimationFrame(() => requestAnimationFrame(frame)));
    return document.activeElement === reference();
  });
  expect(kept).toBe(true);
  await dialog.getByTestId("example-reference").fill('{"answer": "14 working days"}');
  await dialog.getByTestId("example-save").click();
  await expect(dialog.getByTestId("datasets-said")).toHaveText(
    "Version 2: “r2” edited (the versions before keep it as it was).",
  );
  await expect(table.locator("tbody tr").nth(1)).toContainText("14 working days");
  // Removed: a third version, two examples.
  await table.getByRole("button", { name: "Remove “r3”" }).click();
  await expect(dialog.getByTestId("datasets-said")).toHaveText(
    "Version 3: “r3” removed (the versions before keep it).",
  );
  await expect(table.locator("tbody tr")).toHaveCount(2);
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: "../target/e2e/screens/dataset-table-1024.png" });

  // Over the API, the versions read back as they were.
  const datasets = await (await page.request.get(`/api/v1/graphs/${graph}/datasets`)).json();
  const id = datasets[0].id;
  const v1 = await (
    await page.request.get(`/api/v1/graphs/${graph}/datasets/${id}?version=1`)
  ).json();
  expect(v1.examples.map((e: { label: string }) => e.label)).toEqual(["r1", "r2", "r3"]);
  expect(v1.examples[0].input).toEqual({
    messages: [{ role: "user", content: "Where is my order, please?" }],
  });
  const latest = await (await page.request.get(`/api/v1/graphs/${graph}/datasets/${id}`)).json();
  expect(latest.version).toBe(3);
  expect(latest.examples[1].reference).toEqual({ answer: "14 working days" });
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  expect(errors).toEqual([]);
});
