// The editor profiled in headless Chromium (benches/*.prof.ts) on the
// debug server and site, whose wasm keeps function names; with
// HEDDLE_PROFILE_RELEASE=1, on the release server and whatever site was
// built last (`cargo xtask build --release` for both). Prints; asserts
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
  webServer: process.env.HEDDLE_PROFILE_RELEASE
    ? { ...(base.webServer as any), command: (base.webServer as any).command.replace("/debug/heddle", "/release/heddle") }
    : base.webServer,
});
