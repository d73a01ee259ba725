import { describe, expect, it } from "@effect/vitest"
import { type ContentHash, WorkspaceIoError, type WorkspacePath } from "@rewind/contracts"
import { type ArtifactStoreService, Workspace, type WorkspaceService } from "@rewind/core"
import { Effect, Either, Layer, Option, Stream } from "effect"
import { makeFaultyArtifactStore } from "../src/faultyArtifactStore.js"
import { layerFaultyWorkspace, makeFaultyWorkspace, WorkspaceFaults } from "../src/faultyWorkspace.js"

/** A workspace stub that only counts the writes that really happened. */
const countingWorkspace = () => {
  const written: Array<string> = []
  const none = () =>
    Effect.fail(new WorkspaceIoError({ operation: "read", path: "", message: "not in this stub" }))
  const service: WorkspaceService = {
    root: "/stub",
    read: () => Effect.succeed(Option.none()),
    readMany: (paths) => Effect.succeed(paths.map(() => Either.right(Option.none()))),
    write: (path) => Effect.sync(() => void written.push(path)),
    createFiles: (files) => Effect.sync(() => void written.push(...files.map((f) => f.path))),
    delete: () => Effect.succeed(false),
    stat: () => Effect.succeed(Option.none()),
    statMany: (paths) => Effect.succeed(paths.map(() => Either.right(Option.none()))),
    list: () => Effect.succeed([]),
    scanDirectory: () => Effect.succeed([]),
    scanDirectories: (directories) => Effect.succeed(directories.map(() => Either.right([]))),
    readLink: none,
    symlink: none,
    discardPartialWrites: () => Effect.succeed([]),
    removeEmptyDirectory: () => Effect.succeed(false),
  }
  return { service, written }
}

const p = (s: string) => s as WorkspacePath
const bytes = new Uint8Array([1])

describe("fault-injecting workspace", () => {
  it.effect("fails a bulk creation at the file a rule names, after creating the ones before it", () =>
    Effect.gen(function* () {
      const { service: inner, written } = countingWorkspace()
      const { service, control } = makeFaultyWorkspace(inner)
      control.inject({ operation: "createFiles", target: "b" })
      const files = ["a", "b", "c"].map((path) => ({ path: p(path), content: bytes, mode: 0o644 }))
      const failed = yield* Effect.either(service.createFiles(files))
      expect(failed._tag).toBe("Left")
      expect(written).toEqual(["a"])
      // Spent: the next bulk creation goes through whole.
      yield* service.createFiles(files.slice(1))
      expect(written).toEqual(["a", "b", "c"])
    }),
  )

  it.effect("fails exactly the Nth call of an operation, once", () =>
    Effect.gen(function* () {
      const inner = countingWorkspace()
      const { service, control } = makeFaultyWorkspace(inner.service)
      control.inject({ operation: "write", nth: 2 })
      const results = []
      for (const name of ["a", "b", "c"])
        results.push((yield* Effect.either(service.write(p(name), bytes)))._tag)
      expect(results).toEqual(["Right", "Left", "Right"])
      expect(inner.written).toEqual(["a", "c"])
      expect(control.calls("write")).toBe(3)
      expect(control.injected()).toBe(1)
    }),
  )

  it.effect("fails every call on a path when persistent, and after the real call when asked", () =>
    Effect.gen(function* () {
      const inner = countingWorkspace()
      const { service, control } = makeFaultyWorkspace(inner.service)
      control.inject({ operation: "write", target: "x", persistent: true, timing: "after" })
      const error = yield* Effect.flip(service.write(p("x"), bytes))
      expect(error).toMatchObject({ _tag: "WorkspaceIoError", code: "EINJECTED", path: "x" })
      yield* Effect.flip(service.write(p("x"), bytes))
      yield* service.write(p("y"), bytes)
      // "after": the write happened each time, the caller was told it failed.
      expect(inner.written).toEqual(["x", "x", "y"])
      control.clear()
      yield* service.write(p("x"), bytes)
      expect(control.injected()).toBe(0)
    }),
  )

  it.effect("persistent with N fails the Nth call and every one after it", () =>
    Effect.gen(function* () {
      const { service, control } = makeFaultyWorkspace(countingWorkspace().service)
      control.inject({ operation: "read", nth: 2, persistent: true })
      const tags = []
      for (let i = 0; i < 4; i++) tags.push((yield* Effect.either(service.read(p("f"))))._tag)
      expect(tags).toEqual(["Right", "Left", "Left", "Left"])
    }),
  )
})

describe("fault-injecting layers", () => {
  it.effect("wrap whatever Workspace is provided below them", () => {
    const inner = countingWorkspace()
    const layer = layerFaultyWorkspace.pipe(Layer.provide(Layer.succeed(Workspace, inner.service)))
    return Effect.gen(function* () {
      const faults = yield* WorkspaceFaults
      const workspace = yield* Workspace
      faults.inject({ operation: "write", target: "b" })
      yield* workspace.write(p("a"), bytes)
      expect((yield* Effect.flip(workspace.write(p("b"), bytes)))._tag).toBe("WorkspaceIoError")
      expect(inner.written).toEqual(["a"])
    }).pipe(Effect.provide(layer))
  })
})

describe("fault-injecting artifact store", () => {
  const stub: ArtifactStoreService = {
    put: () => Effect.succeed("a".repeat(64) as ContentHash),
    get: () => Effect.succeed(new Uint8Array()),
    has: () => Effect.succeed(true),
    delete: () => Effect.succeed(true),
    list: () => Stream.empty,
    stats: () => Effect.succeed({ count: 0, bytes: 0 }),
    now: () => Effect.succeed(0),
    sweep: () => Effect.succeed([]),
    putMany: (contents) => Effect.succeed(contents.map(() => "a".repeat(64) as ContentHash)),
    getMany: (hashes) => Effect.succeed(hashes.map(() => new Uint8Array())),
  }

  it.effect("can make a get look missing or corrupt, per blob", () =>
    Effect.gen(function* () {
      const { service, control } = makeFaultyArtifactStore(stub)
      const a = "a".repeat(64) as ContentHash
      const b = "b".repeat(64) as ContentHash
      control.inject({ operation: "get", target: a, as: "missing" })
      control.inject({ operation: "get", target: b, as: "corrupt" })
      expect((yield* Effect.flip(service.get(a)))._tag).toBe("ArtifactNotFound")
      expect((yield* Effect.flip(service.get(b)))._tag).toBe("ArtifactCorrupt")
      expect(yield* service.get(a)).toEqual(new Uint8Array())
      control.inject({ operation: "put" })
      expect((yield* Effect.flip(service.put(new Uint8Array([1]))))._tag).toBe("ArtifactStoreError")
    }),
  )
})
