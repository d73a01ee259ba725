// The lead's model-based conversation tests, run on the SQLite store: each command sequence gets
// a fresh private (`:memory:`) database, so the same SQL, codec and transactions as a file are used.
// Fewer sequences than on the memory store: this checks the store, the memory run explores the model.
import { describe, expect, it } from "@effect/vitest"
import { checkSessionModel } from "@rewind/testkit"
import { SqliteSessionStore } from "../src/index.js"

describe("conversation invariants (model-based) on the SQLite store", () => {
  it("random command sequences agree with the reference model", async () => {
    const { seed, numRuns } = await checkSessionModel(() => SqliteSessionStore.layer({ path: ":memory:" }), {
      numRuns: 50,
    })
    console.log(
      `model-based test (sqlite): ${numRuns} sequences, seed=${seed} (replay with REWIND_MODEL_SEED=${seed})`,
    )
    expect(numRuns).toBe(50)
  })
})
