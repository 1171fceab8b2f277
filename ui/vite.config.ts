import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vitest/config";

export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  clearScreen: false,
  // The tauri CLI expects the dev server on a fixed port (tauri.conf.json devUrl).
  server: { port: 1420, strictPort: true },
  build: {
    // WebKitGTK on Debian 12 and Safari 16 are the oldest engines Pinloom runs in.
    target: "safari16",
    // Inline assets would need a looser CSP (data: scripts or styles); keep every asset a file.
    assetsInlineLimit: 0,
  },
  // Under vitest, resolve Svelte's browser build so components mount in jsdom.
  resolve: mode === "test" ? { conditions: ["browser"] } : {},
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test-setup.ts"],
  },
}));
