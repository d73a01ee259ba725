/** Vitest setup file (run before every test file): closes the raw-SQL pool after each file. */
import { afterAll } from "@effect/vitest"
import { closeAdminPool } from "./pgTest.js"

afterAll(closeAdminPool)
