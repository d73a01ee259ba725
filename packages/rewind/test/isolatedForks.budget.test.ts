// The budget guard of `previewMerge`: when the scan of either tree stops at its budget, what it did
// not reach would read as deletions, so the preview refuses (`unavailable`, naming the budget) and
// plans, records and writes nothing. The time budget is spent by a clock that jumps 20 s on every
// read (the scan's deadline is 30 s after its start), run through the facade's `run`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { previewMerge } from "@rewind/core"
import { Clock, Effect, Either } from "effect"
import { parentAndFork, tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("budget")

/** A clock whose every read is 20 s after the last: any scan runs out of its 30 s time budget. */
const jumpingClock = (startMs: number): Clock.Clock => {
  let now = startMs
  const tick = () => {
    now += 20_000
    return now
  }
  const clock: Clock.Clock = Object.create(Clock.make())
  return Object.assign(clock, {
    unsafeCurrentTimeMillis: tick,
    currentTimeMillis: Effect.sync(tick),
    unsafeCurrentTimeNanos: () => BigInt(tick()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(tick()) * 1_000_000n),
  })
}

describe("previewMerge budget guard", () => {
  it("refuses when a tree's scan stops at its budget; nothing is planned or recorded", async () => {
    const root = temp()
    for (const d of ["one", "two", "three"]) writeFileSync(join(root, `${d}.txt`), `${d}\n`)
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      writeFileSync(join(into, "one.txt"), "changed in the child\n")
      const pointsBefore = okValue(await rewind.listPoints(parent)).length
      const treeBefore = readdirSync(root).sort()

      // The same merge with the ordinary clock plans a write: the guard is what refuses below.
      const plain = await rewind.run(Effect.either(previewMerge(parent, child)))
      expect(Either.isRight(plain) && plain.right.files.map((f) => f.path)).toEqual(["one.txt"])
      const pointsPlanned = okValue(await rewind.listPoints(parent)).length

      const cut = await rewind.run(
        Effect.either(previewMerge(parent, child).pipe(Effect.withClock(jumpingClock(1_800_000_000_000)))),
      )
      expect(Either.isLeft(cut)).toBe(true)
      if (Either.isLeft(cut)) {
        expect(cut.left).toMatchObject({ kind: "unavailable" })
        expect(String((cut.left as { message: string }).message)).toMatch(/budget/)
      }
      // No merge point recorded by the refused preview, nothing written in either tree.
      expect(okValue(await rewind.listPoints(parent)).length).toBe(pointsPlanned)
      expect(pointsPlanned).toBe(pointsBefore + 1)
      expect(readdirSync(root).sort()).toEqual(treeBefore)
      expect(readFileSync(join(root, "one.txt"), "utf8")).toBe("one\n")
    } finally {
      await rewind.close()
    }
  })
})
