// The foundation's model-based conversation tests, run on the SQLite store: 200 sequences on a
// private `:memory:` database each (the same SQL, codec and transactions as a file), and a smaller
// run on real files (WAL, reopenable connections) in temp dirs removed when each sequence ends.
import { describe, expect, it } from "@effect/vitest"
import { checkSessionModel } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempStorePath } from "./tempStore.js"

describe("conversation invariants (model-based) on the SQLite store", () => {
  it("200 random command sequences agree with the reference model", async () => {
    const { seed, numRuns } = await checkSessionModel(() => SqliteSessionStore.layer({ path: ":memory:" }), {
      numRuns: 200,
    })
    console.log(
      `model-based test (sqlite): ${numRuns} sequences, seed=${seed} (replay with REWIND_MODEL_SEED=${seed})`,
    )
    expect(numRuns).toBe(200)
  })

  it("random command sequences agree with the reference model on a store file", async () => {
    const onFile = () =>
      Layer.unwrapScoped(Effect.map(tempStorePath, (path) => SqliteSessionStore.layer({ path })))
    const { seed, numRuns } = await checkSessionModel(onFile, { numRuns: 25 })
    console.log(`model-based test (sqlite file): ${numRuns} sequences, seed=${seed}`)
    expect(numRuns).toBe(25)
  })
})
