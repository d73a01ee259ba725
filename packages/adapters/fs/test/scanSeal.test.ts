// A capture's seal (core `snapshot/scanSeal.ts`) against the full scan, on a real temp directory
// listed by the native module: after every random step (edit, create, rename, delete, mkdir, rmdir,
// symlink, chmod, .gitignore edit, a same-size rewrite with its mtime put back) one session
// captures with seals on and another with every shortcut off; their points must be the same
// manifest, counts and skipped list. Each step then captures again with nothing changed: where the
// session's last point was sealed, that capture must not have scanned (the test proves the fast
// path, not only the fallback). Then what must break a seal (the git index, a seal gone, a change
// inside the racy window) and what must not record one (a live engine, declared paths).
import { execFileSync } from "node:child_process"
import { rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { MemoryArtifactStore, MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import type { PointCaptured, SessionId } from "@rewind/contracts"
import {
  ArtifactStore,
  appendUserMessage,
  type CaptureOptions,
  CaptureShortcuts,
  capturePoint,
  cleanup,
  createSession,
  IdGenerators,
  layerPointArtifactCache,
  Workspace,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer } from "effect"
import { NodeWorkspace, WorkspaceWatcher } from "../src/index.js"
import { apply, manifestText, opArb, rewriteKeepingTimesArb, type Sandbox, sandbox } from "./treeOps.js"

const sealing = NodeWorkspace.nativeScanAvailable && process.platform === "linux"

/** How many times a capture listed directories the scanning way. */
interface Scans {
  count: number
}

/** The ports over the sandbox; the workspace counts its `scanDirectories` calls in `scans`. */
const layers = (box: Sandbox, scans: Scans) => {
  const counted = Layer.effect(
    Workspace,
    Effect.map(Workspace, (workspace) => ({
      ...workspace,
      scanDirectories: (directories: Parameters<typeof workspace.scanDirectories>[0]) =>
        Effect.suspend(() => {
          scans.count++
          return workspace.scanDirectories(directories)
        }),
    })),
  ).pipe(Layer.provide(Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" }))))
  return Layer.mergeAll(
    counted,
    MemoryArtifactStore.layer,
    MemorySessionStore.layer,
    MemoryOperationJournal.layer,
    IdGenerators.layerSequential("s"),
    layerPointArtifactCache(),
  )
}

/** Runs `program` over the sandbox's ports, then removes the sandbox. */
const inSandbox = <A, E>(
  box: Sandbox,
  scans: Scans,
  program: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof layers>>>,
) =>
  Effect.provide(program, layers(box, scans)).pipe(
    Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
  )

/** A racy window short enough for a test to wait out (the default is 2 s). */
const RACY_MS = 40
const settle = Effect.sleep(`${RACY_MS + 110} millis`)

const turnPoint = (sessionId: SessionId, options: CaptureOptions = { settings: { racyWindowMs: RACY_MS } }) =>
  Effect.gen(function* () {
    const { turnId } = yield* appendUserMessage(sessionId, { text: "turn" })
    const outcome = yield* capturePoint(sessionId, turnId, options)
    if (outcome._tag !== "Captured") throw new Error(outcome.reason)
    return outcome.point
  })

const fullScan = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, CaptureShortcuts, { matchUnchangedManifest: false, scanSeal: false })

/** The two points hold the same tree and say the same of it. */
const expectSamePoint = (a: PointCaptured, b: PointCaptured, context: unknown) =>
  Effect.gen(function* () {
    if (a.manifestHash !== b.manifestHash)
      expect({ context, sealed: yield* manifestText(a.manifestHash) }).toEqual({
        context,
        sealed: yield* manifestText(b.manifestHash),
      })
    expect({ context, a: [a.files, a.links, a.tombstones, a.bytes, a.skipped] }).toEqual({
      context,
      a: [b.files, b.links, b.tombstones, b.bytes, b.skipped],
    })
  })

describe.skipIf(!sealing)("a capture's seal", () => {
  it.live(
    "captures what a full scan captures after every random step, and skips the scan when nothing changed",
    () => {
      let sealedRepeats = 0
      return Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(
              fc.array(
                fc.oneof({ weight: 6, arbitrary: opArb }, { weight: 1, arbitrary: rewriteKeepingTimesArb }),
                { minLength: 1, maxLength: 3 },
              ),
              {
                minLength: 1,
                maxLength: 5,
              },
            ),
            (steps) => {
              const box = sandbox()
              apply(box.root, { op: "write", path: "a/x.txt", content: "seed" })
              apply(box.root, { op: "write", path: "b/y.js", content: "seed" })
              const scans: Scans = { count: 0 }
              const program = Effect.gen(function* () {
                const sealed = yield* createSession({ title: "sealed", cwd: box.root })
                const scanned = yield* createSession({ title: "full", cwd: box.root })
                yield* settle
                yield* turnPoint(sealed.id)
                yield* fullScan(turnPoint(scanned.id))
                for (const ops of steps) {
                  for (const op of ops) apply(box.root, op)
                  yield* settle
                  const a = yield* turnPoint(sealed.id)
                  const b = yield* fullScan(turnPoint(scanned.id))
                  yield* expectSamePoint(a, b, { steps, ops })
                  // Nothing changed since: a sealed point needs no scan to be found again.
                  yield* settle
                  const before = scans.count
                  const again = yield* turnPoint(sealed.id)
                  yield* expectSamePoint(again, b, { steps, ops, again: true })
                  if (a.scanSeal !== undefined) {
                    expect({ ops, scans: scans.count - before }).toEqual({ ops, scans: 0 })
                    expect(again.manifestHash).toBe(a.manifestHash)
                    sealedRepeats++
                  }
                }
              })
              return Effect.runPromise(Effect.provide(program, layers(box, scans))).finally(() =>
                rmSync(box.base, { recursive: true, force: true }),
              )
            },
          ),
          { numRuns: 8, seed: 26 },
        ),
      ).pipe(
        // Most steps leave a sealable tree: a run where none was sealed proves nothing of the fast path.
        Effect.tap(() => Effect.sync(() => expect(sealedRepeats).toBeGreaterThan(10))),
      )
    },
  )

  it.live("a same-size rewrite with its mtime put back right after a sealed capture is seen", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      const file = join(box.root, "a/x.txt")
      // Stamped with a whole second, which the rewrite gets back exactly: only its ctime tells.
      const stamp = new Date("2020-01-01T00:00:00Z")
      utimesSync(file, stamp, stamp)
      yield* settle
      const first = yield* turnPoint(session.id)
      expect(first.scanSeal).toBeDefined()
      const before = statSync(file, { bigint: true })
      writeFileSync(file, "two")
      utimesSync(file, stamp, stamp)
      const after = statSync(file, { bigint: true })
      expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino])
      yield* settle
      const second = yield* turnPoint(session.id)
      expect(second.manifestHash).not.toBe(first.manifestHash)
      expect(scans.count).toBeGreaterThan(1)
    })
    return inSandbox(box, scans, program)
  })

  it.live("no seal for a tree changed inside the racy window, nor with declared paths", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      // The file was written just now; the default window is 2 s.
      const fresh = yield* turnPoint(session.id, {})
      expect(fresh.scanSeal).toBeUndefined()
      yield* settle
      const declared = yield* turnPoint(session.id, {
        settings: { racyWindowMs: RACY_MS },
        declaredPaths: ["a/x.txt"],
      })
      expect(declared.scanSeal).toBeUndefined()
      const plain = yield* turnPoint(session.id)
      expect(plain.scanSeal).toBeDefined()
    })
    return inSandbox(box, scans, program)
  })

  it.live(
    "a path deleted since stays sealed as a tombstone while its directory's listing shows it gone",
    () => {
      const box = sandbox()
      const scans: Scans = { count: 0 }
      for (const path of ["a/x.txt", "a/c/d/deep.txt", "b/y.js"])
        apply(box.root, { op: "write", path, content: "one" })
      const program = Effect.gen(function* () {
        const session = yield* createSession({ title: "sealed", cwd: box.root })
        const scanned = yield* createSession({ title: "full", cwd: box.root })
        yield* settle
        yield* turnPoint(session.id)
        yield* fullScan(turnPoint(scanned.id))
        apply(box.root, { op: "remove", path: "a/x.txt" })
        apply(box.root, { op: "rmdir", path: "a/c" })
        yield* settle
        const deleted = yield* turnPoint(session.id)
        yield* expectSamePoint(deleted, yield* fullScan(turnPoint(scanned.id)), "deleted")
        expect(deleted.tombstones).toBe(2)
        expect(deleted.scanSeal).toBeDefined()
        yield* settle
        const before = scans.count
        const again = yield* turnPoint(session.id)
        expect(scans.count).toBe(before)
        expect(again.manifestHash).toBe(deleted.manifestHash)
        // The directory comes back: its parent's listing changed, so the tombstone is looked at again.
        apply(box.root, { op: "write", path: "a/c/d/deep.txt", content: "two" })
        yield* settle
        const back = yield* turnPoint(session.id)
        yield* expectSamePoint(back, yield* fullScan(turnPoint(scanned.id)), "back")
        expect(back.tombstones).toBe(1)
      })
      return Effect.provide(program, layers(box, scans)).pipe(
        Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
      )
    },
  )

  it.live("git starting to track an ignored file breaks the seal (the index is part of it)", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    const git = (...args: Array<string>) =>
      execFileSync("git", ["-c", "core.excludesFile=/dev/null", ...args], { cwd: box.root })
    apply(box.root, { op: "write", path: ".gitignore", content: "*.log\n" })
    for (const path of ["keep.js", "x.log"]) apply(box.root, { op: "write", path, content: "seed" })
    git("init", "-q")
    git("add", "--", ".gitignore", "keep.js")
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      const scanned = yield* createSession({ title: "full", cwd: box.root })
      yield* settle
      const first = yield* turnPoint(session.id)
      expect(first.scanSeal).toBeDefined()
      git("add", "-f", "--", "x.log")
      yield* settle
      const before = scans.count
      const tracked = yield* turnPoint(session.id)
      expect(scans.count).toBeGreaterThan(before)
      yield* expectSamePoint(tracked, yield* fullScan(turnPoint(scanned.id)), "tracked")
      expect(tracked.files).toBe(first.files + 1)
    })
    return inSandbox(box, scans, program)
  })

  it.live("a seal that is gone costs a scan, not a wrong point; cleanup keeps the latest one", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      yield* settle
      const first = yield* turnPoint(session.id)
      yield* cleanup({ graceMs: 0 })
      const store = yield* ArtifactStore
      expect(yield* store.has(first.scanSeal!)).toBe(true)
      let before = scans.count
      const second = yield* turnPoint(session.id)
      expect(scans.count).toBe(before)
      yield* store.delete(first.scanSeal!)
      apply(box.root, { op: "write", path: "a/x.txt", content: "two" })
      yield* settle
      before = scans.count
      const third = yield* turnPoint(session.id)
      expect(scans.count).toBeGreaterThan(before)
      expect(third.manifestHash).not.toBe(second.manifestHash)
    })
    return inSandbox(box, scans, program)
  })

  it.live("a seal listing that fails (an adapter's defect) costs the seal, never the capture", () => {
    const box = sandbox()
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const dying = Layer.effect(
      Workspace,
      Effect.map(Workspace, (workspace) => ({
        ...workspace,
        sealListings: () => Effect.die(new Error("the seal listing broke")),
      })),
    ).pipe(Layer.provide(Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" }))))
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "sealed", cwd: box.root })
      yield* settle
      const first = yield* turnPoint(session.id)
      expect(first.scanSeal).toBeUndefined()
      const { turnId } = yield* appendUserMessage(session.id, { text: "turn" })
      const again = yield* capturePoint(session.id, turnId, { settings: { racyWindowMs: RACY_MS } })
      expect(again._tag).toBe("Captured")
      if (again._tag === "Captured")
        expect(again.scan?.unsealed).toBe("a directory could not be listed again")
    })
    return Effect.provide(
      program,
      Layer.mergeAll(
        dying,
        MemoryArtifactStore.layer,
        MemorySessionStore.layer,
        MemoryOperationJournal.layer,
        IdGenerators.layerSequential("d"),
      ),
    ).pipe(Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))))
  })

  it.live("a live engine's captures record no seal", () => {
    const box = sandbox()
    const scans: Scans = { count: 0 }
    apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
    const watcher = WorkspaceWatcher.layer({ cookieDirectory: join(box.store, "watch") })
    const program = Effect.gen(function* () {
      const session = yield* createSession({ title: "live", cwd: box.root })
      yield* settle
      expect((yield* turnPoint(session.id)).scanSeal).toBeUndefined()
      expect((yield* turnPoint(session.id)).scanSeal).toBeUndefined()
    })
    return Effect.scoped(Effect.provide(program, Layer.provideMerge(watcher, layers(box, scans)))).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
    )
  })
})
