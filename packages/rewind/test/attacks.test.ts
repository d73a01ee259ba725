// Attack tests (DESIGN §5, §9.9) on the embedded default (NodeWorkspace + SQLite + blob files):
// symlinks that lead outside the root met by capture and by every restore path, hostile paths
// written straight into the store (events, manifests, journal rows), a directory swapped for a
// symlink between preview and apply, and case-folding collisions. After each, a sentinel directory
// next to the root must hold exactly what it held before: nothing outside the root was written.
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { PointId, TurnId } from "@rewind/contracts"
import { PointCaptured } from "@rewind/contracts"
import {
  ArtifactStore,
  applyPointRestore,
  capturePoint,
  previewPointRestore,
  recover,
  resolveOperation,
  SessionStore,
} from "@rewind/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import {
  agentTurn,
  expectSentinelUntouched,
  type Sandbox,
  sandbox,
  treeOf,
  value,
  withBlobFiles,
} from "./storeFixture.js"

const open = (box: Sandbox) => openRewind({ workspaceRoot: box.root, durability: "atomic" })

/** Every blob's content, as text, so a test can assert nothing from outside was stored. */
const allBlobTexts = async (box: Sandbox): Promise<Array<string>> => {
  const objects = join(box.root, ".rewind", "artifacts", "objects")
  const out: Array<string> = []
  for (const shard of fs.readdirSync(objects)) {
    for (const name of fs.readdirSync(join(objects, shard))) {
      out.push(fs.readFileSync(join(objects, shard, name), "latin1"))
    }
  }
  return out
}

const failureTag = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise
  } catch (error) {
    return (error as { _tag?: string })._tag ?? "untyped"
  }
  return "succeeded"
}

/** A session with one completed turn, for tests that need a turn id to capture under. */
const sessionWithTurn = async (rewind: Rewind, root: string) => {
  const session = value(await rewind.createSession({ title: "attack", cwd: root }))
  const { turnId } = value(await rewind.appendUserMessage(session.id, { text: "go" }))
  return { sessionId: session.id, turnId }
}

/** A point with `sub/secret.txt`, after which `sub` is replaced by a symlink to `target`. */
const subBecomesLink = async (box: Sandbox, target: string) => {
  fs.mkdirSync(join(box.root, "sub"))
  fs.writeFileSync(join(box.root, "sub", "secret.txt"), "captured inside")
  const rewind = await open(box)
  const { sessionId, turnId } = await sessionWithTurn(rewind, box.root)
  const outcome = await rewind.run(capturePoint(sessionId, turnId))
  if (outcome._tag !== "Captured") throw new Error(outcome.reason)
  fs.rmSync(join(box.root, "sub"), { recursive: true })
  fs.symlinkSync(target, join(box.root, "sub"))
  return { rewind, sessionId, pointId: outcome.point.pointId }
}

