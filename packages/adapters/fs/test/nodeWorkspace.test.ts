import { promises as fsp } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import type { WorkspacePath } from "@rewind/contracts"
import {
  appendUserMessage,
  createSession,
  IdGenerators,
  loadSession,
  previewFileRewind,
  recordFileMutation,
  rewindCascade,
  rewindToCheckpoint,
  Workspace,
} from "@rewind/core"
import { expectRefusal, injectCheckpoint, layerNoBackgroundTasks } from "@rewind/testkit"
import { Effect, Either, Layer, Option } from "effect"
import { FsArtifactStore, NodeWorkspace } from "../src/index.js"
import { fingerprint, makeNodeFixture, tempDirectory } from "./fsFixture.js"

const text = (s: string) => new TextEncoder().encode(s)

describe("node workspace", () => {
  it.scoped("refuses a root that does not exist or is not a directory", () =>
    Effect.gen(function* () {
      const base = yield* tempDirectory("roots")
      yield* Effect.promise(() => fsp.writeFile(join(base, "file"), "x"))
      expect((yield* Effect.flip(NodeWorkspace.make(join(base, "missing")))).code).toBe("ENOENT")
      expect((yield* Effect.flip(NodeWorkspace.make(join(base, "file")))).code).toBe("ENOTDIR")
    }),
  )

  it.scoped("discards the temp files of writes a crash cut short, and nothing else", () =>
    Effect.gen(function* () {
      const { workspace, plantFile, root } = yield* makeNodeFixture
      const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"
      yield* plantFile("src/a.txt", "a\n")
      // What a process killed between creating its temp file and the rename leaves behind.
      yield* plantFile(`src/.a.txt.${uuid}.tmp`, "half")
      yield* plantFile(`src/.a.txt.${uuid.replace("0f", "1e")}.tmp`, "half")
      // Look-alikes that are the user's files: another target's temp name, not a uuid, no dot.
      yield* plantFile(`src/.b.txt.${uuid}.tmp`, "b's")
      yield* plantFile("src/.a.txt.backup.tmp", "mine")
      yield* plantFile(`src/a.txt.${uuid}.tmp`, "mine too")
      const removed = yield* workspace.discardPartialWrites("src/a.txt" as WorkspacePath)
      expect([...removed].sort()).toEqual([
        `src/.a.txt.${uuid}.tmp`,
        `src/.a.txt.${uuid.replace("0f", "1e")}.tmp`,
      ])
      expect((yield* Effect.promise(() => fsp.readdir(join(root, "src")))).sort()).toEqual([
        ".a.txt.backup.tmp",
        `.b.txt.${uuid}.tmp`,
        "a.txt",
        `a.txt.${uuid}.tmp`,
      ])
      // The same at the root (the directory listed is the root itself).
      yield* plantFile(`.top.txt.${uuid}.tmp`, "half")
      expect(yield* workspace.discardPartialWrites("top.txt" as WorkspacePath)).toEqual([
        `.top.txt.${uuid}.tmp`,
      ])
      // A file whose directory does not exist has nothing to discard; a path outside is refused.
      expect(yield* workspace.discardPartialWrites("gone/x.txt" as WorkspacePath)).toEqual([])
      yield* Effect.flip(workspace.discardPartialWrites("../x.txt" as WorkspacePath))
    }),
  )

  it.scoped("reads files of every size whole, alone and in bulk", () =>
    Effect.gen(function* () {
      const { workspace, root } = yield* makeNodeFixture
      // Sizes around the chunks a read may be split into, and one of several megabytes.
      const sizes = [0, 1, 4_095, 4_096, 65_537, 3 * 1024 * 1024 + 7]
      const paths: Array<WorkspacePath> = []
      for (const size of sizes) {
        const path = `sized/${size}.bin` as WorkspacePath
        const content = Buffer.alloc(size)
        for (let i = 0; i < size; i++) content[i] = (i * 31 + size) & 0xff
        yield* Effect.promise(() => fsp.mkdir(join(root, "sized"), { recursive: true }))
        yield* Effect.promise(() => fsp.writeFile(join(root, path), content))
        paths.push(path)
      }
      const bulk = yield* workspace.readMany(paths)
      for (const [i, path] of paths.entries()) {
        const expected = yield* Effect.promise(() => fsp.readFile(join(root, path)))
        const one = Option.getOrThrow(yield* workspace.read(path)).content
        expect(Buffer.from(one).equals(expected)).toBe(true)
        const many = bulk[i]!
        expect(Buffer.from(Option.getOrThrow(Either.getOrThrow(many)).content).equals(expected)).toBe(true)
      }
    }),
  )

  it.scoped("replaces a file by rename (a new inode), keeping its mode, leaving no temp file", () =>
    Effect.gen(function* () {
      const { workspace, plantFile, root } = yield* makeNodeFixture
      yield* plantFile("tool.sh", "v1\n", 0o750)
      const before = Option.getOrThrow(yield* workspace.stat("tool.sh" as WorkspacePath))
      yield* workspace.write("tool.sh" as WorkspacePath, text("v2\n"))
      const after = Option.getOrThrow(yield* workspace.stat("tool.sh" as WorkspacePath))
      expect(after.inode).not.toBe(before.inode)
      expect(after.mode).toBe(0o750)
      expect(yield* Effect.promise(() => fsp.readdir(root))).toEqual(["tool.sh"])
      expect(yield* Effect.promise(() => fsp.readFile(join(root, "tool.sh"), "utf8"))).toBe("v2\n")
    }),
  )

  it.scoped("a rewind of checkpoints naming `..`, absolute or symlinked paths never leaves the root", () =>
    Effect.gen(function* () {
      const fixture = yield* makeNodeFixture
      const { root, base, outside } = fixture
      yield* fixture.plantSymlink("vendor", outside)
      yield* fixture.plantFile("a.txt", "a0\n")
      const layer = Layer.mergeAll(
        MemorySessionStore.layer,
        FsArtifactStore.layer({ directory: join(base, "store") }),
        Layer.succeed(Workspace, fixture.workspace),
        layerNoBackgroundTasks,
        IdGenerators.layerSequential("fs"),
        MemoryOperationJournal.layer,
      )
      yield* Effect.gen(function* () {
        const session = yield* createSession({ title: "escape", cwd: root })
        const { turnId, messageId } = yield* appendUserMessage(session.id, { text: "edit" })
        const record = (path: string) =>
          recordFileMutation({
            sessionId: session.id,
            turnId,
            path,
            toolName: "Write",
            before: "x\n",
            after: "y\n",
          })
        // Paths that are not workspace paths never become checkpoints.
        for (const path of ["../outside/secret.txt", `${outside}/secret.txt`, "a/../../outside/x"]) {
          const r = yield* record(path)
          expect(r.recorded).toBe(false)
        }
        yield* fixture.workspace.write("a.txt" as WorkspacePath, text("a1\n"))
        yield* recordFileMutation({
          sessionId: session.id,
          turnId,
          path: "a.txt",
          toolName: "Edit",
          before: "a0\n",
          after: "a1\n",
        })
        // A well-formed path that leads out through a symlink to a directory outside the root.
        // Refused at the door (it could never be written back), but a record already in the store
        // is data: restoring it must never leave the root either.
        for (const path of ["vendor/secret.txt", "vendor/nested/new.txt"]) {
          expect((yield* record(path)).recorded).toBe(false)
          yield* injectCheckpoint({ sessionId: session.id, turnId, path, before: "x\n", after: "y\n" })
        }

        const sentinel = yield* Effect.promise(() => fingerprint(outside))
        const inside = yield* Effect.promise(() => fingerprint(root))
        yield* expectRefusal(
          rewindCascade({ sessionId: session.id, messageId, scope: "workspace" }),
          "unavailable",
        )
        for (const c of (yield* loadSession(session.id)).checkpoints.filter((c) =>
          c.path.startsWith("vendor"),
        )) {
          yield* expectRefusal(
            rewindToCheckpoint({ sessionId: session.id, checkpointId: c.checkpointId }),
            "unavailable",
          )
        }
        const preview = yield* previewFileRewind({ sessionId: session.id, turnId })
        expect(preview.canApply).toBe(false)
        expect(preview.unsafe.map((u) => [u.path, u.reason]).sort()).toEqual([
          // Named for what it is now: a link on the way, which the workspace never goes through.
          ["vendor/nested/new.txt", "symlink_in_path"],
          ["vendor/secret.txt", "symlink_in_path"],
        ])
        expect(yield* Effect.promise(() => fingerprint(outside))).toBe(sentinel)
        expect(yield* Effect.promise(() => fingerprint(root))).toBe(inside)
        expect(yield* Effect.promise(() => fsp.readFile(join(outside, "secret.txt"), "utf8"))).toBe(
          "do not touch\n",
        )
      }).pipe(Effect.provide(layer))
    }),
  )
})
