// The browser's performance figures (docs/performance.md), measured in the
// same headless Chromium as the tests, on the server `scripts/bench-browser`
// builds (release). Prints figures; asserts no timings.
import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

export default defineConfig({
  ...base,
  testDir: "./benches",
  testMatch: /.*\.bench\.ts/,
  timeout: 300_000,
  // One at a time: the live bench beside the editor's doubled the open
  // time and made frames slow that are not (2026-11-27).
  workers: 1,
  projects: undefined,
  use: { ...base.use, trace: "off" },
  webServer: {
    ...(base.webServer as any),
    command: (base.webServer as any).command.replace("/debug/heddle", "/release/heddle"),
  },
});
