// The protection policy, table-driven (issue 20): every protected class of path × every entry
// point that records, captures or restores, on the embedded default (NodeWorkspace + SQLite) in a
// real directory. A record naming the path is put straight into the store where the entry point's
// own door would refuse it (an older store, a hostile host, a damaged row): whatever let it in,
// nothing may be written or deleted at the path, and the answer is a typed reason, not an `ok`.
// One cell differs by design: a point restore meeting an in-root link where the point has a
// directory (`linkGoesOnPointRestore`) takes the link away as a link and makes the directory again,
// as it does for a file in the way; it still writes nothing through the link.
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  type CommandId,
  type ContentHash,
  type OperationId,
  PointCaptured,
  type PointId,
  type SessionId,
  type TurnId,
  type WorkspacePath,
} from "@rewind/contracts"
import {
  ArtifactStore,
  capturePoint,
  encodeManifest,
  forkFromCheckpoint,
  loadManifest,
  OperationJournal,
  previewFileRewind,
  previewPointRestore,
  previewRewindByFork,
  resolveOperation,
  rewindCascade,
  rewindToCheckpoint,
  rewindToMessageCheckpoint,
  SessionStore,
} from "@rewind/core"
import { injectCheckpoint } from "@rewind/testkit"
import { Effect, Either } from "effect"
import { openRewind, type Rewind } from "../src/index.js"
import type { EngineServices } from "../src/layers.js"
import { okValue } from "./okValue.js"
import { expectSentinelUntouched, type Sandbox, sandbox, value } from "./storeFixture.js"

const EVIL = "EVIL\n"

interface ProtectedClass {
  readonly name: string
  readonly path: string
  /** Store directory (absolute), when not the default `<root>/.rewind`. */
  readonly dir?: (box: Sandbox) => string
  readonly setup: (box: Sandbox) => void
  /** Where a write would land on disk (a link's target for the link classes). */
  readonly lands: (box: Sandbox) => string
  /**
   * The link on the path stands where the point has a directory and leads inside the root: a point
   * restore takes it away (the redo makes it again) and writes beneath a real directory instead.
   */
  readonly linkGoesOnPointRestore?: string
}

const write = (path: string, content: string) => {
  fs.mkdirSync(join(path, ".."), { recursive: true })
  fs.writeFileSync(path, content)
}

const classes: ReadonlyArray<ProtectedClass> = [
  {
    name: "store file",
    path: ".rewind/rewind.db",
    setup: () => {},
    lands: (b) => join(b.root, ".rewind/rewind.db"),
  },
  {
    name: "store -wal",
    path: ".rewind/rewind.db-wal",
    setup: () => {},
    lands: (b) => join(b.root, ".rewind/rewind.db-wal"),
  },
  {
    name: "store -shm",
    path: ".rewind/rewind.db-shm",
    setup: () => {},
    lands: (b) => join(b.root, ".rewind/rewind.db-shm"),
  },
  {
    name: "store dir inside the workspace",
    path: "state/store/rewind.db",
    dir: (b) => join(b.root, "state/store"),
    setup: () => {},
    lands: (b) => join(b.root, "state/store/rewind.db"),
  },
  {
    name: ".git dir",
    path: ".git/config",
    setup: (b) => write(join(b.root, ".git/config"), "[core]\n"),
    lands: (b) => join(b.root, ".git/config"),
  },
  {
    name: ".git file (worktree)",
    path: ".git",
    setup: (b) => write(join(b.root, ".git"), "gitdir: /elsewhere/.git/worktrees/ws\n"),
    lands: (b) => join(b.root, ".git"),
  },
  {
    name: "nested .git",
    path: "sub/.git/HEAD",
    setup: (b) => write(join(b.root, "sub/.git/HEAD"), "ref: refs/heads/main\n"),
    lands: (b) => join(b.root, "sub/.git/HEAD"),
  },
  {
    name: "ignored file",
    path: "debug.log",
    setup: (b) => {
      write(join(b.root, ".gitignore"), "*.log\n")
      write(join(b.root, "debug.log"), "log line\n")
    },
    lands: (b) => join(b.root, "debug.log"),
  },
  {
    name: "path under a symlinked sibling directory",
    path: "t/pascal/a.css",
    setup: (b) => {
      write(join(b.root, "t/css/a.css"), "body {}\n")
      fs.symlinkSync("css", join(b.root, "t/pascal"))
    },
    lands: (b) => join(b.root, "t/css/a.css"),
    linkGoesOnPointRestore: "t/pascal",
  },
  {
    name: "path through a link leading outside",
    path: "out/secret.txt",
    setup: (b) => fs.symlinkSync(b.sentinel, join(b.root, "out")),
    lands: (b) => join(b.sentinel, "secret.txt"),
  },
]

