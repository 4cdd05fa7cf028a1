// The editor profiled in headless Chromium (benches/*.prof.ts) on the
// debug server and site, whose wasm keeps function names. Prints; asserts
// nothing.
import { defineConfig } from "@playwright/test";
import base from "./playwright.config";
export default defineConfig({
  ...base,
  testDir: "./benches",
  testMatch: /.*\.prof\.ts/,
  timeout: 300_000,
  projects: undefined,
  use: { ...base.use, trace: "off" },
});