describe("symlinks that lead outside the root", () => {
  it("capture records them as links and never reads what they point to", async () => {
    const box = withBlobFiles(sandbox())
    fs.writeFileSync(join(box.root, "real.txt"), "inside")
    fs.symlinkSync("../outside", join(box.root, "out"))
    fs.symlinkSync("../outside/secret.txt", join(box.root, "leak.txt"))
    fs.symlinkSync(join(box.sentinel, "secret.txt"), join(box.root, "abs-leak.txt"))
    const rewind = await open(box)
    const { sessionId, turnId } = await sessionWithTurn(rewind, box.root)
    const outcome = await rewind.run(capturePoint(sessionId, turnId))
    expect(outcome._tag).toBe("Captured")
    if (outcome._tag !== "Captured") return
    expect(outcome.point.links).toBe(3)
    expect(outcome.point.files).toBe(1)
    const texts = await allBlobTexts(box)
    expect(texts).toContain("inside")
    expect(texts.some((t) => t.includes("do not touch"))).toBe(false)
    expectSentinelUntouched(box)
    await rewind.close()
  })

  it("a checkpoint restore through a directory symlinked outside is refused", async () => {
    const box = sandbox()
    const rewind = await open(box)
    const session = value(await rewind.createSession({ title: "attack", cwd: box.root }))
    fs.mkdirSync(join(box.root, "sub"))
    fs.writeFileSync(join(box.root, "sub", "secret.txt"), "mine")
    const { messageId } = await agentTurn(rewind, session.id, "sub/secret.txt", "agent")
    // The directory is replaced by a symlink to the sentinel, which has a file of the same name.
    fs.rmSync(join(box.root, "sub"), { recursive: true })
    fs.symlinkSync("../outside", join(box.root, "sub"))
    const outcome = await rewind.rewindToMessageCheckpoint(session.id, messageId)
    expect(outcome.ok).toBe(false)
    if (outcome.ok) return
    expect(outcome.refusal.kind).toBe("unavailable")
    // The refusal names the symlink that leads out, not the file behind it.
    expect(outcome.refusal.message).toMatch(/the symlink "sub" climbs above the root/)
    expectSentinelUntouched(box)
    await rewind.close()
  })

  it("a point restore through a directory symlinked outside keeps the link and the point's paths beneath it, and writes nothing through it", async () => {
    const box = sandbox()
    const { rewind, sessionId, pointId } = await subBecomesLink(box, "../outside")
    const planned = value(await rewind.outcome(previewPointRestore(sessionId, pointId)))
    // No restore takes away a link leading out of the root (its redo could not make it again), so
    // what the point has beneath it is kept, named for why; it no longer refuses the whole restore.
    expect(planned.conflicts).toEqual([])
    expect(planned.changes).toEqual([])
    expect(planned.protected).toEqual([
      expect.objectContaining({ path: "sub/secret.txt", kind: "escaping_link" }),
    ])
    // A made-up token is refused; the preview's own writes nothing through the link.
    expect((await rewind.outcome(applyPointRestore(sessionId, pointId, "rwt1.forged"))).ok).toBe(false)
    value(await rewind.outcome(applyPointRestore(sessionId, pointId, planned.token!)))
    expect(fs.readlinkSync(join(box.root, "sub"))).toBe("../outside")
    expectSentinelUntouched(box)
    await rewind.close()
  })

  it("a point restore where a directory became a symlink to another directory of the tree takes the link away, never writes through it, and redo puts it back", async () => {
    const box = sandbox()
    fs.mkdirSync(join(box.root, "shared"))
    fs.writeFileSync(join(box.root, "shared", "secret.txt"), "the link's target")
    const { rewind, sessionId, pointId } = await subBecomesLink(box, "shared")
    const planned = value(await rewind.outcome(previewPointRestore(sessionId, pointId)))
    // The point has sub/secret.txt, so no file or link at `sub`: the link is in the way, and goes
    // as a link (its target is the rescue point's), before the directory is made again.
    expect(planned.conflicts).toEqual([])
    expect(planned.changes.map((c) => [c.path, c.action]).sort()).toEqual([
      ["sub", "delete"],
      ["sub/secret.txt", "write"],
    ])
    value(await rewind.outcome(applyPointRestore(sessionId, pointId, planned.token!)))
    expect(fs.lstatSync(join(box.root, "sub")).isDirectory()).toBe(true)
    expect(fs.readFileSync(join(box.root, "sub", "secret.txt"), "utf8")).toBe("captured inside")
    expect(fs.readFileSync(join(box.root, "shared", "secret.txt"), "utf8")).toBe("the link's target")
    value(await rewind.redo(sessionId))
    expect(fs.readlinkSync(join(box.root, "sub"))).toBe("shared")
    expect(fs.readFileSync(join(box.root, "shared", "secret.txt"), "utf8")).toBe("the link's target")
    expectSentinelUntouched(box)
    await rewind.close()
  })

  it("a directory swapped for a symlink between preview and apply (TOCTOU) writes nothing outside", async () => {
    const box = sandbox()
    const rewind = await open(box)
    const session = value(await rewind.createSession({ title: "toctou", cwd: box.root }))
    fs.mkdirSync(join(box.root, "sub"))
    fs.writeFileSync(join(box.root, "sub", "f.txt"), "v1")
    const { turnId } = await agentTurn(rewind, session.id, "sub/f.txt", "v2")
    const preview = value(await rewind.previewFileRewind({ sessionId: session.id, turnId }))
    expect(preview.canApply).toBe(true)
    // The attacker prepares a look-alike outside (same content, so a hash re-check would pass if
    // the symlink were followed) and swaps the directory for a symlink to it.
    const trap = join(box.sentinel, "trap")
    fs.mkdirSync(trap)
    fs.writeFileSync(join(trap, "f.txt"), "v2")
    fs.renameSync(join(box.root, "sub"), join(box.root, "sub-moved"))
    fs.symlinkSync("../outside/trap", join(box.root, "sub"))
    const before = treeOf(box.sentinel)
    const applied = await rewind.applyFileRewind(preview).catch((e) => ({ ok: false as const, error: e }))
    expect(applied.ok).toBe(false)
    expect("refusal" in applied && applied.refusal.kind).toBe("unsafe_files")
    expect(treeOf(box.sentinel)).toEqual(before)
    expect(fs.readFileSync(join(box.root, "sub-moved", "f.txt"), "utf8")).toBe("v2")
    await rewind.close()
  })
})