/** What is at a path, as far as this test cares: gone, or its bytes. */
const stateOf = (path: string): string | null => {
  try {
    return fs.readFileSync(path, "latin1")
  } catch {
    return null
  }
}

interface Fixture {
  readonly box: Sandbox
  readonly rewind: Rewind
  readonly sessionId: SessionId
  readonly turnId: TurnId
  readonly messageId: string
}

const fixture = async (c: ProtectedClass): Promise<Fixture> => {
  const box = sandbox()
  write(join(box.root, "a.txt"), "a\n")
  c.setup(box)
  const rewind = await openRewind({
    workspaceRoot: box.root,
    durability: "atomic",
    ...(c.dir === undefined ? {} : { dir: c.dir(box) }),
  })
  const session = value(await rewind.createSession({ title: "protection", cwd: box.root }))
  const { turnId, messageId } = value(await rewind.appendUserMessage(session.id, { text: "go" }))
  return { box, rewind, sessionId: session.id, turnId, messageId }
}

/** Runs an entry point and says how it ended: `ok`, `refused:<kind>` or `error:<tag>`. */
const outcomeOf = async (
  rewind: Rewind,
  program: Effect.Effect<unknown, unknown, EngineServices>,
): Promise<string> => {
  const result = await rewind.run(Effect.either(program))
  if (Either.isRight(result)) return "ok"
  const e = result.left as { _tag?: string; kind?: string }
  return e._tag === "Refused" ? `refused:${e.kind}` : `error:${e._tag ?? "untyped"}`
}

type EntryPoint = (f: Fixture, c: ProtectedClass) => Promise<string>

const withInjected = async (f: Fixture, c: ProtectedClass) =>
  f.rewind.run(
    injectCheckpoint({
      sessionId: f.sessionId,
      turnId: f.turnId,
      path: c.path,
      before: EVIL,
      after: "after\n",
    }),
  )

