/**
 * Temp directories of the tests: made under the OS temp dir and removed after the test that made
 * them (test/removeTempDirs.ts runs the removal after every test of every file).
 *
 * Why a setup file and not an `afterEach` here: the suite runs with `isolate: false`, so this
 * module is evaluated once per worker and a hook registered at its top level would belong to the
 * first test file that imported it; every later file's directories would be left behind.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const made: Array<string> = []

export const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Removes every directory made since the last call (read-only entries included). */
export const removeTempDirs = (): void => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}
