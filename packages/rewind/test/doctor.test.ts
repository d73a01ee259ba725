// `doctor` on the embedded default: one test per problem it detects (each injected on purpose into
// an otherwise healthy store) and per repair, and that a repair removes only what is safe.
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  type ContentHash,
  type OperationId,
  PointCaptured,
  type PointId,
  Session,
  SessionCreated,
  type SessionId,
  type TraceId,
  type TurnId,
} from "@rewind/contracts"
import { ArtifactStore, hashContent, OperationJournal, SessionStore } from "@rewind/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { type DoctorReport, openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import { agentTurn, blobPath, sandbox, value, withBlobFiles } from "./storeFixture.js"

const healthy = async () => {
  const box = withBlobFiles(sandbox())
  const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
  const session = value(await rewind.createSession({ title: "doctor", cwd: box.root }))
  await agentTurn(rewind, session.id, "a.txt", "first")
  await agentTurn(rewind, session.id, "a.txt", "second")
  const artifacts = join(box.root, ".rewind", "artifacts")
  return { box, rewind, session, artifacts }
}

const kinds = (report: DoctorReport) => report.problems.map((p) => p.kind)

const appendRaw = (
  rewind: Rewind,
  sessionId: string,
  events: ReadonlyArray<SessionCreated | PointCaptured>,
) =>
  rewind.run(
    Effect.gen(function* () {
      const store = yield* SessionStore
      const version = yield* store.version(sessionId as SessionId)
      yield* store.append({ sessionId: sessionId as SessionId, expectedVersion: version, events, at: 1 })
    }),
  )

