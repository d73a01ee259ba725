// The model-based conversation tests and the fork invariants, run on the PostgreSQL store, through
// the same SQL, codec, locks and transactions as production. Every command sequence (and every
// fork program) starts on an empty store: one schema per test, emptied before each sequence.
import { expect, it } from "@effect/vitest"
import { checkForkInvariants, checkSessionModel } from "@rewind/testkit"
import { describePg, withRecycledStore } from "./pgTest.js"

const SEQUENCES = 100

describePg("invariants (model-based) on the PostgreSQL store", () => {
  it(`${SEQUENCES} random conversation command sequences agree with the reference model`, async () => {
    const { seed, numRuns } = await withRecycledStore((makeStore) =>
      checkSessionModel(makeStore, { numRuns: SEQUENCES }),
    )
    console.log(
      `model-based test (postgres): ${numRuns} sequences, seed=${seed} (replay with REWIND_MODEL_SEED=${seed})`,
    )
    expect(numRuns).toBe(SEQUENCES)
  }, 600_000)

  it("a fork leaves every stream unchanged, points only inside itself, and replays to the same child", async () => {
    const { seed, numRuns, coverage } = await withRecycledStore((makeStore) =>
      checkForkInvariants(makeStore, { numRuns: 8 }),
    )
    console.log(
      `fork invariants (postgres): ${numRuns} programs, seed=${seed} (replay with REWIND_FORK_SEED=${seed}); covered ${JSON.stringify(coverage)}`,
    )
    expect(numRuns).toBe(8)
  }, 300_000)
})
