import { describe, expect, it } from "@effect/vitest"
import { checkSessionModel } from "@rewind/testkit"
import { MemorySessionStore } from "../src/index.js"

describe("conversation invariants (model-based) on the memory store", () => {
  it("200 random command sequences agree with the reference model", async () => {
    const { seed, numRuns } = await checkSessionModel(() => MemorySessionStore.layer)
    console.log(
      `model-based test (memory): ${numRuns} sequences, seed=${seed} (replay with REWIND_MODEL_SEED=${seed})`,
    )
    expect(numRuns).toBeGreaterThanOrEqual(200)
  })
})
