// Playwright drives the system's Chromium, Debian's headless shell of it
// (/usr/bin/chromium-headless-shell, which scripts/test installs; the full
// /usr/bin/chromium when the shell is missing): browser downloads are not
// possible on our machines, so none is attempted.
// The server under test is the real `heddle` binary, built by the test
// command before this runs, on its own port with a fresh database.
import { defineConfig } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";

const port = Number(process.env.HEDDLE_E2E_PORT ?? 3210);
const chromium =
  process.env.HEDDLE_CHROMIUM ??
  (fs.existsSync("/usr/bin/chromium-headless-shell") ? "/usr/bin/chromium-headless-shell" : "/usr/bin/chromium");
// CARGO_TARGET_DIR, when set, is relative to the workspace root.
const heddle = path.resolve(__dirname, "..", process.env.CARGO_TARGET_DIR ?? "target", "debug/heddle");

/** The owner's cookies, written by the setup project. */
export const OWNER_STATE = path.resolve(__dirname, "../target/e2e/owner.json");

export default defineConfig({
  testDir: "./tests",
  outputDir: "../target/e2e/results",
  // Three workers, one test file each at a time. The suite took 3.0-3.4
  // minutes on two in the full browser, recording a trace of every test
  // and animating every running node; in the headless shell, with reduced
  // motion and traces only on a retry, 1.5 minutes on two and 1.3 on
  // three (2026-11-27), the CPU no longer full. Each test makes its own
  // graphs and threads, so they do not see each other's. Under two
  // workers a page was twice served without its own Content-Security-
  // Policy (2026-11-26 and -27); the policy is now set by a middleware
  // from the response's content type, not while the page renders, so that
  // race is gone (docs/development.md, "The page CSP race").
  fullyParallel: false,
  workers: 3,
  // One retry in CI only, as a guard: a retried test is reported as flaky,
  // not hidden. "the ReAct example ... animating node by node" failed about
  // 1 run in 4 (2026-11-22): on the offline model the run lasted ~200 ms
  // and could end before the page subscribed, so its events came as one
  // backlog. The offline model's pace below (60 ms a word) fixes that.
  retries: process.env.CI ? 1 : 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [["list"]],
  // `setup` walks the first-run path (the first visitor creates the owner
  // account) and keeps the owner's session for every other test.
  projects: [
    { name: "setup", testMatch: /first-run\.setup\.ts/ },
    {
      name: "app",
      dependencies: ["setup"],
      testIgnore: /\.setup\.ts/,
      use: { storageState: OWNER_STATE },
    },
  ],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    // A trace records the page at every step: for all 57 tests that was
    // about half the suite's CPU. CI retries a failed test once, with one.
    trace: "on-first-retry",
    screenshot: "only-on-failure",
    // The app stops its animations (pulsing nodes, flowing edges, the
    // caret) for people who ask for less motion; the tests assert states,
    // not animations, and an animating page repaints 60 times a second.
    reducedMotion: "reduce",
    launchOptions: {
      executablePath: chromium,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    command:
      `rm -rf ../target/e2e/data && ${heddle} serve --port ${port} ` +
      `--database-url sqlite://../target/e2e/data/heddle.db --site-root ../target/site`,
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    // The offline model streams a word every 60 ms (25 by default): a
    // chat run then lasts long enough for the tests that watch it animate
    // to subscribe while it runs, even on a loaded 2-core machine.
    env: { HEDDLE_OFFLINE_PACE_MS: "60" },
    timeout: 60_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
