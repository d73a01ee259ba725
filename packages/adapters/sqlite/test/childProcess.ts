// Runs this package's fixture scripts in separate OS processes (see the testkit's makeNodeRunner).
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeNodeRunner } from "@rewind/testkit"

export const { fixture, runNode } = makeNodeRunner(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."),
)