describe("doctor", () => {
  it("passes a healthy store and follows its references", async () => {
    const { rewind } = await healthy()
    const report = okValue(await rewind.doctor())
    expect(report.problems).toEqual([])
    expect(report.ok).toBe(true)
    expect(report.schemaVersion).toBeGreaterThan(0)
    expect(report.references.sessions).toBe(1)
    // Two checkpoints: before/after/patch each (the first has no before).
    expect(report.references.checked).toBeGreaterThanOrEqual(5)
    expect(report.artifacts.checked).toBeGreaterThan(0)
    await rewind.close()
  })

  it("passes a healthy store on the default layout (blobs in the SQLite file)", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "doctor", cwd: box.root }))
    await agentTurn(rewind, session.id, "a.txt", "first")
    const report = okValue(await rewind.doctor())
    expect(report.problems).toEqual([])
    expect(report.artifacts.checked).toBeGreaterThan(0)
    expect(report.references.checked).toBeGreaterThan(0)
    await rewind.close()
  })

  it("reports a blob whose bytes no longer hash to its address", async () => {
    const { rewind, artifacts } = await healthy()
    const file = blobPath(artifacts, hashContent(new TextEncoder().encode("first")))
    fs.chmodSync(file, 0o644)
    fs.writeFileSync(file, "rotten")
    const report = okValue(await rewind.doctor())
    expect(report.ok).toBe(false)
    expect(kinds(report)).toEqual(["blob_corrupt"])
    expect(report.artifacts.bad.map((b) => b.hash)).toEqual([hashContent(new TextEncoder().encode("first"))])
    await rewind.close()
  })

  it("reports a checkpoint whose content blob is missing", async () => {
    const { rewind, artifacts } = await healthy()
    const hash = hashContent(new TextEncoder().encode("second"))
    fs.rmSync(blobPath(artifacts, hash))
    const report = okValue(await rewind.doctor())
    expect(kinds(report)).toEqual(["missing_blob"])
    expect(report.problems[0]!.subject).toBe(hash)
    expect(report.problems[0]!.message).toMatch(/checkpoint/)
    await rewind.close()
  })

  it("reports a point whose manifest is missing, or is not a manifest, and a missing file of a manifest", async () => {
    const { rewind, session } = await healthy()
    const garbage = await rewind.run(
      Effect.flatMap(ArtifactStore, (a) => a.put(new TextEncoder().encode("not a manifest"))),
    )
    const point = (id: string, manifestHash: string) =>
      new PointCaptured({
        pointId: id as PointId,
        kind: "turn",
        turnId: "t-x" as TurnId,
        manifestHash: manifestHash as ContentHash,
        reusedManifest: false,
        files: 0,
        links: 0,
        tombstones: 0,
        bytes: 0,
        skipped: [],
        capturedAt: 1,
      })
    const missing = "cd".repeat(32)
    await appendRaw(rewind, session.id, [point("p-1", missing), point("p-2", garbage)])
    const report = okValue(await rewind.doctor())
    expect(kinds(report).sort()).toEqual(["manifest_unreadable", "missing_blob"])
    expect(report.problems.find((p) => p.kind === "missing_blob")!.subject).toBe(missing)
    // A well-formed manifest naming a blob that is not there.
    const { encodeManifest } = await import("@rewind/core")
    const real = await rewind.run(
      Effect.flatMap(ArtifactStore, (a) =>
        a.put(
          encodeManifest(
            new Map([
              ["gone.txt", { kind: "file", hash: "ab".repeat(32) as ContentHash, mode: 420, size: 3 }],
            ]) as never,
          ),
        ),
      ),
    )
    await appendRaw(rewind, session.id, [point("p-3", real)])
    const again = okValue(await rewind.doctor())
    const gone = again.problems.find((p) => p.subject === "ab".repeat(32))
    expect(gone?.kind).toBe("missing_blob")
    expect(gone?.message).toMatch(/manifest of point p-3/)
    await rewind.close()
  })

  it("reports a child session whose parent is not in the store", async () => {
    const { rewind } = await healthy()
    const orphan = new SessionCreated({
      session: new Session({
        id: "child-1" as SessionId,
        parentId: "no-such-parent" as SessionId,
        rootTraceId: "trace-1" as TraceId,
        kind: "fork",
        title: "orphan",
        cwd: "/",
        createdAt: 1,
      }),
    })
    await appendRaw(rewind, "child-1", [orphan])
    const report = okValue(await rewind.doctor())
    expect(kinds(report)).toEqual(["missing_parent"])
    expect(report.problems[0]!.subject).toBe("child-1")
    await rewind.close()
  })

  it("reports a stream that no longer decodes", async () => {
    const { box, rewind, session } = await healthy()
    await rewind.close()
    const db = new Database(join(box.root, ".rewind", "rewind.db"))
    const next =
      (db
        .prepare("select max(sequence) from events where session_id = ?")
        .pluck()
        .get(session.id) as number) + 1
    db.prepare(
      "insert into events (session_id, sequence, type, version, payload, at) values (?, ?, 'MessageAppended', 1, '{\"broken\":', 1)",
    ).run(session.id, next)
    db.prepare("update streams set version = ? where session_id = ?").run(next, session.id)
    db.close()
    const reopened = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const report = okValue(await reopened.doctor())
    expect(kinds(report)).toEqual(["stream_unreadable"])
    expect(report.problems[0]!.subject).toBe(session.id)
    await reopened.close()
  })

  it("reports an operation begun and never completed, and the content it needs", async () => {
    const { rewind, session } = await healthy()
    const lost = "ef".repeat(32) as ContentHash
    await rewind.run(
      Effect.flatMap(OperationJournal, (journal) =>
        journal.begin({
          operationId: "op-1" as OperationId,
          sessionId: session.id,
          kind: "cascade",
          files: [
            {
              path: "a.txt" as never,
              rescue: { _tag: "present", hash: lost },
              planned: { _tag: "absent" },
            },
          ],
          startedAt: 1,
        }),
      ),
    )
    const report = okValue(await rewind.doctor())
    expect(kinds(report).sort()).toEqual(["incomplete_operation", "missing_blob"])
    expect(report.journal).toEqual({ operations: 1, incomplete: 1 })
    expect(report.problems.find((p) => p.kind === "incomplete_operation")!.subject).toBe("op-1")
    // Repair does not touch the journal: that is recover()'s decision.
    const repaired = okValue(await rewind.doctor({ repair: true }))
    expect(kinds(repaired).sort()).toEqual(["incomplete_operation", "missing_blob"])
    expect(repaired.repaired).toEqual([])
    await rewind.close()
  })

  it("repairs orphan temp files and only those: young temp files and stray files are left", async () => {
    const { rewind, artifacts } = await healthy()
    const tmp = join(artifacts, "tmp")
    const old = join(tmp, ".abc.1111.tmp")
    const young = join(tmp, ".abc.2222.tmp")
    fs.writeFileSync(old, "half a blob")
    fs.writeFileSync(young, "a blob being written")
    const hour = Date.now() / 1000 - 3600
    fs.utimesSync(old, hour, hour)
    const shard = fs.readdirSync(join(artifacts, "objects"))[0]!
    const stray = join(artifacts, "objects", shard, "notes.txt")
    fs.writeFileSync(stray, "someone's file")

    const report = okValue(await rewind.doctor())
    expect(kinds(report).sort()).toEqual(["orphan_temp_file", "stray_file"])
    expect(report.tempFiles).toEqual({ orphans: 1, removed: 0, inFlight: 1 })
    expect(report.problems.find((p) => p.kind === "orphan_temp_file")).toMatchObject({
      subject: old,
      repairable: true,
    })
    expect(fs.existsSync(old)).toBe(true)

    const repaired = okValue(await rewind.doctor({ repair: true }))
    expect(repaired.repaired).toEqual([`removed orphan temp file ${old}`])
    expect(repaired.tempFiles).toEqual({ orphans: 1, removed: 1, inFlight: 1 })
    expect(kinds(repaired)).toEqual(["stray_file"])
    expect(fs.existsSync(old)).toBe(false)
    expect(fs.existsSync(young)).toBe(true)
    expect(fs.existsSync(stray)).toBe(true)

    fs.rmSync(stray)
    const clean = okValue(await rewind.doctor())
    expect(clean.ok).toBe(true)
    await rewind.close()
  })

  it("reports SQLite's own integrity problems", async () => {
    const { box, rewind } = await healthy()
    await rewind.close()
    // An index entry removed behind SQLite's back: integrity_check notices the table/index mismatch.
    const db = new Database(join(box.root, ".rewind", "rewind.db"))
    const index = db
      .prepare("select name from sqlite_schema where type = 'index' and tbl_name = 'events' and sql is null")
      .pluck()
      .get() as string | undefined
    expect(index).toBeDefined()
    const rootPage = db
      .prepare("select rootpage from sqlite_schema where name = ?")
      .pluck()
      .get(index) as number
    db.close()
    // Zero the index's root page on disk: the table is intact, its index is not.
    const file = join(box.root, ".rewind", "rewind.db")
    const pageSize = 4096
    const fd = fs.openSync(file, "r+")
    const header = Buffer.alloc(100)
    fs.readSync(fd, header, 0, 100, 0)
    const size = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16) || pageSize
    const page = Buffer.alloc(size)
    // A leaf index page with no cells and an impossible cell count.
    page[0] = 0x0a
    page.writeUInt16BE(0xffff, 3)
    fs.writeSync(fd, page, 0, size, (rootPage - 1) * size)
    fs.closeSync(fd)
    const reopened = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const report = okValue(await reopened.doctor())
    expect(report.ok).toBe(false)
    expect(report.database?.ok).toBe(false)
    expect(kinds(report)).toContain("database_integrity")
    await reopened.close()
  })
})
