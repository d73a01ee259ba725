// The declared Rewind service over the memory adapters: an Effect host that provides only the
// ports gets the engine's own services built in, and GC run through the service keeps what redo
// and recover need (issue 22 item 2 acceptance).
import { describe, expect, it } from "@effect/vitest"
import { type OperationId, type SessionId, StoreError, type WorkspacePath } from "@rewind/contracts"
import { ArtifactStore, layerRewind, OperationJournal, Rewind, RewindOperations } from "@rewind/core"
import { Effect, Layer, TestClock } from "effect"
import { makeEnv, ROOT } from "../support/fileRewindEnv.js"

const encode = (s: string) => new TextEncoder().encode(s)
const path = "a.txt" as WorkspacePath

/** Only the ports (memory adapters), with the service over them: nothing the facade adds. */
const hostLayer = (env: ReturnType<typeof makeEnv>) => Layer.provideMerge(layerRewind, env.layer())

const sessionOf = Effect.gen(function* () {
  const rewind = yield* Rewind
  const created = yield* rewind.createSession({ title: "gc", cwd: ROOT })
  if (!created.ok) throw new Error(created.refusal.message)
  return created.value.id
})

/** Journals an operation over content only the journal refers to. */
const journalOperation = (
  sessionId: SessionId,
  id: string,
  how: { readonly redo: boolean; readonly finish?: "committed" | "rolled_back"; readonly redoes?: string },
) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const journal = yield* OperationJournal
    const rescue = yield* artifacts.put(encode(`${id} rescue`))
    const planned = yield* artifacts.put(encode(`${id} planned`))
    const operationId = id as OperationId
    yield* journal.begin({
      operationId,
      sessionId,
      kind: how.redoes === undefined ? "cascade" : "redo",
      files: [
        { path, rescue: { _tag: "present", hash: rescue }, planned: { _tag: "present", hash: planned } },
      ],
      startedAt: 0,
      ...(how.redo ? { redo: { spentCheckpointIds: [] } } : {}),
      ...(how.redoes === undefined ? {} : { redoes: how.redoes as OperationId }),
    })
    if (how.finish !== undefined) yield* journal.complete(operationId, { status: how.finish, at: 0 })
    return { rescue, planned }
  })

describe("the Rewind service over the ports alone", () => {
  it.effect(
    "GC through the service never sweeps what an available redo or an incomplete operation needs",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const rewind = yield* Rewind
        const artifacts = yield* ArtifactStore
        const sessionId = yield* sessionOf
        const pending = yield* journalOperation(sessionId, "op_pending", { redo: true })
        const redoable = yield* journalOperation(sessionId, "op_redoable", {
          redo: true,
          finish: "committed",
        })
        // A redo entry already used, and an operation rolled back: nothing needs their content.
        const used = yield* journalOperation(sessionId, "op_used", { redo: true, finish: "committed" })
        const redone = yield* journalOperation(sessionId, "op_redo", {
          redo: false,
          finish: "committed",
          redoes: "op_used",
        })
        const rolledBack = yield* journalOperation(sessionId, "op_rolled_back", {
          redo: true,
          finish: "rolled_back",
        })
        const orphan = yield* artifacts.put(encode("nothing refers to this"))
        yield* TestClock.adjust("1 hour")

        const preview = yield* rewind.previewCleanup({ graceMs: 0 })
        const report = yield* rewind.cleanup({ graceMs: 0 })
        expect(preview).toEqual(report)
        if (!report.ok) throw new Error(report.refusal.message)
        expect(report.value.swept).toBe(true)
        const kept = [pending.rescue, pending.planned, redoable.rescue, redoable.planned]
        for (const hash of kept) {
          expect(report.value.deleted).not.toContain(hash)
          expect(yield* artifacts.has(hash)).toBe(true)
        }
        // The sweep did run: what nothing needs is gone.
        for (const hash of [
          orphan,
          used.rescue,
          used.planned,
          redone.rescue,
          redone.planned,
          rolledBack.rescue,
        ]) {
          expect(report.value.deleted).toContain(hash)
          expect(yield* artifacts.has(hash)).toBe(false)
        }
      }).pipe(Effect.provide(hostLayer(env)))
    },
  )

  it.effect("an unreadable journal stops the sweep: nothing is deleted", () => {
    const env = makeEnv()
    const unreadable = Layer.succeed(OperationJournal, {
      ...env.journal,
      all: () =>
        Effect.fail(new StoreError({ operation: "journal.all", message: "the journal cannot be read" })),
    })
    return Effect.gen(function* () {
      const rewind = yield* Rewind
      const artifacts = yield* ArtifactStore
      const orphan = yield* artifacts.put(encode("orphan"))
      yield* TestClock.adjust("1 hour")
      const report = yield* rewind.cleanup({ graceMs: 0 })
      if (!report.ok) throw new Error(report.refusal.message)
      expect(report.value.swept).toBe(false)
      expect(report.value.reason).toMatch(/operation journal/)
      expect(yield* artifacts.has(orphan)).toBe(true)
    }).pipe(Effect.provide(Layer.provideMerge(layerRewind, Layer.merge(env.layer(), unreadable))))
  })

  it.effect(
    "every operation decodes its arguments: bad input is an invalid_input answer, nothing runs",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const rewind = yield* Rewind
        // Typed hosts cannot pass these; an untyped one can, and the engine never sees them.
        const untyped = rewind as unknown as Record<
          string,
          (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown>
        >
        const answer = yield* untyped.appendUserMessage!(Symbol("ses"), { text: 1 })
        expect(answer).toMatchObject({ ok: false, refusal: { kind: "invalid_input" } })
        const sessions = yield* rewind.listSessions()
        expect(sessions.ok && sessions.value).toEqual([])
        expect(Object.keys(rewind).sort()).toEqual(Object.keys(RewindOperations).sort())
      }).pipe(Effect.provide(hostLayer(env)))
    },
  )
})
