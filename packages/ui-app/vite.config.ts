// The app's build: Preact through Vite's own JSX transform (no Babel preset needed), into dist/,
// which the rewind package's build copies to its dist/ui/app/. No inline script or style is
// emitted, so the server's `default-src 'self'` CSP holds.
import { defineConfig } from "vite"

export default defineConfig({
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, modulePreload: { polyfill: false }, assetsInlineLimit: 0 },
})
