import { describe, expect, it } from "@effect/vitest"
import { MemorySessionStore } from "@rewind/adapter-memory"
import { layerSessionStateCache } from "@rewind/core"
import { checkSessionModel } from "@rewind/testkit"
import { Layer } from "effect"

describe("conversation invariants with the session state cache", () => {
  // The cache folds only new events onto a cached state. The model run loads the session (through
  // the cache) after every command and compares it with the reference model, so a cached state that
  // drifted from the stream would be caught.
  it("random command sequences agree with the reference model", async () => {
    const { seed, numRuns } = await checkSessionModel(
      () => Layer.merge(MemorySessionStore.layer, layerSessionStateCache(4)),
      { numRuns: 100 },
    )
    console.log(`model-based test (memory + cache): ${numRuns} sequences, seed=${seed}`)
    expect(numRuns).toBe(100)
  })
})
