/**
 * Vitest setup file (run before every test file, even without isolation): removes the temp
 * directories a test made (test/tempDirs.ts) once it finishes.
 */
import { afterEach } from "@effect/vitest"
import { removeTempDirs } from "./tempDirs.js"

afterEach(removeTempDirs)
