// "Restore the files to before a turn", as the `Rewind` service declares it (`turnRestoreTarget`)
// for any host that knows a turn by its id (the inspector's timeline among them): the target deletes
// what the agent created since (a tombstone each, recorded as a point of its own), where the turn's
// own point would leave it; it names what it leaves alone; and a turn off the active branch, or
// unknown, is a typed refusal.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import {
  applyPointRestore,
  capturePoint,
  previewPointRestore,
  RewindOperations,
  readPointIndex,
  turnRestoreTarget,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT, reply, userTurn } from "../support/fileRewindEnv.js"

const capture = (sessionId: SessionId, turnId: TurnId) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

/** A session whose first turn's point holds `a.txt` as "a1", then edited to "a2". */
const firstTurnEdited = (env: ReturnType<typeof makeEnv>) =>
  Effect.gen(function* () {
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    const sessionId = yield* newSession
    const first = yield* userTurn(sessionId, "first")
    const own = yield* capture(sessionId, first.turnId)
    env.fs.writeFile(`${ROOT}/a.txt`, "a2")
    return { sessionId, first, own }
  })

describe("turnRestoreTarget", () => {
  it.effect("deletes what was created since the turn began, which the turn's own point leaves", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, first, own } = yield* firstTurnEdited(env)
      env.fs.writeFile(`${ROOT}/made/by/agent.txt`, "new")
      yield* reply(sessionId, first.turnId)
      const second = yield* userTurn(sessionId, "second")
      yield* capture(sessionId, second.turnId)

      // The turn's own point does not mention the new file: a restore of it would leave it.
      const raw = yield* previewPointRestore(sessionId, own.pointId)
      expect(raw.changes.map((c) => [c.path, c.action])).toEqual([["a.txt", "write"]])

      const target = yield* turnRestoreTarget(sessionId, first.turnId)
      expect(target).toMatchObject({ turn: 1, turnId: first.turnId, added: ["made/by/agent.txt"] })
      expect(target.leftAlone).toEqual([])
      expect(target.laterLeftOut).toEqual([])
      expect(target.pointId).not.toBe(own.pointId)
      // Recorded as a rescue point, so its preview's token redeems it.
      const index = yield* readPointIndex(sessionId)
      expect(index.points.find((p) => p.pointId === target.pointId)?.kind).toBe("rescue")

      const preview = yield* previewPointRestore(sessionId, target.pointId)
      expect(preview.changes.map((c) => [c.path, c.action]).sort()).toEqual([
        ["a.txt", "write"],
        ["made/by/agent.txt", "delete"],
      ])
      yield* applyPointRestore(sessionId, target.pointId, preview.token!)
      expect(env.files()).toEqual({ "a.txt": "a1" })
      // The same turn asked again names the same point.
      expect((yield* turnRestoreTarget(sessionId, first.turnId)).pointId).toBe(target.pointId)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "the recorded target leaves out what the turn's capture left out, and its preview names it",
    () => {
      const env = makeEnv()
      // A submodule's checkout: a nested repository, which no capture enters.
      env.fs.writeFile(`${ROOT}/vendor/lib/.git`, "gitdir: ../../.git/modules/lib\n")
      env.fs.writeFile(`${ROOT}/vendor/lib/lib.txt`, "lib")
      return Effect.gen(function* () {
        const { sessionId, first, own } = yield* firstTurnEdited(env)
        expect(own.skipped.map((s) => s.path)).toEqual(["vendor/lib"])
        env.fs.writeFile(`${ROOT}/new.txt`, "new")
        yield* reply(sessionId, first.turnId)
        yield* capture(sessionId, (yield* userTurn(sessionId, "second")).turnId)

        const target = yield* turnRestoreTarget(sessionId, first.turnId)
        expect(target.pointId).not.toBe(own.pointId)
        const preview = yield* previewPointRestore(sessionId, target.pointId)
        expect(preview.leftOut.map((s) => [s.path, s.reason])).toEqual([["vendor/lib", "skipped_directory"]])
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect("a turn with nothing created since answers the turn's own point", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, first, own } = yield* firstTurnEdited(env)
      const target = yield* turnRestoreTarget(sessionId, first.turnId)
      expect(target).toMatchObject({ turn: 1, pointId: own.pointId, added: [] })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("an unknown turn is refused not_found; a turn without a point, no_checkpoint", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      yield* expectRefusal(turnRestoreTarget(sessionId, "no-such-turn" as TurnId), "not_found")
      const first = yield* userTurn(sessionId, "no capture ran")
      yield* expectRefusal(turnRestoreTarget(sessionId, first.turnId), "no_checkpoint")
    }).pipe(Effect.provide(env.layer()))
  })

  it("is declared on the service, as a write (it may record the target point)", () => {
    expect(RewindOperations.turnRestoreTarget.access).toBe("write")
    expect(RewindOperations.turnRestoreTarget.args.map((a) => a.name)).toEqual(["sessionId", "turnId"])
  })
})
