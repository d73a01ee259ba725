// Honest store health through the facade (issue 21 items 4–10, issue 20 item 7): what the store
// says about itself matches what is on disk, and what it refuses it leaves untouched.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { OperationId, WorkspacePath } from "@rewind/contracts"
import { hashContent, OperationJournal } from "@rewind/core"
import { injectCheckpoint } from "@rewind/testkit"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import { blobPath, expectSentinelUntouched, sandbox, value, withBlobFiles } from "./storeFixture.js"

describe("a checkpoint path over the system's limits (item 7)", () => {
  it("is refused before anything is created: no directories, no incomplete operation, doctor clean", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    try {
      const session = value(await rewind.createSession({ title: "long", cwd: box.root }))
      const { turnId } = value(await rewind.appendUserMessage(session.id, { text: "write" }))
      // A valid WorkspacePath of 4,082 characters: over PATH_MAX once put under the root.
      const path = [...Array.from({ length: 27 }, () => "d".repeat(150)), "f.txt"].join("/")
      const recorded = okValue(
        await rewind.recordFileMutation({
          sessionId: session.id,
          turnId,
          path,
          toolName: "write",
          before: "old\n",
          after: "new\n",
        }),
      )
      // Refused at the door: it could never be written back.
      expect(recorded.recorded).toBe(false)
      if (!recorded.recorded) expect(recorded.warning.reason).toBe("path_refused")
      // A record already in the store (an older version let it in) is refused where it would be
      // written, before anything is created.
      const checkpoint = await rewind.run(
        injectCheckpoint({ sessionId: session.id, turnId, path, before: "old\n", after: "new\n" }),
      )
      const result = await rewind.rewindToCheckpoint(session.id, checkpoint.checkpointId)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.refusal.message).toMatch(/longer|bytes long/)
      expect(fs.readdirSync(box.root)).toEqual([".rewind"])
      expect(okValue(await rewind.recover())).toEqual([])
      const report = okValue(await rewind.doctor())
      expect(report.problems).toEqual([])
    } finally {
      await rewind.close()
    }
  })
})

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ _tag: "resolved" }) as Record<string, unknown>,
    (error: unknown) => error as Record<string, unknown>,
  )

describe("an empty or missing rewind.db is no store (item 4)", () => {
  it("missing: every open but a creating one fails StoreMissing and creates nothing", async () => {
    const box = sandbox()
    const error = await failureOf(openRewind({ workspaceRoot: box.root, create: false }))
    expect(error._tag).toBe("StoreMissing")
    expect(fs.readdirSync(box.root)).toEqual([])
  })

  it("0 bytes: StoreMissing without create, StoreRefused(empty_file) with it; the file stays 0 bytes", async () => {
    const box = sandbox()
    const dir = join(box.root, ".rewind")
    fs.mkdirSync(dir)
    const db = join(dir, "rewind.db")
    fs.writeFileSync(db, "")
    const missing = await failureOf(openRewind({ workspaceRoot: box.root, create: false }))
    expect(missing._tag).toBe("StoreMissing")
    expect(String(missing.message)).toMatch(/empty \(0 bytes\)/)
    const refused = await failureOf(openRewind({ workspaceRoot: box.root }))
    expect(refused).toMatchObject({ _tag: "StoreRefused", reason: "empty_file", path: db })
    expect(String(refused.message)).toMatch(/delete it.*rewind init/)
    expect(fs.readdirSync(dir)).toEqual(["rewind.db"])
    expect(fs.statSync(db).size).toBe(0)
  })
})

