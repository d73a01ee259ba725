/**
 * Vitest global setup: every process the tests spawn (the built bin above all) gets a temporary
 * `XDG_CACHE_HOME`, so a capture's V8 code cache (cli/codeCache.ts) is written there and removed
 * after the run, never into the user's `~/.cache/rewind`. Tests that exercise the cache set their
 * own directory on top.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup() {
  const dir = mkdtempSync(join(tmpdir(), "rewind-test-cache-"))
  const previous = process.env.XDG_CACHE_HOME
  process.env.XDG_CACHE_HOME = dir
  return () => {
    if (previous === undefined) delete process.env.XDG_CACHE_HOME
    else process.env.XDG_CACHE_HOME = previous
    rmSync(dir, { recursive: true, force: true })
  }
}