describe("hostile paths written straight into the store", () => {
  /** Copies the last CheckpointCreated row of a session with its path replaced, as the next event. */
  const forgeCheckpointPath = (box: Sandbox, sessionId: string, path: string) => {
    const db = new Database(join(box.root, ".rewind", "rewind.db"))
    try {
      const row = db
        .prepare(
          "select type, version, payload from events where session_id = ? and type = 'CheckpointCreated' order by sequence desc limit 1",
        )
        .get(sessionId) as { type: string; version: number; payload: string }
      const payload = JSON.parse(row.payload)
      payload.checkpoint.path = path
      payload.checkpoint.checkpointId = `forged-${Math.abs(path.length)}`
      const next =
        (db
          .prepare("select max(sequence) from events where session_id = ?")
          .pluck()
          .get(sessionId) as number) + 1
      db.prepare(
        "insert into events (session_id, sequence, type, version, payload, at) values (?, ?, ?, ?, ?, 1)",
      ).run(sessionId, next, row.type, row.version, JSON.stringify(payload))
      db.prepare("update streams set version = ? where session_id = ?").run(next, sessionId)
    } finally {
      db.close()
    }
  }

  for (const hostile of [
    "../outside/secret.txt",
    "/etc/hostname",
    "sub/../../outside/secret.txt",
    "a\u0000b",
  ]) {
    it(`a checkpoint event with the path ${JSON.stringify(hostile)} is refused as undecodable, and doctor names it`, async () => {
      const box = sandbox()
      const rewind = await open(box)
      const session = value(await rewind.createSession({ title: "forged", cwd: box.root }))
      const { messageId } = await agentTurn(rewind, session.id, "a.txt", "agent")
      await rewind.close()
      forgeCheckpointPath(box, session.id, hostile)
      const reopened = await open(box)
      expect(await failureTag(reopened.rewindToMessageCheckpoint(session.id, messageId))).toBe(
        "EventDecodeError",
      )
      expect(await failureTag(reopened.rewindCascade(session.id, messageId, "workspace"))).toBe(
        "EventDecodeError",
      )
      const report = okValue(await reopened.doctor())
      expect(report.problems.map((p) => p.kind)).toEqual(["stream_unreadable"])
      expectSentinelUntouched(box)
      expect(fs.readFileSync(join(box.root, "a.txt"), "utf8")).toBe("agent")
      await reopened.close()
    })
  }

  it("a manifest with paths that climb out of the root is unreadable, never restored", async () => {
    const box = sandbox()
    const rewind = await open(box)
    const { sessionId, turnId } = await sessionWithTurn(rewind, box.root)
    const manifestHash = await rewind.run(
      Effect.gen(function* () {
        const artifacts = yield* ArtifactStore
        const content = yield* artifacts.put(new TextEncoder().encode("pwned"))
        const manifest = {
          format: "rewind-manifest/1",
          entries: [
            ["../outside/secret.txt", { kind: "file", hash: content, mode: 420, size: 5 }],
            ["/tmp/evil", { kind: "file", hash: content, mode: 420, size: 5 }],
          ],
        }
        return yield* artifacts.put(new TextEncoder().encode(JSON.stringify(manifest)))
      }),
    )
    await rewind.run(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const version = yield* store.version(sessionId)
        yield* store.append({
          sessionId,
          expectedVersion: version,
          at: 1,
          events: [
            new PointCaptured({
              pointId: "p-evil" as PointId,
              kind: "turn",
              turnId: turnId as TurnId,
              manifestHash,
              reusedManifest: false,
              files: 2,
              links: 0,
              tombstones: 0,
              bytes: 10,
              skipped: [],
              capturedAt: 1,
            }),
          ],
        })
      }),
    )
    const preview = await rewind
      .outcome(previewPointRestore(sessionId, "p-evil" as PointId))
      .catch((e) => ({ ok: false as const, error: e }))
    expect(preview.ok).toBe(false)
    const report = okValue(await rewind.doctor())
    expect(report.problems.map((p) => p.kind)).toEqual(["manifest_unreadable"])
    expectSentinelUntouched(box)
    await rewind.close()
  })

  it("a journal row with a hostile path is not recovered into the filesystem", async () => {
    const box = sandbox()
    const rewind = await open(box)
    const session = value(await rewind.createSession({ title: "journal", cwd: box.root }))
    await rewind.close()
    const db = new Database(join(box.root, ".rewind", "rewind.db"))
    const intent = {
      operationId: "op-evil",
      sessionId: session.id,
      kind: "cascade",
      files: [
        {
          path: "../outside/secret.txt",
          rescue: { _tag: "absent" },
          planned: { _tag: "absent" },
        },
      ],
      startedAt: 1,
    }
    const { lastInsertRowid } = db
      .prepare(
        "insert into operations (operation_id, session_id, kind, status, started_at, redo_available, redo_consumed) values ('op-evil', ?, 'cascade', 'pending', 1, 0, 0)",
      )
      .run(session.id)
    db.prepare("insert into operation_intents (seq, intent) values (?, ?)").run(
      lastInsertRowid,
      JSON.stringify(intent),
    )
    db.close()
    const reopened = await open(box)
    // The row does not decode (its path is not a workspace path): it is listed as damaged, named,
    // never read as a plan, and nothing is written.
    const pending = await reopened.run(recover())
    expect(pending.map((op) => [op.record.intent.operationId, op.resolvable, op.files.length])).toEqual([
      ["op-evil", false, 0],
    ])
    expect(pending[0]!.damaged).toMatch(/op-evil.*files\.0\.path/)
    const resolved = await reopened
      .outcome(resolveOperation("op-evil" as never, "rollback" as never))
      .catch((e) => ({ ok: false as const, error: e }))
    expect(resolved.ok).toBe(false)
    const report = okValue(await reopened.doctor())
    expect(report.problems.map((p) => p.kind)).toEqual(["journal_unreadable"])
    expectSentinelUntouched(box)
    await reopened.close()
  })
})

describe("case-folding collisions", () => {
  it("A.txt and a.txt are two paths: each restores its own content (case-sensitive filesystem)", async () => {
    const box = sandbox()
    // On a case-insensitive filesystem the two names are one file; this test documents the
    // case-sensitive behaviour and is skipped elsewhere (see docs/reliability.md).
    fs.writeFileSync(join(box.root, "probe"), "")
    const caseInsensitive = fs.existsSync(join(box.root, "PROBE"))
    if (caseInsensitive) return
    const rewind = await open(box)
    const session = value(await rewind.createSession({ title: "case", cwd: box.root }))
    const first = await agentTurn(rewind, session.id, "A.txt", "upper")
    await agentTurn(rewind, session.id, "a.txt", "lower")
    await agentTurn(rewind, session.id, "A.txt", "upper 2")
    value(await rewind.rewindCascade(session.id, first.messageId, "workspace"))
    expect(fs.existsSync(join(box.root, "A.txt"))).toBe(false)
    expect(fs.existsSync(join(box.root, "a.txt"))).toBe(false)
    expectSentinelUntouched(box)
    await rewind.close()
  })
})
