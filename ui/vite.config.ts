/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

/** Test files that replace a module with vi.mock, run each in its own module graph. */
export const MOCKS = ["src/features/recipes/SimpleEditor.test.tsx"];

// The app loads the built `dist/` (tauri.conf.json has no devUrl), so relative asset paths.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    // One module graph and one jsdom per worker, shared by its files: a fresh one for each file
    // took most of the run (the store and the mocks are reset after every test, setup.ts). A
    // file that replaces a module with vi.mock needs a graph of its own: it is listed in MOCKS.
    projects: [
      { extends: true, test: { name: "ui", include: ["src/**/*.test.{ts,tsx}"], exclude: MOCKS, isolate: false } },
      { extends: true, test: { name: "ui-mocks", include: MOCKS } },
    ],
  },
});