const entryPoints: ReadonlyArray<readonly [string, EntryPoint]> = [
  [
    "recordFileMutation",
    async (f, c) => {
      const r = okValue(
        await f.rewind.recordFileMutation({
          sessionId: f.sessionId,
          turnId: f.turnId,
          path: c.path,
          toolName: "Write",
          before: EVIL,
          after: "after\n",
        }),
      )
      return r.recorded ? "ok" : `warning:${r.warning.reason}`
    },
  ],
  [
    "capture with a declared path",
    async (f, c) => {
      const outcome = await f.rewind.run(capturePoint(f.sessionId, f.turnId, { declaredPaths: [c.path] }))
      if (outcome._tag !== "Captured") return `not_captured:${outcome.reason}`
      const manifest = await f.rewind.run(loadManifest(outcome.point.manifestHash))
      const entry = manifest.get(c.path as WorkspacePath)
      // Held as a file, the point would restore it: that is what must not happen.
      if (entry?.kind === "file") return "ok"
      const skip = outcome.point.skipped.find((s) => s.path === c.path)
      return skip === undefined ? `silent:${entry?.kind ?? "absent"}` : `skipped:${skip.reason}`
    },
  ],
  [
    "rewindToCheckpoint",
    async (f, c) => {
      const checkpoint = await withInjected(f, c)
      return outcomeOf(
        f.rewind,
        rewindToCheckpoint({ sessionId: f.sessionId, checkpointId: checkpoint.checkpointId }),
      )
    },
  ],
  [
    "rewindToMessageCheckpoint",
    async (f, c) => {
      await withInjected(f, c)
      return outcomeOf(
        f.rewind,
        rewindToMessageCheckpoint({ sessionId: f.sessionId, messageId: f.messageId as never }),
      )
    },
  ],
  [
    "rewindCascade",
    async (f, c) => {
      await withInjected(f, c)
      return outcomeOf(
        f.rewind,
        rewindCascade({ sessionId: f.sessionId, messageId: f.messageId as never, scope: "workspace" }),
      )
    },
  ],
  [
    "preview/apply",
    async (f, c) => {
      await withInjected(f, c)
      const preview = await f.rewind.run(previewFileRewind({ sessionId: f.sessionId, turnId: f.turnId }))
      const unsafe = preview.unsafe.find((u) => u.path === c.path)
      const ignored = preview.ignored.find((i) => i.path === c.path)
      if (preview.canApply) {
        const applied = await f.rewind.applyFileRewind(preview)
        if (applied.ok && ignored === undefined) return "ok"
      }
      return unsafe !== undefined
        ? `unsafe:${unsafe.reason}`
        : ignored !== undefined
          ? `ignored:${ignored.reason}`
          : "ok"
    },
  ],
  [
    "point restore",
    async (f, c) => {
      // A point whose manifest holds the path with other content (captured by an older version).
      const pointId = `pt-injected-${f.turnId}` as PointId
      await f.rewind.run(
        Effect.gen(function* () {
          const artifacts = yield* ArtifactStore
          const hash = (yield* artifacts.put(new TextEncoder().encode(EVIL))) as ContentHash
          const manifest = new Map([
            [c.path as WorkspacePath, { kind: "file", hash, mode: 0o644, size: 5 } as const],
          ])
          const manifestHash = yield* artifacts.put(encodeManifest(manifest))
          const store = yield* SessionStore
          yield* store.append({
            sessionId: f.sessionId,
            expectedVersion: yield* store.version(f.sessionId),
            at: 0,
            events: [
              new PointCaptured({
                pointId,
                kind: "turn",
                turnId: f.turnId,
                manifestHash,
                reusedManifest: false,
                files: 1,
                links: 0,
                tombstones: 0,
                bytes: 5,
                skipped: [],
                capturedAt: 0,
              }),
            ],
          })
        }) as Effect.Effect<void>,
      )
      const preview = await f.rewind.run(previewPointRestore(f.sessionId, pointId))
      const kept = preview.protected.find((p) => p.path === c.path)
      const conflict = preview.conflicts.find((x) => x.path === c.path)
      if (preview.canApply && preview.changes.some((x) => x.path === c.path)) {
        const applied = await f.rewind.restorePoint(f.sessionId, pointId, preview.token!)
        return applied.ok ? "ok" : `refused:${applied.refusal.kind}`
      }
      return kept !== undefined
        ? `left_alone:${kept.kind}`
        : conflict !== undefined
          ? `conflict:${conflict.reason}`
          : "ok"
    },
  ],
  [
    "fork restore",
    async (f, c) => {
      const checkpoint = await withInjected(f, c)
      return outcomeOf(
        f.rewind,
        forkFromCheckpoint({
          sessionId: f.sessionId,
          target: { checkpointId: checkpoint.checkpointId },
          commandId: "cmd-protection" as CommandId,
        }),
      )
    },
  ],
  [
    "rewind by fork",
    async (f, c) => {
      await withInjected(f, c)
      const preview = await f.rewind.run(
        Effect.either(previewRewindByFork({ sessionId: f.sessionId, messageId: f.messageId as never })),
      )
      if (Either.isLeft(preview)) return `refused:${(preview.left as { kind?: string }).kind}`
      const unsafe = preview.right.unsafe.find((u) => u.path === c.path)
      return unsafe === undefined ? "ok" : `unsafe:${unsafe.reason}`
    },
  ],
  [
    "recover (continue)",
    async (f, c) => {
      const operationId = "op-protection" as OperationId
      await f.rewind.run(
        Effect.gen(function* () {
          const artifacts = yield* ArtifactStore
          const hash = yield* artifacts.put(new TextEncoder().encode(EVIL))
          const journal = yield* OperationJournal
          yield* journal.begin({
            operationId,
            sessionId: f.sessionId,
            kind: "direct_restore",
            startedAt: 0,
            files: [
              {
                path: c.path as WorkspacePath,
                rescue: { _tag: "absent" },
                planned: { _tag: "present", hash },
              },
            ],
          })
        }) as Effect.Effect<void>,
      )
      return outcomeOf(f.rewind, resolveOperation(operationId, "continue"))
    },
  ],
]

describe("the protection policy at every entry point", () => {
  for (const c of classes) {
    for (const [name, run] of entryPoints) {
      it(`${c.name} × ${name}: nothing written there, a typed reason`, async () => {
        const f = await fixture(c)
        try {
          const before = stateOf(c.lands(f.box))
          const outcome = await run(f, c)
          if (c.linkGoesOnPointRestore !== undefined && name === "point restore") {
            expect(outcome).toBe("ok")
            expect(fs.lstatSync(join(f.box.root, c.linkGoesOnPointRestore)).isDirectory()).toBe(true)
          } else {
            expect(outcome, `${c.name} × ${name}`).not.toBe("ok")
            expect(outcome).not.toMatch(/^silent/)
          }
          const after = stateOf(c.lands(f.box))
          expect(after === EVIL, "the protected path holds the injected content").toBe(false)
          // The store's own files change as it works; every other class must be byte for byte.
          if (!c.path.includes("rewind.db")) expect(after).toBe(before)
          else expect(after === null).toBe(before === null)
          expectSentinelUntouched(f.box)
          // The store still opens and answers.
          expect(okValue(await f.rewind.listSessions()).length).toBeGreaterThan(0)
        } finally {
          await f.rewind.close()
        }
      })
    }
  }
})
