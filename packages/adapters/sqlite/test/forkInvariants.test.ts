// Invariant 6 on the SQLite store: each program gets a fresh private (`:memory:`) database, so the
// fork bundles go through the same SQL, codec and transactions as a file. Fewer programs than on
// the memory store: this checks the store's multi-stream commit and command facts, the memory run
// explores the fork logic.
import { describe, expect, it } from "@effect/vitest"
import { checkForkInvariants } from "@rewind/testkit"
import { SqliteSessionStore } from "../src/index.js"

describe("fork invariants (property-based) on the SQLite store", () => {
  it("a fork leaves every stream unchanged, points only inside itself, and replays to the same child", async () => {
    const { seed, numRuns, coverage } = await checkForkInvariants(
      () => SqliteSessionStore.layer({ path: ":memory:" }),
      { numRuns: 8 },
    )
    console.log(
      `fork invariants (sqlite): ${numRuns} programs, seed=${seed} (replay with REWIND_FORK_SEED=${seed}); covered ${JSON.stringify(coverage)}`,
    )
    expect(numRuns).toBe(8)
  })
})
