// The live engine against the full scan, on a real temp directory watched by inotify: after every
// random step (edit, create, rename, delete, mkdir, rmdir, symlink, chmod, .gitignore edit) one
// session captures through the watcher and another by a full scan of the same tree; their points
// must be the same manifest (paths, hashes, modes, link targets, tombstones: the same address).
// Steps that touch no ignore file must have been captured from the change set, so the test proves
// the fast path, not only the fallback. Then the fallbacks: overflow, a watcher error, a lost
// flush cookie, a watcher that cannot start — each makes the next capture a full scan and its
// point still right.
import { execFileSync } from "node:child_process"
import { closeSync, fstatSync, mkdirSync, openSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { MemoryArtifactStore, MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import type { SessionId } from "@rewind/contracts"
import {
  appendUserMessage,
  type CaptureOutcome,
  capturePoint,
  createSession,
  IdGenerators,
  layerPointArtifactCache,
  loadManifest,
  snapshotStatus,
  WorkspaceChanges,
} from "@rewind/core"
import { Context, Effect, FastCheck as fc, Layer } from "effect"
import { NodeWorkspace, WorkspaceWatcher } from "../src/index.js"
import { apply, manifestText, opArb, type Sandbox, sandbox, touchesIgnoreFile } from "./treeOps.js"

const available = !("unavailable" in WorkspaceWatcher.inotifyBackend)

/** The ports over the sandbox, and the watcher over its root when a backend is given. */
const layers = (box: Sandbox, backend?: WorkspaceWatcher.WatchBackend) => {
  const ports = Layer.mergeAll(
    Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" })),
    MemoryArtifactStore.layer,
    MemorySessionStore.layer,
    MemoryOperationJournal.layer,
    IdGenerators.layerSequential("l"),
    layerPointArtifactCache(),
  )
  const watcher = WorkspaceWatcher.layer({
    cookieDirectory: join(box.store, "watch"),
    drainIntervalMs: 50,
    flushTimeoutMs: 100,
    ...(backend === undefined ? {} : { backend }),
  })
  return { ports, live: Layer.provideMerge(watcher, ports) }
}

const captured = (outcome: CaptureOutcome) => {
  if (outcome._tag !== "Captured") throw new Error(outcome.reason)
  return outcome.point
}

/** A turn and its point. */
const turnPoint = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const { turnId } = yield* appendUserMessage(sessionId, { text: "turn" })
    return captured(yield* capturePoint(sessionId, turnId))
  })

/** The effect without the watcher in its context: its captures scan the whole tree. */
const withoutWatcher = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.mapInputContext(
    effect as Effect.Effect<A, E, Exclude<R, WorkspaceChanges>>,
    Context.omit(WorkspaceChanges),
  ) as Effect.Effect<A, E, R>

const lastMode = Effect.map(snapshotStatus, (s) => s.watcher.lastCapture?.mode)

// On Linux the watcher is built into the native module by `npm ci`: its absence there is a broken
// install, not a reason to skip, so it fails here rather than letting the property below vanish.
describe("the inotify watcher", () => {
  it.skipIf(process.platform !== "linux")("is built on Linux by the install step", () => {
    expect(
      available,
      "unavailable" in WorkspaceWatcher.inotifyBackend ? WorkspaceWatcher.inotifyBackend.unavailable : "",
    ).toBe(true)
  })
})