describe("a workspace root that is no directory", () => {
  it("missing, a file, or below a file: WorkspaceUnusable, and nothing is created", async () => {
    const box = sandbox()
    const missing = join(box.base, "no-such-project")
    const file = join(box.base, "a-file")
    fs.writeFileSync(file, "x")
    for (const [root, reason] of [
      [missing, "missing"],
      [join(missing, "deeper"), "missing"],
      [file, "not_a_directory"],
      [join(file, "below"), "missing"],
    ] as const) {
      for (const create of [true, false]) {
        const error = await failureOf(openRewind({ workspaceRoot: root, create }))
        expect(error).toMatchObject({ _tag: "WorkspaceUnusable", reason, path: root })
      }
    }
    expect(fs.existsSync(missing)).toBe(false)
    expect(fs.readFileSync(file, "utf8")).toBe("x")
    // A root reached through a link to a directory is that directory.
    const link = join(box.base, "link")
    fs.symlinkSync(box.root, link)
    await (await openRewind({ workspaceRoot: link })).close()
    expect(fs.existsSync(join(box.root, ".rewind", "rewind.db"))).toBe(true)
  })
})

describe("no store is made for a workspace at the home directory or the filesystem root", () => {
  // The rule lives in the embedded default's layer, so a host's `openRewind` meets it as the CLI's
  // `init`, the hooks and `serve --create` do (cli.broadWorkspace.e2e.test.ts drives those).
  const atHome = async <A>(home: string, body: () => Promise<A>): Promise<A> => {
    const saved = process.env.HOME
    process.env.HOME = home
    try {
      return await body()
    } finally {
      if (saved === undefined) delete process.env.HOME
      else process.env.HOME = saved
    }
  }

  it("openRewind refuses too_broad and creates nothing; allowBroadWorkspace makes it; a made store opens", async () => {
    const box = sandbox()
    const home = box.root
    await atHome(home, async () => {
      const refused = await failureOf(openRewind({ workspaceRoot: home }))
      expect(refused).toMatchObject({
        _tag: "StoreRefused",
        reason: "too_broad",
        path: join(home, ".rewind", "rewind.db"),
      })
      expect(String(refused.message)).toMatch(/is your home directory.*allowBroadWorkspace/)
      expect(fs.readdirSync(home)).toEqual([])
      // Not asked to create: the store is simply missing.
      expect((await failureOf(openRewind({ workspaceRoot: home, create: false })))._tag).toBe("StoreMissing")
      // A project below the home directory is an ordinary workspace.
      const project = join(home, "project")
      fs.mkdirSync(project)
      await (await openRewind({ workspaceRoot: project })).close()
      expect(fs.existsSync(join(project, ".rewind", "rewind.db"))).toBe(true)
      // Asked in so many words, it is made; once made, it is opened without asking again.
      await (await openRewind({ workspaceRoot: home, allowBroadWorkspace: true })).close()
      const reopened = await openRewind({ workspaceRoot: home })
      value(await reopened.createSession({ title: "home", cwd: home }))
      await reopened.close()
    })
  })

  it("the filesystem root is refused the same way, before anything is written there", async () => {
    expect(fs.existsSync("/.rewind")).toBe(false)
    const refused = await failureOf(openRewind({ workspaceRoot: "/" }))
    expect(refused).toMatchObject({ _tag: "StoreRefused", reason: "too_broad" })
    expect(String(refused.message)).toMatch(/is the filesystem root/)
    expect(fs.existsSync("/.rewind")).toBe(false)
  })
})

