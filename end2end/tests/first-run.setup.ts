// The first-run path: on a fresh server the first visitor is sent to the
// log-in page, which offers to create the owner account in one step; after
// it they are home, logged in. Their session is kept for the other tests.
import { test, expect, hydrated } from "./fixtures";
import { OWNER_STATE } from "../playwright.config";

export const OWNER = { username: "olivia", password: "correct horse battery" };

test("the first visitor creates the owner account in one step", async ({ page, errors }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/");
  await expect(page).toHaveURL(/\/login\?next=\/$/);
  await hydrated(page);
  await expect(page.getByRole("heading", { name: "Welcome to Heddle" })).toBeVisible();
  await page.screenshot({ path: "../target/e2e/screens/first-run-light.png" });

  await page.getByLabel("Username").fill(OWNER.username);
  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: "Create the owner account" }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { name: "Graphs", level: 1 })).toBeVisible();
  await expect(page.getByTestId("username")).toHaveText(OWNER.username);
  await page.context().storageState({ path: OWNER_STATE });
  expect(errors).toEqual([]);
});