describe.skipIf(!available)("the live engine", () => {
  it.live("captures what a full scan captures, after every random step, from the change set", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(opArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 5 }),
          (steps) => {
            const box = sandbox()
            apply(box.root, { op: "write", path: "a/x.txt", content: "seed" })
            apply(box.root, { op: "write", path: "b/y.js", content: "seed" })
            const { live } = layers(box)
            const program = Effect.gen(function* () {
              const watched = yield* createSession({ title: "live", cwd: box.root })
              const scanned = yield* createSession({ title: "full", cwd: box.root })
              yield* turnPoint(watched.id)
              yield* withoutWatcher(turnPoint(scanned.id))
              for (const ops of steps) {
                let ignoreFileTouched = false
                for (const op of ops) {
                  ignoreFileTouched ||= touchesIgnoreFile(box.root, op)
                  apply(box.root, op)
                }
                // The workspace re-reads a file stamped in the last 100 ms (a write may be under way):
                // one pause per step instead of one per fresh file per capture keeps the test fast.
                yield* Effect.sleep("120 millis")
                const a = yield* turnPoint(watched.id)
                const mode = yield* lastMode
                const b = yield* withoutWatcher(turnPoint(scanned.id))
                if (a.manifestHash !== b.manifestHash) {
                  const [ma, mb] = [yield* manifestText(a.manifestHash), yield* manifestText(b.manifestHash)]
                  expect({ steps, live: ma }).toEqual({ steps, live: mb })
                }
                expect(a.files).toBe(b.files)
                expect(a.tombstones).toBe(b.tombstones)
                expect(a.links).toBe(b.links)
                expect(a.bytes).toBe(b.bytes)
                if (!ignoreFileTouched) expect({ ops, mode }).toEqual({ ops, mode: "watched" })
              }
            })
            return Effect.runPromise(Effect.scoped(Effect.provide(program, live))).finally(() =>
              rmSync(box.base, { recursive: true, force: true }),
            )
          },
        ),
        { numRuns: 10, seed: 23 },
      ),
    ),
  )

  it.live("captures the files git tracks under ignored paths, and sees git start tracking one", () => {
    const box = sandbox()
    const git = (...args: Array<string>) =>
      execFileSync("git", ["-c", "core.excludesFile=/dev/null", ...args], { cwd: box.root })
    apply(box.root, { op: "write", path: ".gitignore", content: "*.log\nbuild/\n" })
    for (const path of ["build/t.js", "build/u.js", "keep.log", "x.log", "src/a.js"])
      apply(box.root, { op: "write", path, content: "seed" })
    git("init", "-q")
    git("add", "-f", "--", "build/t.js", "keep.log", "src/a.js")
    const { live } = layers(box)
    const program = Effect.gen(function* () {
      const watched = yield* createSession({ title: "live", cwd: box.root })
      const scanned = yield* createSession({ title: "full", cwd: box.root })
      const paths = (hash: Parameters<typeof loadManifest>[0]) =>
        Effect.map(loadManifest(hash), (m) => [...m.keys()].sort())
      const both = Effect.gen(function* () {
        yield* Effect.sleep("120 millis")
        const a = yield* turnPoint(watched.id)
        const b = yield* withoutWatcher(turnPoint(scanned.id))
        expect(yield* manifestText(a.manifestHash)).toEqual(yield* manifestText(b.manifestHash))
        return yield* paths(a.manifestHash)
      })
      expect(yield* both).toEqual([".gitignore", "build/t.js", "keep.log", "src/a.js"])
      // Edits to tracked files the rules exclude, and to ignored ones that are not tracked.
      for (const path of ["build/t.js", "keep.log", "build/u.js", "x.log"])
        apply(box.root, { op: "write", path, content: `edited ${path}` })
      expect(yield* both).toEqual([".gitignore", "build/t.js", "keep.log", "src/a.js"])
      apply(box.root, { op: "remove", path: "build/t.js" })
      yield* both
      apply(box.root, { op: "write", path: "build/t.js", content: "back" })
      yield* both
      // git starts tracking an ignored file: the index changed, not the file.
      git("add", "-f", "--", "build/u.js")
      expect(yield* both).toEqual([".gitignore", "build/t.js", "build/u.js", "keep.log", "src/a.js"])
      git("rm", "-q", "-f", "--cached", "--", "keep.log")
      expect(yield* both).toEqual([".gitignore", "build/t.js", "build/u.js", "src/a.js"])
    })
    return Effect.scoped(Effect.provide(program, live)).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
    )
  })

  it.live(
    "in a workspace below its repository's top, applies the rules above it and sees them change",
    () => {
      const box = sandbox()
      // The sandbox's base is the repository's top; the workspace root is its `ws` directory.
      execFileSync("git", ["init", "-q"], { cwd: box.base })
      writeFileSync(join(box.base, ".gitignore"), "*.log\nstore/\n")
      for (const path of ["a.log", "b.js", "c/d.log"]) apply(box.root, { op: "write", path, content: "seed" })
      const { live } = layers(box)
      const program = Effect.gen(function* () {
        const watched = yield* createSession({ title: "live", cwd: box.root })
        const scanned = yield* createSession({ title: "full", cwd: box.root })
        const both = Effect.gen(function* () {
          yield* Effect.sleep("120 millis")
          const a = yield* turnPoint(watched.id)
          const b = yield* withoutWatcher(turnPoint(scanned.id))
          expect(yield* manifestText(a.manifestHash)).toEqual(yield* manifestText(b.manifestHash))
          return [...(yield* loadManifest(a.manifestHash)).keys()].sort()
        })
        expect(yield* both).toEqual(["b.js"])
        apply(box.root, { op: "write", path: "e.log", content: "new" })
        expect(yield* both).toEqual(["b.js"])
        // The rules above the root change: nothing the watcher sees.
        writeFileSync(join(box.base, ".gitignore"), "c/\nstore/\n")
        expect(yield* both).toEqual(["a.log", "b.js", "e.log"])
      })
      return Effect.scoped(Effect.provide(program, live)).pipe(
        Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
      )
    },
  )

  /** The real backend with faults to inject, each for one drain (or, for cookies, until cleared). */
  const faulty = () => {
    const real = WorkspaceWatcher.inotifyBackend as WorkspaceWatcher.WatchBackend
    const faults = { overflow: false, error: false, lost: false, dropCookies: false, refuseStart: false }
    const backend: WorkspaceWatcher.WatchBackend = {
      name: "faulty",
      open: (...args) =>
        faults.refuseStart ? { reason: "injected: the watch limit is reached" } : real.open(...args),
      close: real.close,
      drain: (handle) => {
        const drained = real.drain(handle)
        if (faults.error) {
          faults.error = false
          throw new Error("injected read failure")
        }
        if (faults.overflow) {
          faults.overflow = false
          return { ...drained, overflow: true }
        }
        if (faults.lost) {
          faults.lost = false
          return { ...drained, lost: "injected: a watch could not be added" }
        }
        return faults.dropCookies ? { ...drained, cookies: [] } : drained
      },
    }
    return { backend, faults }
  }

  type Faults = ReturnType<typeof faulty>["faults"]

  /** Full, watched, then a change with a fault: that capture and the restart scan in full, and match a full scan. */
  const fallsBack = (inject: (faults: Faults) => void, expectedReason: RegExp) =>
    Effect.scoped(
      Effect.gen(function* () {
        const box = sandbox()
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => rmSync(box.base, { recursive: true, force: true })),
        )
        const { backend, faults } = faulty()
        apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
        const { live } = layers(box, backend)
        yield* Effect.gen(function* () {
          const watched = yield* createSession({ title: "live", cwd: box.root })
          const scanned = yield* createSession({ title: "full", cwd: box.root })
          yield* turnPoint(watched.id)
          yield* turnPoint(watched.id)
          expect(yield* lastMode).toBe("watched")
          apply(box.root, { op: "write", path: "a/x.txt", content: "two, longer" })
          apply(box.root, { op: "write", path: "b/new.txt", content: "new" })
          yield* Effect.sleep("120 millis")
          inject(faults)
          const a = yield* turnPoint(watched.id)
          const status = yield* snapshotStatus
          expect(status.watcher.lastCapture?.mode).toBe("full")
          expect(status.watcher.lastCapture?.reason ?? "").toMatch(expectedReason)
          const b = yield* withoutWatcher(turnPoint(scanned.id))
          expect(a.manifestHash).toBe(b.manifestHash)
          expect(a.files).toBe(2)
          faults.dropCookies = false
          // Running again: the capture after the restart is full (no cursor yet), the next watched.
          yield* turnPoint(watched.id)
          apply(box.root, { op: "remove", path: "b/new.txt" })
          const c = yield* turnPoint(watched.id)
          expect(yield* lastMode).toBe("watched")
          expect(c.tombstones).toBe(1)
        }).pipe(Effect.provide(live))
      }),
    )

  it.live("an inotify overflow makes the next capture a full scan", () =>
    fallsBack((f) => {
      f.overflow = true
    }, /overflow/),
  )
  it.live("a watcher error makes the next capture a full scan", () =>
    fallsBack((f) => {
      f.error = true
    }, /injected read failure/),
  )
  it.live("a watch that could not be added makes the next capture a full scan", () =>
    fallsBack((f) => {
      f.lost = true
    }, /could not be added/),
  )
  it.live("a flush cookie that does not come back makes the capture a full scan", () =>
    fallsBack((f) => {
      f.dropCookies = true
    }, /flush cookie/),
  )

  // The kernel reports nothing when a watched root is removed while something holds it (here an
  // open descriptor; in life the agent's or a shell's working directory): a fresh clone at the
  // same path must still make the next capture a full scan of the new tree, not a capture of the
  // old tree's deletions.
  it.live(
    "a root removed and made again at its path while held open makes the next capture a full scan",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const box = sandbox()
          const held = yield* Effect.acquireRelease(
            Effect.sync(() => openSync(box.root, "r")),
            (fd) => Effect.sync(() => closeSync(fd)),
          )
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => rmSync(box.base, { recursive: true, force: true })),
          )
          apply(box.root, { op: "write", path: "a.txt", content: "old" })
          apply(box.root, { op: "write", path: "sub/s.txt", content: "old" })
          const { live } = layers(box)
          yield* Effect.gen(function* () {
            const watched = yield* createSession({ title: "live", cwd: box.root })
            const scanned = yield* createSession({ title: "full", cwd: box.root })
            yield* turnPoint(watched.id)
            yield* turnPoint(watched.id)
            yield* withoutWatcher(turnPoint(scanned.id))
            expect(yield* lastMode).toBe("watched")
            rmSync(box.root, { recursive: true })
            mkdirSync(box.root)
            for (const path of ["b.txt", "sub/c.txt", "d.txt"])
              apply(box.root, { op: "write", path, content: "new" })
            expect(fstatSync(held).nlink).toBe(0)
            yield* Effect.sleep("120 millis")
            const a = yield* turnPoint(watched.id)
            const status = yield* snapshotStatus
            expect(status.watcher.lastCapture?.mode).toBe("full")
            expect(status.watcher.lastCapture?.reason ?? "").toMatch(/removed or replaced/)
            const b = yield* withoutWatcher(turnPoint(scanned.id))
            expect(a.manifestHash).toBe(b.manifestHash)
            expect([a.files, a.tombstones]).toEqual([3, 2])
            // Watching the new root from here on.
            yield* turnPoint(watched.id)
            apply(box.root, { op: "write", path: "e.txt", content: "after" })
            const c = yield* turnPoint(watched.id)
            expect(yield* lastMode).toBe("watched")
            expect(c.files).toBe(4)
          }).pipe(Effect.provide(live))
        }),
      ),
  )

  it.live("a watcher that cannot start leaves every capture a full scan, and status says why", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const box = sandbox()
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => rmSync(box.base, { recursive: true, force: true })),
        )
        const { backend, faults } = faulty()
        faults.refuseStart = true
        apply(box.root, { op: "write", path: "a/x.txt", content: "one" })
        const { live } = layers(box, backend)
        yield* Effect.gen(function* () {
          const session = yield* createSession({ title: "live", cwd: box.root })
          yield* turnPoint(session.id)
          apply(box.root, { op: "write", path: "a/y.txt", content: "two" })
          const point = yield* turnPoint(session.id)
          expect(point.files).toBe(2)
          const status = yield* snapshotStatus
          expect(status.watcher).toMatchObject({ active: false, lastCapture: { mode: "full" } })
          expect(status.watcher.active ? "" : status.watcher.reason).toMatch(/watch limit/)
        }).pipe(Effect.provide(live))
      }),
    ),
  )
})