describe("the store is not opened through a symlink (issue 20 item 7)", () => {
  it("a .rewind that is a link is refused: nothing is created at its target", async () => {
    const box = sandbox()
    const target = join(box.base, "elsewhere")
    fs.mkdirSync(target)
    fs.symlinkSync(target, join(box.root, ".rewind"))
    for (const create of [true, false]) {
      const error = await failureOf(openRewind({ workspaceRoot: box.root, create }))
      expect(error).toMatchObject({
        _tag: "StoreRefused",
        reason: "symlink",
        path: join(box.root, ".rewind"),
      })
    }
    expect(fs.readdirSync(target)).toEqual([])
  })

  it.each(["rewind.db", "rewind.db-wal", "rewind.db-shm"])(
    "a %s that is a link is refused, in the default directory and in a named one",
    async (name) => {
      const box = sandbox()
      const outside = join(box.sentinel, "secret.txt")
      for (const dir of [join(box.root, ".rewind"), join(box.base, "named")]) {
        // A real store first, so the database file itself exists beside the link.
        if (name !== "rewind.db") await (await openRewind({ workspaceRoot: box.root, dir })).close()
        fs.mkdirSync(dir, { recursive: true })
        fs.rmSync(join(dir, name), { force: true })
        fs.symlinkSync(outside, join(dir, name))
        const named = dir.endsWith("named") ? { dir } : {}
        const error = await failureOf(openRewind({ workspaceRoot: box.root, ...named }))
        expect(error).toMatchObject({ _tag: "StoreRefused", reason: "symlink", path: join(dir, name) })
      }
      expectSentinelUntouched(box)
    },
  )

  it("a dir the host names is used as named, even through a link", async () => {
    const box = sandbox()
    const real = join(box.base, "real-store")
    fs.mkdirSync(real)
    const link = join(box.base, "store-link")
    fs.symlinkSync(real, link)
    const rewind = await openRewind({ workspaceRoot: box.root, dir: link })
    value(await rewind.createSession({ title: "named", cwd: box.root }))
    await rewind.close()
    expect(fs.readdirSync(real)).toContain("rewind.db")
  })
})

describe("doctor after a cleanup with retention (item 6)", () => {
  it("does not report the content of released points as missing; live content missing still is", async () => {
    const box = withBlobFiles(sandbox())
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    try {
      const session = value(await rewind.createSession({ title: "gc", cwd: box.root }))
      for (let n = 1; n <= 4; n++) {
        fs.writeFileSync(join(box.root, "a.txt"), `version ${n}\n`)
        fs.writeFileSync(join(box.root, `only-${n}.txt`), `only in point ${n}\n`)
        if (n > 1) fs.rmSync(join(box.root, `only-${n - 1}.txt`))
        const { turnId } = value(await rewind.appendUserMessage(session.id, { text: `turn ${n}` }))
        const captured = okValue(await rewind.capturePoint(session.id, turnId))
        expect(captured._tag).toBe("Captured")
      }
      const report = okValue(await rewind.cleanup({ retention: { keepLastPoints: 2 }, graceMs: 0 }))
      expect(report.swept).toBe(true)
      expect(report.releasedPoints).toHaveLength(2)
      expect(report.deleted.length).toBeGreaterThan(0)
      const after = okValue(await rewind.doctor())
      expect(after.problems).toEqual([])
      expect(after.ok).toBe(true)
      expect(after.references.releasedPoints).toBe(2)
      // Content the newest point needs is live: losing it is a problem.
      fs.rmSync(
        blobPath(
          join(box.root, ".rewind", "artifacts"),
          hashContent(new TextEncoder().encode("version 4\n")),
        ),
      )
      const lost = okValue(await rewind.doctor())
      expect(lost.problems.map((p) => p.kind)).toEqual(["missing_blob"])
    } finally {
      await rewind.close()
    }
  })
})

