// Fuzzing of the I/O entry points on the embedded default (NodeWorkspace + SQLite + blob files),
// hundreds of cases each: facade methods fed malformed ids, huge strings and hostile paths; file
// names that are not UTF-8; a store file with corrupted pages; truncated and corrupt blobs; a store
// from a newer schema version. Each case must end in a value, a refusal or a typed error (no
// defect), within a time bound (no hang), with nothing written next to the root (a sentinel
// directory), and `doctor` must pass afterwards or report exactly the injected damage.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { capturePoint, hashContent, readPointIndex } from "@rewind/core"
import Database from "better-sqlite3"
import { FastCheck as fc } from "effect"
import { openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import {
  agentTurn,
  blobFiles,
  expectSentinelUntouched,
  fuzzParameters,
  fuzzTally,
  type Sandbox,
  sandbox,
  value,
  withBlobFiles,
} from "./storeFixture.js"

/** Errors a facade call may reject with: typed infrastructure failures, never defects. */
const TYPED = new Set([
  "StoreError",
  "StoreIncompatible",
  "StoreMissing",
  "EventDecodeError",
  "VersionConflict",
  "ArtifactCorrupt",
  "ArtifactNotFound",
  "ArtifactStoreError",
  "PathRefused",
  "WorkspaceIoError",
  "UnrecoverableRewindError",
  "ForkBundleInvalid",
  "ManifestUnreadable",
  "Busy",
])

/** A call's end, or "hang" when it takes longer than the bound. */
const HANG_MS = 30_000

const settle = async (run: () => Promise<unknown>): Promise<string> => {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("hang"), HANG_MS)
  })
  const done = (async () => {
    try {
      const result = await run()
      if (typeof result === "object" && result !== null && "refusal" in result) {
        return `refused:${(result as unknown as { refusal: { kind: string } }).refusal.kind}`
      }
      return "ok"
    } catch (error) {
      const tag = (error as { _tag?: unknown })?._tag
      return typeof tag === "string" && TYPED.has(tag)
        ? `error:${tag}`
        : `DEFECT:${String(error)}\n${(error as Error)?.stack ?? ""}`
    }
  })()
  const outcome = await Promise.race([done, hang])
  clearTimeout(timer)
  return outcome
}

const expectTyped = (outcome: string) => {
  expect(outcome.startsWith("DEFECT"), outcome).toBe(false)
  expect(outcome).not.toBe("hang")
}

const hostileString = fc.oneof(
  { arbitrary: fc.string({ maxLength: 30 }), weight: 4 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 30 }), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      "",
      "..",
      "../outside/secret.txt",
      "/etc/passwd",
      "a/../../outside/x",
      "nul\u0000byte",
      "lone\ud800surrogate",
      "C:\\windows",
      "x".repeat(1 << 20),
    ),
    weight: 2,
  },
)

/** A store with three agent turns and a point, copied for each case that damages it. */
const template = async () => {
  const box = withBlobFiles(sandbox())
  const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
  const session = value(await rewind.createSession({ title: "template", cwd: box.root }))
  const first = await agentTurn(rewind, session.id, "a.txt", "alpha")
  const second = await agentTurn(rewind, session.id, "sub/b.txt", "bravo ".repeat(200))
  await agentTurn(rewind, session.id, "a.txt", "alpha 2")
  const captured = await rewind.run(capturePoint(session.id, second.turnId as TurnId))
  expect(captured._tag).toBe("Captured")
  const report = okValue(await rewind.doctor())
  expect(report.ok).toBe(true)
  // A point's seal is a shortcut, not its content: doctor does not count one that is gone.
  const index = await rewind.run(readPointIndex(session.id as Parameters<typeof readPointIndex>[0]))
  const seals = new Set(index.points.flatMap((p) => (p.scanSeal === undefined ? [] : [p.scanSeal as string])))
  await rewind.close()
  return {
    box,
    sessionId: session.id,
    firstMessage: first.messageId,
    schemaVersion: report.schemaVersion!,
    seals,
  }
}

const copyOf = (from: Sandbox): Sandbox => {
  const box = sandbox()
  fs.rmSync(box.root, { recursive: true })
  fs.cpSync(from.root, box.root, { recursive: true })
  return box
}

const fileHash = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex")

/** What a damaged store still answers: every answer is a value, a refusal or a typed error. */
const probeStore = async (
  rewind: Rewind,
  sessionId: string,
  messageId: string,
  count: (o: string) => void,
) => {
  const sid = sessionId as Parameters<Rewind["transcript"]>[0]
  const mid = messageId as Parameters<Rewind["rewindToMessageCheckpoint"]>[1]
  for (const call of [
    () => rewind.listSessions(),
    () => rewind.transcript(sid),
    () => rewind.previewFileRewind({ sessionId: sid, messageId: mid }),
    () => rewind.rewindCascade(sid, mid, "both"),
    () => rewind.forkAtMessage(sid, mid),
  ]) {
    const outcome = await settle(call)
    expectTyped(outcome)
    count(outcome)
  }
}

