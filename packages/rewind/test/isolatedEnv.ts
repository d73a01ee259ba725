/**
 * Vitest global setup: directories the whole run shares, made before any test file and removed
 * after the last, handed to the workers (and every process they spawn) through the environment:
 * - `XDG_CACHE_HOME`: a capture's V8 code cache (cli/codeCache.ts) is written there, never into
 *   the user's `~/.cache/rewind`. Tests that exercise the cache set their own directory on top.
 * - `REWIND_TEST_RUNTIME_DIR`: the runtime directory of the servers the hook tests start
 *   (test/hookHarness.ts). Run-wide because a server idles a few seconds after its test ends, and
 *   its socket's directory must outlive it; a per-file one would also be left behind, since
 *   helpers are evaluated once per worker (`isolate: false`).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const setFor = (name: string, value: string) => {
  const previous = process.env[name]
  process.env[name] = value
  return () => {
    if (previous === undefined) delete process.env[name]
    else process.env[name] = previous
    rmSync(value, { recursive: true, force: true })
  }
}

export default function setup() {
  const restores = [
    setFor("XDG_CACHE_HOME", mkdtempSync(join(tmpdir(), "rewind-test-cache-"))),
    setFor("REWIND_TEST_RUNTIME_DIR", mkdtempSync(join(tmpdir(), "rewind-run-"))),
  ]
  return () => {
    for (const restore of restores) restore()
  }
}
