// What a point restore's plan costs in filesystem operations (the babel-shape restore took 11 s
// at 27,674 files: every path of the point was stat'ed by a confined walk of its own, and every
// directory's ignore files and `.git` were stat'ed again for the protection check). The plan now
// lists each directory of the point once and answers both questions from that listing, so a file
// nothing changed is neither probed, stat'ed, read nor written; only what changed is read and
// written. Counted through the memory filesystem's access log, never timed.
import { describe, expect, it } from "@effect/vitest"
import type { PointId, SessionId, TurnId } from "@rewind/contracts"
import { applyPointRestore, capturePoint, previewPointRestore } from "@rewind/core"
import { Effect, TestClock } from "effect"
import { type Env, makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const capture = (sessionId: SessionId, n: number) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, `turn-${n}` as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point.pointId
  })

/** Many small directories (fewer files each than the old per-directory listing threshold). */
const tree = (env: Env) => {
  const files: Array<string> = []
  for (let d = 0; d < 12; d++)
    for (let f = 0; f < 3; f++) {
      const path = `pkg${d}/src/lib/f${f}.ts`
      env.fs.writeFile(`${ROOT}/${path}`, `export const v = ${d * 10 + f}\n`)
      files.push(path)
    }
  env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n")
  env.fs.writeFile(`${ROOT}/pkg3/.gitignore`, "gen/\n")
  files.push(".gitignore", "pkg3/.gitignore")
  return files
}

/** The accesses since `mark`, as workspace paths ("" for the root), by operation. */
const since = (env: Env, mark: number) => {
  const by = new Map<string, Array<string>>()
  for (const a of env.fs.accesses.slice(mark)) {
    const path = a.path === ROOT ? "" : a.path.slice(ROOT.length + 1)
    by.set(a.operation, [...(by.get(a.operation) ?? []), path])
  }
  return by
}

const parentOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")

const counts = (paths: ReadonlyArray<string>) => {
  const c = new Map<string, number>()
  for (const p of paths) c.set(p, (c.get(p) ?? 0) + 1)
  return c
}

describe("point restore cost", () => {
  it.effect("stats each entry once, and reads and writes only what changed", () => {
    const env = makeEnv()
    const files = tree(env)
    const changed = ["pkg1/src/lib/f0.ts", "pkg7/src/lib/f2.ts"]
    const aboveChanged = new Set<string>([""])
    for (const p of changed) for (let d = parentOf(p); d !== ""; d = parentOf(d)) aboveChanged.add(d)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1)
      // Out of the racy window: the latest capture's stat cache vouches for every file.
      yield* TestClock.adjust("10 seconds")
      yield* capture(sessionId, 2)
      for (const p of changed) env.fs.writeFile(`${ROOT}/${p}`, "edited\n")
      yield* capture(sessionId, 3)

      for (const step of ["preview", "apply"] as const) {
        const mark = env.fs.accesses.length
        if (step === "preview") {
          const preview = yield* previewPointRestore(sessionId, first as PointId)
          expect(preview.changes.map((c) => [c.path, c.action])).toEqual(changed.map((p) => [p, "write"]))
          expect(preview.unchanged).toBe(files.length - changed.length)
          expect(preview.protected).toEqual([])
          const apply = yield* applyPointRestore(sessionId, first as PointId, preview.token!)
          expect(apply.event.files.map((f) => f.path)).toEqual(changed)
        }
        const ops = since(env, mark)
        const untouched = new Set(files.filter((p) => !changed.includes(p)))
        // A file nothing changed: never probed, stat'ed, read or written by the preview or the apply
        // (an ignore file's rules are read, as a scan reads them, but it is never written).
        for (const op of ["probe", "stat", "read", "write", "create"])
          for (const p of ops.get(op) ?? [])
            if (op === "write" || op === "create" || !p.endsWith(".gitignore"))
              expect(untouched.has(p), `${op} ${p}`).toBe(false)
        // The plan's protection check took each directory's ignore files and `.git` from the
        // listing: none that is absent was looked for on its own (the apply checks the paths it
        // writes once more, which looks in the directories above what changed).
        const lookedFor = [...(ops.get("probe") ?? []), ...(ops.get("stat") ?? [])].filter(
          (p) => /(^|\/)\.(git|\w*ignore)$/.test(p) && !files.includes(p) && !aboveChanged.has(parentOf(p)),
        )
        expect(lookedFor, step).toEqual([])
        // Each directory of the point listed once per plan (the preview plans once, the apply
        // plans again: twice in all when both run in the step).
        const plans = step === "preview" ? 2 : 0
        for (const [dir, n] of counts(ops.get("readdir") ?? []))
          expect(n, `readdir ${dir}`).toBeLessThanOrEqual(plans)
        // Only what changed is read (for its rescue version) and written.
        if (step === "preview") {
          expect([...new Set(ops.get("read") ?? [])].filter((p) => !p.endsWith("ignore")).sort()).toEqual(
            changed,
          )
          expect([...new Set(ops.get("write") ?? [])].sort()).toEqual(changed)
        }
      }
      for (const p of changed) expect(env.text(p)).toMatch(/^export const v = /)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "a path the ignore rules now exclude that holds the point's content is unchanged, not reported",
    () => {
      const env = makeEnv()
      const files = tree(env)
      env.fs.writeFile(`${ROOT}/pkg5/src/lib/notes.md`, "v1\n")
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const first = yield* capture(sessionId, 1)
        yield* TestClock.adjust("10 seconds")
        env.fs.writeFile(`${ROOT}/pkg5/.gitignore`, "*.md\n")
        env.fs.writeFile(`${ROOT}/pkg2/src/lib/f1.ts`, "edited\n")
        const preview = yield* previewPointRestore(sessionId, first as PointId)
        // Only what the restore would change is checked against the rules: notes.md holds already.
        expect(preview.protected).toEqual([])
        expect(preview.changes.map((c) => [c.path, c.action])).toEqual([["pkg2/src/lib/f1.ts", "write"]])
        expect(preview.unchanged).toBe(files.length)
        const apply = yield* applyPointRestore(sessionId, first as PointId, preview.token!)
        expect(apply.event.files.map((f) => f.path)).toEqual(["pkg2/src/lib/f1.ts"])
        expect(env.text("pkg5/src/lib/notes.md")).toBe("v1\n")
        expect(env.text("pkg2/src/lib/f1.ts")).toBe("export const v = 21\n")
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect("a path the ignore rules now exclude is still reported protected and left alone", () => {
    const env = makeEnv()
    tree(env)
    env.fs.writeFile(`${ROOT}/pkg5/src/lib/notes.md`, "v1\n")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1)
      yield* TestClock.adjust("10 seconds")
      env.fs.writeFile(`${ROOT}/pkg5/src/lib/notes.md`, "v2\n")
      env.fs.writeFile(`${ROOT}/pkg5/.gitignore`, "*.md\n")
      const preview = yield* previewPointRestore(sessionId, first as PointId)
      expect(preview.protected.map((p) => [p.path, p.kind])).toEqual([["pkg5/src/lib/notes.md", "ignored"]])
      expect(preview.changes).toEqual([])
      expect(env.text("pkg5/src/lib/notes.md")).toBe("v2\n")
    }).pipe(Effect.provide(env.layer()))
  })
})