describe("fuzzing the embedded default", () => {
  it("facade methods fed malformed ids, huge strings and hostile paths answer with values, refusals or typed errors", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "fuzz", cwd: box.root }))
    const turn = await agentTurn(rewind, session.id, "a.txt", "alpha")
    const tally = fuzzTally("facade inputs")
    const id = fc.oneof(fc.constantFrom<string>(session.id, turn.messageId, turn.turnId), hostileString)
    const scope = fc.constantFrom("conversation", "workspace", "both", "nonsense")
    const content = fc.oneof(fc.constant(null), hostileString, fc.uint8Array({ maxLength: 64 }))
    type Any = never
    const call = fc.oneof(
      fc.tuple(hostileString, hostileString).map(
        ([title, cwd]) =>
          () =>
            rewind.createSession({ title, cwd }),
      ),
      fc.tuple(id, hostileString).map(
        ([s, text]) =>
          () =>
            rewind.appendUserMessage(s as Any, { text }),
      ),
      fc.tuple(id, id, hostileString).map(
        ([s, t, text]) =>
          () =>
            rewind.appendReply(s as Any, { turnId: t as Any, parts: [{ kind: "text", text }] }),
      ),
      fc.tuple(id, id).map(
        ([s, m]) =>
          () =>
            rewind.rewindConversation(s as Any, m as Any),
      ),
      fc.tuple(id, id).map(
        ([s, m]) =>
          () =>
            rewind.rewindToMessageCheckpoint(s as Any, m as Any),
      ),
      fc.tuple(id, id, scope).map(
        ([s, m, sc]) =>
          () =>
            rewind.rewindCascade(s as Any, m as Any, sc as Any),
      ),
      fc.tuple(id, id).map(
        ([s, c]) =>
          () =>
            rewind.rewindToCheckpoint(s as Any, c as Any),
      ),
      fc.tuple(id, id).map(
        ([s, m]) =>
          () =>
            rewind.previewFileRewind({ sessionId: s as Any, messageId: m as Any }),
      ),
      fc.tuple(id, id).map(
        ([s, m]) =>
          () =>
            rewind.forkAtMessage(s as Any, m as Any),
      ),
      id.map((s) => () => rewind.createSideChat(s as Any)),
      id.map((s) => () => rewind.transcript(s as Any)),
      fc.tuple(id, id, scope).map(
        ([s, m, sc]) =>
          () =>
            rewind.evaluateRewindTarget(s as Any, m as Any, sc as Any),
      ),
      fc.tuple(id, id).map(
        ([s, t]) =>
          () =>
            rewind.turnFileChanges(s as Any, t as Any),
      ),
      fc.tuple(id, id, hostileString, hostileString, content, content).map(
        ([s, t, path, tool, before, after]) =>
          () =>
            rewind.recordFileMutation({
              sessionId: s as Any,
              turnId: t as Any,
              path,
              toolName: tool,
              before,
              after,
            }),
      ),
    )
    await fc.assert(
      fc.asyncProperty(call, async (run) => {
        const outcome = await settle(run)
        expectTyped(outcome)
        tally.count(outcome.replace(/:.*/, (m) => m.slice(0, 40)))
      }),
      fuzzParameters("facade inputs", 300),
    )
    tally.report()
    expectSentinelUntouched(box)
    const report = okValue(await rewind.doctor())
    expect(report.problems).toEqual([])
    await rewind.close()
  })

  it("file names that are not UTF-8 are captured or reported, never a crash", async () => {
    const tally = fuzzTally("non-UTF-8 names")
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "names", cwd: box.root }))
    await fc.assert(
      fc.asyncProperty(
        fc
          .uint8Array({ minLength: 1, maxLength: 12 })
          .map((b) => Buffer.from(b.map((x) => (x === 0 || x === 47 ? 0xff : x)))),
        async (name) => {
          const file = Buffer.concat([Buffer.from(`${box.root}/`), name])
          if (name.toString("latin1") === "." || name.toString("latin1") === "..") return
          fs.writeFileSync(file, "raw bytes")
          const { turnId } = value(await rewind.appendUserMessage(session.id, { text: "capture" }))
          const outcome = await settle(() =>
            rewind.run(capturePoint(session.id, turnId)).then((o) => {
              tally.count(o._tag)
              return o
            }),
          )
          expectTyped(outcome)
          fs.rmSync(file, { force: true })
        },
      ),
      fuzzParameters("non-UTF-8 names", 30),
    )
    tally.report()
    expectSentinelUntouched(box)
    expect(okValue(await rewind.doctor()).problems).toEqual([])
    await rewind.close()
  })

  it("a store file with corrupted pages is refused or answers with typed errors", async () => {
    const base = await template()
    const db = join(base.box.root, ".rewind", "rewind.db")
    const size = fs.statSync(db).size
    const tally = fuzzTally("corrupted pages")
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: size - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 64,
        }),
        fc.boolean(),
        async (flips, wholePage) => {
          const box = copyOf(base.box)
          const file = join(box.root, ".rewind", "rewind.db")
          const fd = fs.openSync(file, "r+")
          for (const [offset, byte] of flips) {
            // Either single bytes or a whole 4 KiB page of one value.
            const bytes = wholePage ? Buffer.alloc(Math.min(4096, size - offset), byte) : Buffer.from([byte])
            fs.writeSync(fd, bytes, 0, bytes.length, wholePage ? offset - (offset % 4096) : offset)
          }
          fs.closeSync(fd)
          let rewind: Rewind | undefined
          const opened = await settle(async () => {
            rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic", create: false })
          })
          expectTyped(opened)
          tally.count(`open:${opened}`)
          if (rewind !== undefined) {
            await probeStore(rewind, base.sessionId, base.firstMessage, tally.count)
            const report = await settle(() => rewind!.doctor())
            expectTyped(report)
            await rewind.close()
          }
          expectSentinelUntouched(box)
        },
      ),
      fuzzParameters("corrupted pages", 40),
    )
    tally.report()
  })

  it("truncated, corrupt and missing blobs give refusals or typed errors, and doctor reports exactly them", async () => {
    const base = await template()
    const blobs = blobFiles(join(base.box.root, ".rewind", "artifacts")).length
    const tally = fuzzTally("damaged blobs")
    const damage = fc.oneof(
      fc.record({ kind: fc.constant("truncate" as const), keep: fc.nat({ max: 50 }) }),
      fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), byte: fc.integer({ min: 1, max: 255 }) }),
      fc.record({ kind: fc.constant("delete" as const) }),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat({ max: blobs - 1 }), damage), { minLength: 1, maxLength: 3 }),
        async (plan) => {
          const box = copyOf(base.box)
          const artifacts = join(box.root, ".rewind", "artifacts")
          const files = blobFiles(artifacts).sort()
          const corrupted = new Set<string>()
          const deleted = new Set<string>()
          for (const [index, d] of plan) {
            const file = files[index]!
            const hash = file.split("/").slice(-2).join("")
            if (deleted.has(hash)) continue
            fs.chmodSync(file, 0o644)
            const bytes = fs.readFileSync(file)
            if (d.kind === "delete") {
              fs.rmSync(file)
              deleted.add(hash)
              corrupted.delete(hash)
              continue
            }
            const next =
              d.kind === "truncate"
                ? bytes.subarray(0, Math.min(d.keep, Math.max(0, bytes.length - 1)))
                : Buffer.from(bytes.map((b, i) => (i === d.at % Math.max(1, bytes.length) ? b ^ d.byte : b)))
            fs.writeFileSync(file, next)
            if (hashContent(new Uint8Array(next)) !== hash) corrupted.add(hash)
          }
          const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic", create: false })
          const report = okValue(await rewind.doctor())
          expect(new Set(report.artifacts.bad.map((b) => b.hash))).toEqual(corrupted)
          const missing = new Set(
            report.problems.filter((p) => p.kind === "missing_blob").map((p) => p.subject),
          )
          for (const hash of missing) expect(deleted.has(hash)).toBe(true)
          // Every deleted blob was referenced (the template stores no garbage), so each is reported,
          // but a seal (a shortcut for the next capture: gone, it costs a scan).
          expect(missing).toEqual(new Set([...deleted].filter((h) => !base.seals.has(h))))
          const others = report.problems.filter(
            (p) => !["blob_corrupt", "missing_blob", "manifest_unreadable"].includes(p.kind),
          )
          expect(others).toEqual([])
          await probeStore(rewind, base.sessionId, base.firstMessage, tally.count)
          // A put of the same content repairs a damaged copy, so the damage can only have shrunk.
          const after = okValue(await rewind.doctor())
          for (const b of after.artifacts.bad) expect(corrupted.has(b.hash)).toBe(true)
          expectSentinelUntouched(box)
          await rewind.close()
        },
      ),
      fuzzParameters("damaged blobs", 40),
    )
    tally.report()
  })

  it("a store from a newer schema version is refused and left byte for byte unchanged", async () => {
    const base = await template()
    const tally = fuzzTally("newer schema")
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 1_000_000 }), async (ahead) => {
        const box = copyOf(base.box)
        const file = join(box.root, ".rewind", "rewind.db")
        const db = new Database(file)
        db.pragma(`user_version = ${base.schemaVersion + ahead}`)
        db.close()
        const before = fileHash(file)
        const outcome = await settle(() =>
          openRewind({ workspaceRoot: box.root, durability: "atomic", create: false }),
        )
        expect(outcome).toBe("error:StoreIncompatible")
        tally.count(outcome)
        expect(fileHash(file)).toBe(before)
        expect(fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0).toBe(0)
        expectSentinelUntouched(box)
      }),
      fuzzParameters("newer schema", 10),
    )
    tally.report()
  })
})