describe("one damaged journal row (item 9)", () => {
  it("recover lists the other operations and names the damaged one; doctor names it too", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "journal", cwd: box.root }))
    const begin = (id: string, startedAt: number) =>
      rewind.run(
        Effect.flatMap(OperationJournal, (journal) =>
          journal.begin({
            operationId: id as OperationId,
            sessionId: session.id,
            kind: "direct_restore",
            files: [
              { path: "a.txt" as WorkspacePath, rescue: { _tag: "absent" }, planned: { _tag: "absent" } },
            ],
            startedAt,
          }),
        ),
      )
    await begin("op_first", 1)
    await begin("op_damaged", 2)
    await begin("op_last", 3)
    await rewind.close()
    const db = new Database(join(box.root, ".rewind", "rewind.db"))
    db.prepare(
      "update operation_intents set intent = ? where seq = (select seq from operations where operation_id = 'op_damaged')",
    ).run(
      JSON.stringify({
        operationId: "op_damaged",
        sessionId: session.id,
        kind: "direct_restore",
        files: [{ path: 42 }],
        startedAt: 2,
      }),
    )
    db.close()

    const reopened = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    try {
      const pending = okValue(await reopened.recover())
      expect(
        pending.map((op) => [op.record.intent.operationId, op.resolvable, op.damaged === undefined]),
      ).toEqual([
        ["op_first", true, true],
        ["op_last", true, true],
        ["op_damaged", false, false],
      ])
      const damaged = pending[2]!.damaged!
      // One sentence naming the row and the field, not a schema dump.
      expect(damaged).toMatch(/operation_intents row of operation op_damaged.*field files\.0\.path/)
      expect(damaged.length).toBeLessThan(400)
      const report = okValue(await reopened.doctor())
      expect(report.problems.map((p) => [p.kind, p.subject])).toEqual([
        ["journal_unreadable", "op_damaged"],
        ["incomplete_operation", "op_first"],
        ["incomplete_operation", "op_last"],
      ])
      expect(report.journal).toEqual({ operations: 3, incomplete: 3 })
      // Resolving it is a refusal naming the damage, and writes nothing.
      const resolved = await reopened.resolveOperation("op_damaged" as OperationId, "rollback")
      expect(resolved.ok).toBe(false)
      if (!resolved.ok) {
        expect(resolved.refusal.kind).toBe("conflict")
        expect(resolved.refusal.message).toMatch(/op_damaged does not decode.*nothing was written/)
      }
      expect(fs.readdirSync(box.root)).toEqual([".rewind"])
    } finally {
      await reopened.close()
    }
  })
})

describe("a bad event row (item 10)", () => {
  it("is named by its row and field in one sentence, not a schema dump", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "bad row", cwd: box.root }))
    value(await rewind.appendUserMessage(session.id, { text: "x".repeat(50_000) }))
    await rewind.close()
    const db = new Database(join(box.root, ".rewind", "rewind.db"))
    const row = db
      .prepare("select type, version, payload from events where session_id = ? and type = 'MessageAppended'")
      .get(session.id) as { type: string; version: number; payload: string }
    const payload = JSON.parse(row.payload)
    payload.message.role = "root"
    db.prepare(
      "insert into events (session_id, sequence, type, version, payload, at) values (?, (select max(sequence) + 1 from events where session_id = ?), ?, ?, ?, 1)",
    ).run(session.id, session.id, row.type, row.version, JSON.stringify(payload))
    db.prepare("update streams set version = version + 1 where session_id = ?").run(session.id)
    db.close()
    const reopened = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    try {
      const error = (await failureOf(reopened.transcript(session.id))) as { _tag: string; message: string }
      expect(error._tag).toBe("EventDecodeError")
      expect(error.message).toMatch(
        /MessageAppended.*field message\.role.*the events row at (sequence \d+ of session|position)/,
      )
      expect(error.message.length).toBeLessThan(500)
    } finally {
      await reopened.close()
    }
  })
})

describe("the store inside a git workspace stays out of git", () => {
  const git = (cwd: string, ...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" })

  it("a store directory Rewind makes holds a .gitignore of *: git status shows only the user's files", async () => {
    const box = sandbox()
    git(box.root, "init", "-q")
    fs.writeFileSync(join(box.root, "a.txt"), "a\n")
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    try {
      value(await rewind.createSession({ title: "git", cwd: box.root }))
    } finally {
      await rewind.close()
    }
    expect(fs.readFileSync(join(box.root, ".rewind", ".gitignore"), "utf8")).toMatch(/^\*$/m)
    expect(git(box.root, "status", "--porcelain", "--untracked-files=all")).toBe("?? a.txt\n")
  })

  it("a directory that existed already (a named dir) is the user's: nothing is added to it", async () => {
    const box = sandbox()
    const dir = join(box.root, "mine")
    fs.mkdirSync(dir)
    const rewind = await openRewind({ workspaceRoot: box.root, dir, durability: "atomic" })
    await rewind.close()
    expect(fs.existsSync(join(dir, ".gitignore"))).toBe(false)
  })
})
