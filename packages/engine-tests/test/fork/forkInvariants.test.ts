import { describe, expect, it } from "@effect/vitest"
import { MemorySessionStore } from "@rewind/adapter-memory"
import { checkForkInvariants } from "@rewind/testkit"

describe("fork invariants (property-based) on the memory store", () => {
  it("a fork leaves every stream unchanged, points only inside itself, and replays to the same child", async () => {
    const { seed, numRuns, coverage } = await checkForkInvariants(() => MemorySessionStore.layer)
    console.log(
      `fork invariants (memory): ${numRuns} programs, seed=${seed} (replay with REWIND_FORK_SEED=${seed}); covered ${JSON.stringify(coverage)}`,
    )
    expect(coverage.maxDepth).toBeGreaterThanOrEqual(3)
  })
})
