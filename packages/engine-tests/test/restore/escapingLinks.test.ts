// Links whose target leads outside the root (`venv/bin/python -> /usr/bin/python3`, an agent's
// `ln -s /tmp scratch`). No restore makes one, and since no redo could make one again, none takes
// one away or retargets it either: the protection policy keeps such a path as it is
// (`escaping_link`), the preview lists it with the protected paths, and the rest of the restore
// goes ahead. A redo entry that journaled such a link (written before restores kept them) is
// redone but for that path, which it reports kept. Before, one such link refused the whole
// restore, and a redo of a restore that had retargeted one failed whole and put everything back.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { applyPointRestore, capturePoint, OperationJournal, previewPointRestore, redo } from "@rewind/core"
import { Effect } from "effect"
import { type Env, makeEnv, newSession, OUTSIDE, ROOT } from "../support/fileRewindEnv.js"

const captured = (sessionId: SessionId, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

const linkAt = (env: Env, path: string) => {
  const node = env.fs.node(`${ROOT}/${path}`)
  return node?.kind === "symlink" ? node.target : undefined
}

const keptOf = (preview: {
  readonly protected: ReadonlyArray<{ readonly path: string; readonly kind: string }>
}) => preview.protected.map((p) => [p.path, p.kind]).sort()

describe("a link leading out of the root", () => {
  it.effect("in the point, is not made: kept, and the rest of the restore goes ahead", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    env.fs.symlink(`${ROOT}/venv/bin/python`, "/usr/bin/python3")
    env.fs.symlink(`${ROOT}/up`, "../outside")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const point = yield* captured(sessionId, "turn-1")
      expect(point.links).toBe(2)
      env.fs.remove(`${ROOT}/venv/bin/python`)
      env.fs.remove(`${ROOT}/up`)
      env.fs.writeFile(`${ROOT}/a.txt`, "a2")

      const preview = yield* previewPointRestore(sessionId, point.pointId)
      expect(preview.conflicts).toEqual([])
      expect(preview.canApply).toBe(true)
      expect(keptOf(preview)).toEqual([
        ["up", "escaping_link"],
        ["venv/bin/python", "escaping_link"],
      ])
      expect(preview.protected.find((p) => p.path === "up")?.message).toMatch(
        /climbs above the workspace root/,
      )
      expect(preview.changes.map((c) => [c.path, c.action])).toEqual([["a.txt", "write"]])

      yield* applyPointRestore(sessionId, point.pointId, preview.token!)
      expect(env.text("a.txt")).toBe("a1")
      expect(linkAt(env, "venv/bin/python")).toBeUndefined()
      expect(linkAt(env, "up")).toBeUndefined()
      expect(env.outsideAccesses()).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "standing, is neither retargeted, replaced by the point's file, nor deleted; the redo undoes the rest",
    () => {
      const env = makeEnv()
      env.fs.writeFile(`${ROOT}/a.txt`, "a1")
      env.fs.writeFile(`${ROOT}/f.txt`, "f1")
      env.fs.writeFile(`${ROOT}/gone.txt`, "g1")
      env.fs.symlink(`${ROOT}/l`, "a.txt")
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        yield* captured(sessionId, "turn-1")
        env.fs.remove(`${ROOT}/gone.txt`)
        const withTombstone = yield* captured(sessionId, "turn-2")
        // The agent points the link out of the tree, puts a link where a file was and where the
        // point records nothing, and edits a file.
        env.fs.remove(`${ROOT}/l`)
        env.fs.symlink(`${ROOT}/l`, "/tmp")
        env.fs.remove(`${ROOT}/f.txt`)
        env.fs.symlink(`${ROOT}/f.txt`, `${OUTSIDE}/secret.txt`)
        env.fs.symlink(`${ROOT}/gone.txt`, "../../outside")
        env.fs.writeFile(`${ROOT}/a.txt`, "a2")

        const preview = yield* previewPointRestore(sessionId, withTombstone.pointId)
        expect(preview.conflicts).toEqual([])
        expect(keptOf(preview)).toEqual([
          ["f.txt", "escaping_link"],
          ["gone.txt", "escaping_link"],
          ["l", "escaping_link"],
        ])
        expect(preview.changes.map((c) => [c.path, c.action])).toEqual([["a.txt", "write"]])
        const applied = yield* applyPointRestore(sessionId, withTombstone.pointId, preview.token!)
        expect(applied.event.files.map((f) => [f.path, f.action])).toEqual([["a.txt", "written"]])
        expect(linkAt(env, "l")).toBe("/tmp")
        expect(linkAt(env, "f.txt")).toBe(`${OUTSIDE}/secret.txt`)
        expect(linkAt(env, "gone.txt")).toBe("../../outside")
        expect(env.text("a.txt")).toBe("a1")

        const undone = yield* redo(sessionId)
        expect(undone.kept).toEqual([])
        expect(env.text("a.txt")).toBe("a2")
        expect(linkAt(env, "l")).toBe("/tmp")
        expect(env.fs.node(`${OUTSIDE}/secret.txt`)?.kind).toBe("file")
        expect(env.outsideAccesses()).toEqual([])
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect(
    "standing where the point has a directory: the point's paths beneath it are kept, not conflicts",
    () => {
      const env = makeEnv()
      env.fs.writeFile(`${ROOT}/d/x.txt`, "x1")
      env.fs.writeFile(`${ROOT}/a.txt`, "a1")
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const point = yield* captured(sessionId, "turn-1")
        env.fs.remove(`${ROOT}/d`)
        env.fs.symlink(`${ROOT}/d`, OUTSIDE)
        env.fs.writeFile(`${ROOT}/a.txt`, "a2")

        const preview = yield* previewPointRestore(sessionId, point.pointId)
        expect(preview.conflicts).toEqual([])
        expect(keptOf(preview)).toEqual([["d/x.txt", "escaping_link"]])
        expect(preview.protected[0]?.message).toMatch(/^d\/x\.txt lies beneath the link d: d is a link to/)
        yield* applyPointRestore(sessionId, point.pointId, preview.token!)
        expect(env.text("a.txt")).toBe("a1")
        expect(linkAt(env, "d")).toBe(OUTSIDE)
        expect(env.fs.node(`${OUTSIDE}/x.txt`)).toBeUndefined()
        expect(env.outsideAccesses()).toEqual([])
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect(
    "inside a directory standing where the point has a file: the directory stays, a conflict naming the link",
    () => {
      const env = makeEnv()
      env.fs.writeFile(`${ROOT}/d`, "d was a file")
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const point = yield* captured(sessionId, "turn-1")
        env.fs.remove(`${ROOT}/d`)
        env.fs.writeFile(`${ROOT}/d/x.txt`, "x")
        env.fs.symlink(`${ROOT}/d/l`, "/tmp")

        const preview = yield* previewPointRestore(sessionId, point.pointId)
        // Taking the directory away would take the link with it, which no redo could make again.
        expect(preview.canApply).toBe(false)
        expect(preview.conflicts.map((c) => [c.path, c.reason])).toEqual([["d", "not_a_regular_file"]])
        expect(preview.conflicts[0]?.detail).toMatch(
          /it holds d\/l, which the restore cannot delete \(d\/l is a link to "\/tmp"/,
        )
        expect(linkAt(env, "d/l")).toBe("/tmp")
        expect(env.text("d/x.txt")).toBe("x")
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect(
    "journaled by an older restore, is not made again by the redo: kept, and the rest is redone",
    () => {
      const env = makeEnv()
      env.fs.writeFile(`${ROOT}/a.txt`, "a1")
      env.fs.symlink(`${ROOT}/l`, "a.txt")
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const point = yield* captured(sessionId, "turn-1")
        env.fs.remove(`${ROOT}/l`)
        env.fs.symlink(`${ROOT}/l`, "b.txt")
        env.fs.writeFile(`${ROOT}/a.txt`, "a2")
        const preview = yield* previewPointRestore(sessionId, point.pointId)
        yield* applyPointRestore(sessionId, point.pointId, preview.token!)
        expect(linkAt(env, "l")).toBe("a.txt")

        // The redo entry as an engine that took escaping links away wrote it: `l` was `/tmp`.
        const asOlderEngine = Effect.updateService(OperationJournal, (journal) => ({
          ...journal,
          redoStack: (s: SessionId) =>
            Effect.map(journal.redoStack(s), (entries) =>
              entries.map((e) => ({
                ...e,
                intent: {
                  ...e.intent,
                  links: (e.intent.links ?? []).map((l) => (l.path === "l" ? { ...l, rescue: "/tmp" } : l)),
                },
              })),
            ),
        }))
        const undone = yield* redo(sessionId).pipe(asOlderEngine)
        expect(undone.kept.map((k) => [k.path, k.kind])).toEqual([["l", "escaping_link"]])
        expect(undone.files.map((f) => [f.path, f.action])).toEqual([["a.txt", "restored"]])
        expect(env.text("a.txt")).toBe("a2")
        expect(linkAt(env, "l")).toBe("a.txt")
        expect(env.outsideAccesses()).toEqual([])
      }).pipe(Effect.provide(env.layer()))
    },
  )
})
