// A path that changes kind between points. A symlinked directory replaced by a real one (a real
// repository does this when a linked package is vendored): the capture records the link as gone (a
// tombstone, as it does for files under a directory that became a link) and reports nothing left
// out; a restore to that point from the linked state takes the link away before writing beneath
// it (never through it), a directory standing where the point records a tombstone holds already,
// the diff shows the link deleted and the files added, and the redo reports the link it put back.
// A regular file replaced by a directory of the same name (`rm config && mkdir config`), and a
// directory replaced by a file: the capture records the old kind as gone; a restore deletes what
// stands in the way (the directory's files, or the file), recoverably, before it writes, refuses
// when the directory holds what no restore could put back, and is undone exactly by its redo, by
// its own rollback when a write fails, and by recover() after a crash half-way.
import { describe, expect, it } from "@effect/vitest"
import type { OperationId, PointId, SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import {
  applyPointRestore,
  capturePoint,
  diffPoint,
  loadManifest,
  previewPointRestore,
  readPointIndex,
  recover,
  redo,
  resolveOperation,
  Workspace,
} from "@rewind/core"
import { refusalOf } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { type Env, makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const captured = (sessionId: SessionId, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome
  })

/** What is at `path` of the workspace: its node's kind, or undefined. */
const kindIn = (env: Env) => (path: string) => env.fs.node(`${ROOT}/${path}`)?.kind

/** `lib/pkg` a symlink to `../shared`, which holds `t.txt`. */
const linkedPackage = (env: Env) => {
  env.fs.writeFile(`${ROOT}/shared/t.txt`, "t")
  env.fs.symlink(`${ROOT}/lib/pkg`, "../shared")
}

/** The agent's shell vendors a copy of the package in the link's place. */
const vendorInPlace = (env: Env, files: Readonly<Record<string, string>>) => {
  env.fs.remove(`${ROOT}/lib/pkg`)
  for (const [path, content] of Object.entries(files)) env.fs.writeFile(`${ROOT}/lib/pkg/${path}`, content)
}

describe("a symlinked directory that became a real one", () => {
  it.effect("is captured as gone, restored over the link without going through it, and redone", () => {
    const env = makeEnv()
    const kind = kindIn(env)
    linkedPackage(env)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const linked = (yield* captured(sessionId, "turn-1")).point
      expect(linked.links).toBe(1)

      vendorInPlace(env, { "f.txt": "vendored" })
      const vendored = (yield* captured(sessionId, "turn-2")).point
      expect(vendored.skipped).toEqual([])
      expect(vendored).toMatchObject({ files: 2, links: 0, tombstones: 1 })
      // A full scan over the same tree keeps the tombstone and reports nothing, as the live
      // engine's capture (which only looks at what changed) does.
      const again = (yield* captured(sessionId, "turn-2b")).point
      expect(again.skipped).toEqual([])
      expect(again).toMatchObject({ files: 2, links: 0, tombstones: 1 })

      // The diff against the linked point: the link is gone, the directory's file is new.
      const diff = yield* diffPoint(sessionId, linked.pointId)
      expect(diff.skipped).toEqual([])
      expect(diff.entries.map((e) => [e.path, e.change])).toEqual([
        ["lib/pkg", "deleted"],
        ["lib/pkg/f.txt", "added"],
      ])

      // Where the directory stands, the vendored point holds already: nothing to do.
      const same = yield* previewPointRestore(sessionId, vendored.pointId)
      expect(same.conflicts).toEqual([])
      expect(same.changes).toEqual([])

      // A shell put the link back; the vendored point is restored over it.
      env.fs.remove(`${ROOT}/lib/pkg`)
      env.fs.symlink(`${ROOT}/lib/pkg`, "../shared")
      const preview = yield* previewPointRestore(sessionId, vendored.pointId)
      expect(preview.conflicts).toEqual([])
      expect(preview.changes.map((c) => [c.path, c.action])).toEqual([
        ["lib/pkg", "delete"],
        ["lib/pkg/f.txt", "write"],
      ])
      const applied = yield* applyPointRestore(sessionId, vendored.pointId, preview.token!)
      expect(applied.event.files.map((f) => [f.path, f.action])).toEqual([
        ["lib/pkg", "deleted"],
        ["lib/pkg/f.txt", "written"],
      ])
      expect(kind("lib/pkg")).toBe("directory")
      // Nothing went through the link: its target holds what it held.
      expect(env.files()).toEqual({ "lib/pkg/f.txt": "vendored", "shared/t.txt": "t" })

      // The redo takes the file away and puts the link back, and says so.
      const undone = yield* redo(sessionId)
      expect(kind("lib/pkg")).toBe("symlink")
      expect(env.files()).toEqual({ "shared/t.txt": "t" })
      expect(undone.files.map((f) => [f.path, f.action])).toEqual([
        ["lib/pkg/f.txt", "deleted"],
        ["lib/pkg", "restored"],
      ])
      expect(env.outsideAccesses()).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("a symlinked directory vendored in place, restored to the link", () => {
  it.effect(
    "deletes the directory's files, makes the link, and the redo puts the directory back without reading through the link",
    () => {
      const env = makeEnv()
      const kind = kindIn(env)
      linkedPackage(env)
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const linked = (yield* captured(sessionId, "turn-1")).point
        vendorInPlace(env, { "f.txt": "vendored", "sub/g.txt": "deeper" })
        env.fs.symlink(`${ROOT}/lib/pkg/to-f`, "f.txt")
        yield* captured(sessionId, "turn-2")
        const preview = yield* previewPointRestore(sessionId, linked.pointId)
        expect(preview.conflicts).toEqual([])
        expect(preview.changes.map((c) => [c.path, c.action]).sort()).toEqual([
          ["lib/pkg", "link"],
          ["lib/pkg/f.txt", "delete"],
          ["lib/pkg/sub/g.txt", "delete"],
          ["lib/pkg/to-f", "delete"],
        ])
        yield* applyPointRestore(sessionId, linked.pointId, preview.token!)
        expect(kind("lib/pkg")).toBe("symlink")
        expect(env.files()).toEqual({ "shared/t.txt": "t" })

        const undone = yield* redo(sessionId)
        expect(kind("lib/pkg")).toBe("directory")
        expect(env.files()).toEqual({
          "lib/pkg/f.txt": "vendored",
          "lib/pkg/sub/g.txt": "deeper",
          "shared/t.txt": "t",
        })
        expect(env.fs.node(`${ROOT}/lib/pkg/to-f`)).toMatchObject({ kind: "symlink" })
        expect(undone.files.map((f) => f.path).sort()).toEqual([
          "lib/pkg",
          "lib/pkg/f.txt",
          "lib/pkg/sub/g.txt",
          "lib/pkg/to-f",
        ])
        expect(env.outsideAccesses()).toEqual([])
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect("stays a conflict while the directory holds what no restore could put back", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n")
    linkedPackage(env)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const linked = (yield* captured(sessionId, "turn-1")).point
      vendorInPlace(env, { "f.txt": "vendored", "build.log": "ignored, never captured" })
      yield* captured(sessionId, "turn-2")
      const preview = yield* previewPointRestore(sessionId, linked.pointId)
      expect(preview.conflicts.map((c) => [c.path, c.reason])).toEqual([["lib/pkg", "not_a_regular_file"]])
      expect(preview.token).toBeUndefined()
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("a redo's outcome", () => {
  it.effect("reports a file whose mode alone it put back as restored, not unchanged", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/run.sh`, "echo hi\n", 0o644)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const plain = (yield* captured(sessionId, "turn-1")).point
      env.fs.writeFile(`${ROOT}/run.sh`, "echo hi\n", 0o755)
      yield* captured(sessionId, "turn-2")
      const preview = yield* previewPointRestore(sessionId, plain.pointId)
      yield* applyPointRestore(sessionId, plain.pointId, preview.token!)
      expect(env.fs.node(`${ROOT}/run.sh`)).toMatchObject({ mode: 0o644 })
      const undone = yield* redo(sessionId)
      expect(env.fs.node(`${ROOT}/run.sh`)).toMatchObject({ mode: 0o755 })
      expect(undone.files).toEqual([{ path: "run.sh", action: "restored" }])
    }).pipe(Effect.provide(env.layer()))
  })
})

/** What the workspace holds: every file with its content and mode, and every directory. */
const tree = (env: Env) =>
  Object.fromEntries(
    env.fs
      .describe(ROOT)
      .filter(([p]) => p !== ROOT)
      .map(([p, d]) => [p.slice(ROOT.length + 1), d]),
  )

/** The entries a point records, as `path: kind`. */
const recorded = (sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const point = (yield* readPointIndex(sessionId)).points.find((p) => p.pointId === pointId)!
    return Object.fromEntries([...(yield* loadManifest(point.manifestHash))].map(([p, e]) => [p, e.kind]))
  })

/** Turn 1: `config` is a file (mode 0640); the agent then replaces it by a directory of files. */
const fileThenDirectory = (env: Env) =>
  Effect.gen(function* () {
    env.fs.writeFile(`${ROOT}/config`, "v1", 0o640)
    env.fs.writeFile(`${ROOT}/keep.txt`, "k")
    const sessionId = yield* newSession
    const asFile = (yield* captured(sessionId, "turn-1")).point
    env.fs.remove(`${ROOT}/config`)
    env.fs.writeFile(`${ROOT}/config/a`, "x")
    env.fs.writeFile(`${ROOT}/config/sub/b`, "y", 0o600)
    env.fs.symlink(`${ROOT}/config/to-a`, "a")
    const asDirectory = (yield* captured(sessionId, "turn-2")).point
    return { sessionId, asFile, asDirectory }
  })

const restore = (sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const preview = yield* previewPointRestore(sessionId, pointId)
    expect(preview.conflicts).toEqual([])
    return yield* applyPointRestore(sessionId, pointId, preview.token!)
  })

describe("a regular file that became a directory", () => {
  it.effect(
    "is captured as gone; a restore puts the file back over the directory, and its redo the directory",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId, asFile, asDirectory } = yield* fileThenDirectory(env)
        // The file is gone (a tombstone), nothing is left out, and the directory's entries are new.
        expect(asDirectory.skipped).toEqual([])
        expect(yield* recorded(sessionId, asDirectory.pointId)).toEqual({
          config: "tombstone",
          "config/a": "file",
          "config/sub/b": "file",
          "config/to-a": "link",
          "keep.txt": "file",
        })
        const inDirectory = tree(env)

        // The point of turn 1 has only the file: everything in the directory is planned away.
        const preview = yield* previewPointRestore(sessionId, asFile.pointId)
        expect(preview.conflicts).toEqual([])
        expect(preview.changes.map((c) => [c.path, c.action])).toEqual([
          ["config", "write"],
          ["config/a", "delete"],
          ["config/sub/b", "delete"],
          ["config/to-a", "delete"],
        ])
        const applied = yield* applyPointRestore(sessionId, asFile.pointId, preview.token!)
        expect(applied.event.files.map((f) => [f.path, f.action])).toEqual([
          ["config", "written"],
          ["config/a", "deleted"],
          ["config/sub/b", "deleted"],
          ["config/to-a", "deleted"],
        ])
        expect(tree(env)).toEqual({ config: "file 640 v1", "keep.txt": "file 644 k" })
        expect(env.text("config")).toBe("v1")

        // The rescue point holds the directory's files and link: the redo gives the tree back exactly.
        expect(yield* recorded(sessionId, applied.rescuePointId)).toEqual({
          config: "tombstone",
          "config/a": "file",
          "config/sub/b": "file",
          "config/to-a": "link",
        })
        const undone = yield* redo(sessionId)
        expect(tree(env)).toEqual(inDirectory)
        expect(undone.files.map((f) => [f.path, f.action]).sort()).toEqual([
          ["config", "deleted"],
          ["config/a", "restored"],
          ["config/sub/b", "restored"],
          ["config/to-a", "restored"],
        ])

        // And back again, by a restore of each point in turn.
        yield* restore(sessionId, asFile.pointId)
        expect(env.text("config")).toBe("v1")
        yield* restore(sessionId, asDirectory.pointId)
        expect(tree(env)).toEqual(inDirectory)
        expect(env.outsideAccesses()).toEqual([])
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect("with a tombstone for each of its files (restore --turn's target), is restored the same", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, asDirectory } = yield* fileThenDirectory(env)
      const inDirectory = tree(env)
      // Restore the directory's point over a tree where the file came back by hand: its
      // tombstone at `config` takes the file away before the files are written beneath it.
      env.fs.remove(`${ROOT}/config`)
      env.fs.writeFile(`${ROOT}/config`, "by hand")
      const applied = yield* restore(sessionId, asDirectory.pointId)
      expect(applied.event.files.map((f) => [f.path, f.action])).toEqual([
        ["config", "deleted"],
        ["config/a", "written"],
        ["config/sub/b", "written"],
        ["config/to-a", "linked"],
      ])
      expect(tree(env)).toEqual(inDirectory)
      yield* redo(sessionId)
      expect(env.text("config")).toBe("by hand")
      expect(env.fs.node(`${ROOT}/config/a`)).toBeUndefined()
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("stays in the way, nothing deleted, while it holds what no restore could put back", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, asFile } = yield* fileThenDirectory(env)
      // An ignored file (never captured by any point, and never deleted by a restore).
      env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n")
      env.fs.writeFile(`${ROOT}/config/sub/debug.log`, "mine")
      const before = tree(env)
      const preview = yield* previewPointRestore(sessionId, asFile.pointId)
      expect(preview.canApply).toBe(false)
      expect(preview.token).toBeUndefined()
      expect(preview.conflicts).toEqual([
        {
          path: "config",
          reason: "not_a_regular_file",
          detail: expect.stringMatching(
            /^a directory is in the way: it holds config\/sub\/debug\.log, which a restore never deletes \(.*ignore rules/,
          ),
        },
      ])
      expect(preview.changes).toEqual([])
      expect(tree(env)).toEqual(before)

      // A FIFO is refused the same way, and so is an empty directory (no point records one).
      env.fs.remove(`${ROOT}/config/sub/debug.log`)
      env.fs.fifo(`${ROOT}/config/pipe`)
      const fifo = yield* previewPointRestore(sessionId, asFile.pointId)
      expect(fifo.conflicts.map((c) => [c.path, c.detail])).toEqual([
        [
          "config",
          "a directory is in the way: it holds config/pipe, a FIFO, socket or device, which no point records",
        ],
      ])
      env.fs.remove(`${ROOT}/config/pipe`)
      env.fs.mkdirp(`${ROOT}/config/sub/empty`)
      const empty = yield* previewPointRestore(sessionId, asFile.pointId)
      expect(empty.conflicts.map((c) => [c.path, c.detail])).toEqual([
        [
          "config",
          "a directory is in the way: it holds config/sub/empty, an empty directory, which no point records",
        ],
      ])
      expect(env.text("config/a")).toBe("x")
    }).pipe(Effect.provide(env.layer()))
  })
})

/** Turn 1: `lib/` holds files; the agent then replaces the directory by a file `lib`. */
const directoryThenFile = (env: Env) =>
  Effect.gen(function* () {
    env.fs.writeFile(`${ROOT}/lib/x`, "x", 0o755)
    env.fs.writeFile(`${ROOT}/lib/deep/y`, "y")
    env.fs.symlink(`${ROOT}/lib/deep/to-x`, "../x")
    const sessionId = yield* newSession
    const asDirectory = (yield* captured(sessionId, "turn-1")).point
    const asDirectoryTree = tree(env)
    env.fs.remove(`${ROOT}/lib`)
    env.fs.writeFile(`${ROOT}/lib`, "now a file")
    const asFile = (yield* captured(sessionId, "turn-2")).point
    return { sessionId, asDirectory, asFile, asDirectoryTree }
  })

describe("a directory that became a regular file", () => {
  it.effect("a restore removes the file, recoverably, and puts the directory's files back", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, asDirectory, asFile, asDirectoryTree } = yield* directoryThenFile(env)
      expect(asFile.skipped).toEqual([])
      expect(yield* recorded(sessionId, asFile.pointId)).toEqual({
        lib: "file",
        "lib/deep/to-x": "tombstone",
        "lib/deep/y": "tombstone",
        "lib/x": "tombstone",
      })
      const asFileTree = tree(env)
      // The point of the file restores as it is (a path beneath a file is absent: its tombstone holds).
      expect((yield* previewPointRestore(sessionId, asFile.pointId)).changes).toEqual([])
      // The diff against the directory's point: its entries are gone (not unreadable), the file new.
      const diff = yield* diffPoint(sessionId, asDirectory.pointId)
      expect(diff.skipped).toEqual([])
      expect(diff.entries.map((e) => [e.path, e.change])).toEqual([
        ["lib", "added"],
        ["lib/deep/to-x", "deleted"],
        ["lib/deep/y", "deleted"],
        ["lib/x", "deleted"],
      ])

      const preview = yield* previewPointRestore(sessionId, asDirectory.pointId)
      expect(preview.conflicts).toEqual([])
      expect(preview.changes.map((c) => [c.path, c.action])).toEqual([
        ["lib/deep/to-x", "link"],
        ["lib/deep/y", "write"],
        ["lib/x", "write"],
        ["lib", "delete"],
      ])
      yield* applyPointRestore(sessionId, asDirectory.pointId, preview.token!)
      // Contents, modes and the link, exactly.
      expect(tree(env)).toEqual(asDirectoryTree)

      yield* redo(sessionId)
      expect(tree(env)).toEqual(asFileTree)
      expect(env.text("lib")).toBe("now a file")
    }).pipe(Effect.provide(env.layer()))
  })
})

/**
 * A restore that fails or dies half-way through a change of kind, in either direction: the
 * deletions ran, a directory was removed or made, and the write of `target` fails (compensation
 * gives the exact tree back) or the process dies there (`recover()` rolls back to the exact tree,
 * or continues to the point's, which redo then undoes like any restore).
 */
const HALF_WAY = [
  {
    change: "a regular file that became a directory",
    setup: (env: Env) =>
      Effect.map(fileThenDirectory(env), (s) => ({ sessionId: s.sessionId, to: s.asFile })),
    // Written after the directory's files are deleted and the directory removed.
    target: "config",
    diedAt: { "keep.txt": "file 644 k" },
    restored: { config: "file 640 v1", "keep.txt": "file 644 k" },
  },
  {
    change: "a directory that became a regular file",
    setup: (env: Env) =>
      Effect.map(directoryThenFile(env), (s) => ({ sessionId: s.sessionId, to: s.asDirectory })),
    // lib/deep/y is written first, its directories made where the file was; then lib/x.
    target: "lib/x",
    diedAt: { lib: "directory", "lib/deep": "directory", "lib/deep/y": "file 644 y" },
    restored: {
      lib: "directory",
      "lib/deep": "directory",
      "lib/deep/to-x": "symlink ../x",
      "lib/deep/y": "file 644 y",
      "lib/x": "file 755 x",
    },
  },
  {
    change: "a directory that became a symlink to another directory",
    setup: (env: Env) =>
      Effect.gen(function* () {
        env.fs.writeFile(`${ROOT}/shared/t.txt`, "t")
        env.fs.writeFile(`${ROOT}/lib/pkg/f.txt`, "vendored")
        env.fs.writeFile(`${ROOT}/lib/pkg/sub/g.txt`, "deeper")
        const sessionId = yield* newSession
        const asDirectory = (yield* captured(sessionId, "turn-1")).point
        env.fs.remove(`${ROOT}/lib/pkg`)
        env.fs.symlink(`${ROOT}/lib/pkg`, "../shared")
        yield* captured(sessionId, "turn-2")
        return { sessionId, to: asDirectory }
      }),
    // The link goes right after the intent is journaled; then lib/pkg/f.txt, then sub/g.txt.
    target: "lib/pkg/sub/g.txt",
    diedAt: {
      lib: "directory",
      "lib/pkg": "directory",
      "lib/pkg/f.txt": "file 644 vendored",
      shared: "directory",
      "shared/t.txt": "file 644 t",
    },
    restored: {
      lib: "directory",
      "lib/pkg": "directory",
      "lib/pkg/f.txt": "file 644 vendored",
      "lib/pkg/sub": "directory",
      "lib/pkg/sub/g.txt": "file 644 deeper",
      shared: "directory",
      "shared/t.txt": "file 644 t",
    },
  },
] as const

describe.each(HALF_WAY)(
  "a restore across $change, stopped half-way",
  ({ setup, target, diedAt, restored }) => {
    it.effect("a failed write rolls it back: the tree is as it was", () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId, to } = yield* setup(env)
        const before = tree(env)
        const preview = yield* previewPointRestore(sessionId, to.pointId)
        env.workspace.control.inject({ operation: "write", target })
        const refused = yield* refusalOf(applyPointRestore(sessionId, to.pointId, preview.token!))
        expect(refused.kind).toBe("unavailable")
        expect(refused.message).toMatch(new RegExp(`could not write ${target}`))
        expect(tree(env)).toEqual(before)
        expect(yield* recover()).toEqual([])
      }).pipe(Effect.provide(env.layer()))
    })

    for (const resolution of ["rollback", "continue"] as const) {
      it.effect(`a crash is resolved by recover(): ${resolution}`, () => {
        const env = makeEnv()
        const crash = crashingWrites(env)
        return Effect.gen(function* () {
          const { sessionId, to } = yield* setup(env)
          const before = tree(env)
          const preview = yield* previewPointRestore(sessionId, to.pointId)
          crash.on.add(target)
          const exit = yield* Effect.exit(applyPointRestore(sessionId, to.pointId, preview.token!))
          crash.on.clear()
          expect(exit._tag).toBe("Failure")
          expect(tree(env)).toEqual(diedAt)
          const [op, ...rest] = yield* recover()
          expect(rest).toEqual([])
          expect(op!.resolvable).toBe(true)
          yield* resolveOperation(op!.record.intent.operationId as OperationId, resolution)
          expect(yield* recover()).toEqual([])
          if (resolution === "rollback") expect(tree(env)).toEqual(before)
          else {
            expect(tree(env)).toEqual(restored)
            // The continued restore is recorded and redone like any other.
            yield* redo(sessionId)
            expect(tree(env)).toEqual(before)
          }
        }).pipe(Effect.provide(crash.layer))
      })
    }
  },
)

/**
 * The layers of `env` with a workspace whose writes of the paths in `on` "crash" (the process
 * dies: no compensation runs), so a restore stops half-way with its operation pending.
 */
const crashingWrites = (env: Env) => {
  const on = new Set<string>()
  const layer = Layer.effect(
    Workspace,
    Effect.map(Workspace, (workspace) => ({
      ...workspace,
      write: (path: WorkspacePath, content: Uint8Array, options?: Parameters<typeof workspace.write>[2]) =>
        on.has(path) ? Effect.dieMessage(`crash writing ${path}`) : workspace.write(path, content, options),
    })),
  ).pipe(Layer.provideMerge(env.layer()))
  return { on, layer }
}
