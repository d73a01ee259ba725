// The case process loads its case by name (caseLoaders.ts) while the parent lists them all
// (registry.ts): the two must name the same cases, and each loader must give the registry's case.
import { describe, expect, it } from "@effect/vitest"
import { CASE_LOADERS } from "../src/caseLoaders.js"
import { postgresStore } from "../src/postgresStore.bench.js"
import { CASES } from "../src/registry.js"

describe("case loaders", () => {
  it("name exactly the registered cases (postgres-store included), each loading that case", async () => {
    const registered = [...CASES.filter((c) => c.name !== postgresStore.name), postgresStore]
    expect(Object.keys(CASE_LOADERS).sort()).toEqual(registered.map((c) => c.name).sort())
    for (const c of registered) expect(await CASE_LOADERS[c.name]!()).toBe(c)
  })
})
