/**
 * End-to-end tests of the BUILT `rewind` binary's snapshot and recovery commands — capture,
 * points, diff, preview/restore of a point with its token, redo, recover, gc — on temporary
 * workspaces, parsing `--json` output line by line; plus their usage errors and a missing or
 * corrupt store.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { OperationId, SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import { ArtifactStore, OperationJournal } from "@rewind/core"
import { Effect } from "effect"
import { openRewind } from "../src/index.js"
import { cli, jsonLines, seeded, tempDir } from "./cliHarness.js"
import { okValue } from "./okValue.js"

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8")
const ofType = (lines: ReadonlyArray<Record<string, unknown>>, type: string) =>
  lines.filter((l) => l.type === type)

describe("rewind CLI snapshot and recovery commands (built binary)", { timeout: 240_000 }, () => {
  it("capture creates a session when needed and records points; points lists them; diff shows what changed", async () => {
    const root = tempDir()
    expect((await cli(["init"], root)).code).toBe(0)
    mkdirSync(join(root, "src"))
    writeFileSync(join(root, "a.txt"), "one\nshared line\n")
    writeFileSync(join(root, "src", "b.txt"), "keep me\n")
    writeFileSync(join(root, "bin.dat"), Buffer.from([0, 1, 2, 3]))

    // An empty store: capture creates a session to capture into, then records the point.
    const first = await cli(["capture", "--json"], root)
    expect(first.code).toBe(0)
    expect(first.stderr).toBe("") // no progress bar when stderr is not a terminal
    const firstLines = jsonLines(first.stdout)
    expect(firstLines.map((l) => l.type)).toEqual(["session_created", "point"])
    const point = firstLines[1]!
    expect(point).toMatchObject({ kind: "turn", files: 3, tombstones: 0, existing: false, skipped: [] })
    expect(point.turnId).toMatch(/^manual-/)
    const pointId = point.pointId as string
    const sessionId = point.sessionId as string

    // A named turn has one point: capturing it again reports the existing one.
    const t1 = jsonLines((await cli(["capture", "--turn", "t1", "--json"], root)).stdout)
    const t1Again = jsonLines((await cli(["capture", "--turn", "t1", "--json"], root)).stdout)
    expect(t1[0]).toMatchObject({ type: "point", turnId: "t1", existing: false, reusedManifest: true })
    expect(t1Again[0]).toMatchObject({ type: "point", pointId: t1[0]!.pointId, existing: true })

    writeFileSync(join(root, "a.txt"), "two\nshared line\n")
    rmSync(join(root, "src", "b.txt"))
    writeFileSync(join(root, "c.txt"), "new file\n")
    writeFileSync(join(root, "bin.dat"), Buffer.from([0, 9, 9, 9]))

    const diff = await cli(["diff", pointId, "--json"], root)
    expect(diff.code).toBe(0)
    const diffLines = jsonLines(diff.stdout)
    const byPath = new Map(ofType(diffLines, "diff").map((l) => [l.path, l]))
    expect([...byPath.keys()]).toEqual(["a.txt", "bin.dat", "c.txt", "src/b.txt"])
    expect(byPath.get("a.txt")).toMatchObject({ change: "modified", untracked: false, noPatch: null })
    const patch = byPath.get("a.txt")!.patch as string
    expect(patch).toContain("--- a/a.txt")
    expect(patch).toContain("-one")
    expect(patch).toContain("+two")
    expect(patch).toContain(" shared line")
    expect(byPath.get("bin.dat")).toMatchObject({ change: "modified", patch: null, noPatch: "binary" })
    expect(byPath.get("c.txt")).toMatchObject({ change: "added", untracked: true, point: null })
    expect(byPath.get("c.txt")!.patch).toContain("+new file")
    expect(byPath.get("src/b.txt")).toMatchObject({ change: "deleted", now: null })
    expect(diffLines.at(-1)).toMatchObject({
      type: "diff_summary",
      pointId,
      added: 1,
      modified: 2,
      deleted: 1,
      unchanged: 0,
    })
    const stat = jsonLines((await cli(["diff", pointId, "--stat", "--json"], root)).stdout)
    expect(ofType(stat, "diff").every((l) => l.patch === null && l.noPatch === "disabled")).toBe(true)
    const human = await cli(["diff", pointId], root)
    expect(human.stdout).toMatch(/^CHANGE\s+PATH\s+POINT\s+NOW/)
    expect(human.stdout).toContain("+two")
    // Without a point: the session's latest one (t1's, of the same tree).
    const latest = jsonLines((await cli(["diff", "--stat", "--json"], root)).stdout)
    expect(latest.at(-1)).toMatchObject({
      type: "diff_summary",
      pointId: t1[0]!.pointId,
      added: 1,
      modified: 2,
      deleted: 1,
    })

    const pointsBefore = jsonLines((await cli(["points", "--json"], root)).stdout)
    expect(pointsBefore.map((p) => [p.type, p.kind, p.turnId === "t1"])).toEqual([
      ["point", "turn", false],
      ["point", "turn", true],
    ])
    expect(pointsBefore.every((p) => p.sessionId === sessionId)).toBe(true)
  })

  it("preview <point> issues a token; restore <point> --token applies it once; its rescue point undoes it", async () => {
    // Seeded through the facade (one process) to keep the test to the commands under test.
    const root = tempDir()
    mkdirSync(join(root, "src"))
    writeFileSync(join(root, "a.txt"), "one\nshared line\n")
    writeFileSync(join(root, "src", "b.txt"), "keep me\n")
    writeFileSync(join(root, "bin.dat"), Buffer.from([0, 1, 2, 3]))
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const session = await rewind.createSession({ title: "points", cwd: root })
    if (!session.ok) throw new Error(session.refusal.message)
    const sessionId = session.value.id as string
    const outcome = okValue(await rewind.capturePoint(session.value.id, "t1" as TurnId))
    await rewind.close()
    if (outcome._tag !== "Captured") throw new Error(outcome.reason)
    const pointId = outcome.point.pointId as string
    writeFileSync(join(root, "a.txt"), "two\nshared line\n")
    rmSync(join(root, "src", "b.txt"))
    writeFileSync(join(root, "c.txt"), "new file\n")
    writeFileSync(join(root, "bin.dat"), Buffer.from([0, 9, 9, 9]))

    const preview = await cli(["preview", pointId, "--json"], root)
    expect(preview.code).toBe(0)
    const planned = jsonLines(preview.stdout)[0]!
    expect(planned).toMatchObject({
      type: "point_preview",
      sessionId,
      pointId,
      canApply: true,
      conflicts: [],
    })
    expect((planned.changes as Array<{ path: string }>).map((c) => c.path).sort()).toEqual([
      "a.txt",
      "bin.dat",
      "src/b.txt",
    ])
    const token = planned.token as string
    expect(token).toMatch(/^rwt1\./)

    const noToken = await cli(["restore", pointId], root)
    expect(noToken.code).toBe(3)
    expect(noToken.stderr).toContain("needs --token")
    expect(read(root, "a.txt")).toBe("two\nshared line\n")

    const restored = await cli(["restore", pointId, "--token", token, "--json"], root)
    expect(restored.code).toBe(0)
    const restoreLine = jsonLines(restored.stdout)[0]!
    expect(restoreLine).toMatchObject({ type: "restore", sessionId, pointId })
    expect(read(root, "a.txt")).toBe("one\nshared line\n")
    expect(read(root, "src/b.txt")).toBe("keep me\n")
    expect([...readFileSync(join(root, "bin.dat"))]).toEqual([0, 1, 2, 3])
    expect(read(root, "c.txt")).toBe("new file\n") // not in the point: left alone

    const reused = await cli(["restore", pointId, "--token", token, "--json"], root)
    expect(reused.code).toBe(2)
    expect(jsonLines(reused.stdout)).toEqual([
      { v: 1, type: "error", code: 2, reason: "token_used", message: expect.any(String) },
    ])

    // The rescue point holds what the restore replaced: restoring it undoes the restore.
    const rescueId = restoreLine.rescuePointId as string
    const pointsAfter = jsonLines((await cli(["points", "--json"], root)).stdout)
    expect(pointsAfter.at(-1)).toMatchObject({ pointId: rescueId, kind: "rescue" })
    const rescueToken = jsonLines((await cli(["preview", rescueId, "--json"], root)).stdout)[0]!
      .token as string
    expect((await cli(["restore", rescueId, "--token", rescueToken], root)).code).toBe(0)
    expect(read(root, "a.txt")).toBe("two\nshared line\n")
    expect(existsSync(join(root, "src", "b.txt"))).toBe(false)
  })

  it("preview lists what a restore leaves alone because a rule now excludes it, in JSON and in words", async () => {
    const root = tempDir()
    writeFileSync(join(root, "a.txt"), "one\n")
    writeFileSync(join(root, "notes.log"), "v1\n")
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const session = await rewind.createSession({ title: "kept", cwd: root })
    if (!session.ok) throw new Error(session.refusal.message)
    const outcome = okValue(await rewind.capturePoint(session.value.id, "t1" as TurnId))
    await rewind.close()
    if (outcome._tag !== "Captured") throw new Error(outcome.reason)
    const pointId = outcome.point.pointId as string
    writeFileSync(join(root, "a.txt"), "two\n")
    writeFileSync(join(root, "notes.log"), "v2 (the user's)\n")
    writeFileSync(join(root, ".gitignore"), "*.log\n")

    const preview = await cli(["preview", pointId, "--json"], root)
    expect(preview.code).toBe(0)
    const planned = jsonLines(preview.stdout)[0]!
    expect(planned).toMatchObject({ type: "point_preview", changes: [{ path: "a.txt", action: "write" }] })
    expect(planned.protected).toEqual([{ path: "notes.log", kind: "ignored", message: expect.any(String) }])
    const words = await cli(["preview", pointId], root)
    expect(words.code).toBe(0)
    // The path once: the policy's message is shown without its subject.
    expect(words.stdout).toMatch(/kept notes\.log: ignored \(excluded by the ignore rules of .+\)/)

    const restored = await cli(["restore", pointId, "--token", planned.token as string], root)
    expect(restored.code).toBe(0)
    expect(read(root, "a.txt")).toBe("one\n")
    expect(read(root, "notes.log")).toBe("v2 (the user's)\n")
  })

  it("restore of a point takes away a link that replaced a directory (never following it) and the reverse; redo undoes each", async () => {
    const root = tempDir()
    expect((await cli(["init"], root)).code).toBe(0)
    mkdirSync(join(root, "vendor"))
    mkdirSync(join(root, "shared"))
    writeFileSync(join(root, "vendor", "v.js"), "vendored\n")
    writeFileSync(join(root, "shared", "v.js"), "shared\n")
    const point = jsonLines((await cli(["capture", "--json"], root)).stdout).find((l) => l.type === "point")!
    const pointId = point.pointId as string
    // The agent's shell: `rm -r vendor && ln -s shared vendor`.
    rmSync(join(root, "vendor"), { recursive: true })
    symlinkSync("shared", join(root, "vendor"))
    // The diff says what the capture would: the file beneath the link is gone (not unreadable).
    const diff = jsonLines((await cli(["diff", pointId, "--json"], root)).stdout)
    expect(diff.find((l) => l.type === "diff" && l.path === "vendor/v.js")).toMatchObject({
      change: "deleted",
    })
    expect(diff.find((l) => l.type === "diff_summary")).toMatchObject({ deleted: 1, skipped: [] })

    const preview = await cli(["preview", pointId, "--json"], root)
    expect(preview.code).toBe(0)
    const planned = jsonLines(preview.stdout)[0]!
    expect(planned).toMatchObject({ canApply: true, conflicts: [], protected: [] })
    expect(
      (planned.changes as Array<{ path: string; action: string }>).map((c) => [c.path, c.action]).sort(),
    ).toEqual([
      ["vendor", "delete"],
      ["vendor/v.js", "write"],
    ])
    const restored = await cli(["restore", pointId, "--token", planned.token as string], root)
    expect(restored.code).toBe(0)
    expect(lstatSync(join(root, "vendor")).isDirectory()).toBe(true)
    expect(read(root, "vendor/v.js")).toBe("vendored\n")
    expect(read(root, "shared/v.js")).toBe("shared\n")

    expect((await cli(["redo"], root)).code).toBe(0)
    expect(readlinkSync(join(root, "vendor"))).toBe("shared")
    expect(read(root, "shared/v.js")).toBe("shared\n")

    // The other way: a point with the link, then the agent vendors a copy in its place.
    const linked = jsonLines((await cli(["capture", "--json"], root)).stdout).find((l) => l.type === "point")!
    rmSync(join(root, "vendor"))
    mkdirSync(join(root, "vendor", "sub"), { recursive: true })
    writeFileSync(join(root, "vendor", "v.js"), "copied\n")
    writeFileSync(join(root, "vendor", "sub", "w.js"), "w\n")
    const back = jsonLines((await cli(["preview", linked.pointId as string, "--json"], root)).stdout)[0]!
    expect(back).toMatchObject({ canApply: true, conflicts: [] })
    expect(
      (await cli(["restore", linked.pointId as string, "--token", back.token as string], root)).code,
    ).toBe(0)
    expect(readlinkSync(join(root, "vendor"))).toBe("shared")
    expect(read(root, "shared/v.js")).toBe("shared\n")
    expect((await cli(["redo"], root)).code).toBe(0)
    expect(lstatSync(join(root, "vendor")).isDirectory()).toBe(true)
    expect(read(root, "vendor/v.js")).toBe("copied\n")
    expect(read(root, "vendor/sub/w.js")).toBe("w\n")
  })

  it("redo brings back what a cascade undid, even after gc; a second redo has nothing to undo", async () => {
    const { root, turns } = await seeded()
    // A hand edit the cascade overwrites: only the redo entry in the journal holds it.
    writeFileSync(join(root, "a.txt"), "edited by hand\n")
    const cascade = await cli(["cascade", turns[1]!.messageId, "--json", "--workspace", root])
    expect(cascade.code).toBe(0)
    expect(read(root, "a.txt")).toBe("one\n")

    const dry = await cli(["gc", "--dry-run", "--grace-minutes", "0", "--json", "--workspace", root])
    expect(dry.code).toBe(0)
    expect(jsonLines(dry.stdout)[0]).toMatchObject({ type: "gc", dryRun: true, swept: true })
    const gc = await cli(["gc", "--grace-minutes", "0", "--json", "--workspace", root])
    expect(gc.code).toBe(0)
    const gcLine = jsonLines(gc.stdout)[0]!
    expect(gcLine).toMatchObject({ type: "gc", dryRun: false, swept: true, reason: null })
    expect(gcLine.deletedHashes).toEqual(jsonLines(dry.stdout)[0]!.deletedHashes)

    const redo = await cli(["redo", "--json", "--workspace", root])
    expect(redo.code).toBe(0)
    const redoLine = jsonLines(redo.stdout)[0]!
    expect(redoLine).toMatchObject({ type: "redo", files: [{ path: "a.txt", action: "restored" }] })
    expect(redoLine.activeBranch).toHaveLength(4)
    expect(read(root, "a.txt")).toBe("edited by hand\n")
    const log = jsonLines(
      (await cli(["log", redoLine.sessionId as string, "--json", "--workspace", root])).stdout,
    )
    expect(log).toHaveLength(4)

    const again = await cli(["redo", "--json", "--workspace", root])
    expect(again.code).toBe(2)
    expect(jsonLines(again.stdout)[0]).toMatchObject({ type: "error", reason: "nothing_to_undo" })
  })

  it("recover lists an interrupted operation and --rollback finishes it", async () => {
    const { root, sessionId } = await seeded()
    // The state a crash leaves: the operation journaled, its file already written, never completed.
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const operationId = "op_interrupted" as OperationId
    await rewind.run(
      Effect.gen(function* () {
        const artifacts = yield* ArtifactStore
        const rescue = yield* artifacts.put(new TextEncoder().encode("two\n"))
        const planned = yield* artifacts.put(new TextEncoder().encode("one\n"))
        yield* (yield* OperationJournal).begin({
          operationId,
          sessionId: sessionId as SessionId,
          kind: "cascade",
          files: [
            {
              path: "a.txt" as WorkspacePath,
              rescue: { _tag: "present", hash: rescue },
              planned: { _tag: "present", hash: planned },
            },
          ],
          startedAt: 1,
        })
      }),
    )
    await rewind.close()
    writeFileSync(join(root, "a.txt"), "one\n")

    const listed = await cli(["recover", "--json", "--workspace", root])
    expect(listed.code).toBe(0)
    expect(jsonLines(listed.stdout)).toEqual([
      {
        v: 1,
        type: "operation",
        operationId,
        sessionId,
        kind: "cascade",
        startedAt: 1,
        recorded: false,
        resolvable: true,
        files: [expect.objectContaining({ path: "a.txt", state: "planned" })],
      },
    ])
    const human = await cli(["recover", "--workspace", root])
    expect(human.stdout).toContain(`rewind recover --rollback ${operationId}`)
    // status, where a user looks first, says it too.
    const status = await cli(["status", "--json", "--workspace", root])
    expect(jsonLines(status.stdout).find((l) => l.type === "interrupted")).toEqual({
      v: 1,
      type: "interrupted",
      operations: [
        { operationId, sessionId, kind: "cascade", startedAt: 1, recorded: false, resolvable: true },
      ],
    })
    const statusWords = await cli(["status", "--workspace", root])
    expect(statusWords.stdout).toMatch(/interrupted 1 operation\(s\) a crash left incomplete/)
    expect(statusWords.stdout).toContain(`${operationId}  cascade, started`)
    expect(statusWords.stdout).toContain("1 of 1 file(s) as after")

    const missing = await cli(["recover", "--continue", "op_missing", "--json", "--workspace", root])
    expect(missing.code).toBe(2)
    expect(jsonLines(missing.stdout)[0]).toMatchObject({ type: "error", reason: "not_found" })

    const rolled = await cli(["recover", "--rollback", operationId, "--json", "--workspace", root])
    expect(rolled.code).toBe(0)
    expect(jsonLines(rolled.stdout)[0]).toMatchObject({
      type: "resolved",
      operationId,
      resolution: "rollback",
    })
    expect(read(root, "a.txt")).toBe("two\n")
    const after = await cli(["recover", "--json", "--workspace", root])
    expect(after.code).toBe(0)
    expect(after.stdout).toBe("")
    const settled = await cli(["status", "--json", "--workspace", root])
    expect(jsonLines(settled.stdout).some((l) => l.type === "interrupted")).toBe(false)
  })

  it("capture --max-files bounds the scan and reports what it left out; the default takes a 110k-file tree", async () => {
    const root = tempDir()
    expect((await cli(["init"], root)).code).toBe(0)
    mkdirSync(join(root, "src"))
    for (const name of ["a.txt", "b.txt", "c.txt"]) writeFileSync(join(root, name), name)
    for (const name of ["d.txt", "e.txt"]) writeFileSync(join(root, "src", name), name)
    const bounded = jsonLines((await cli(["capture", "--max-files", "2", "--json"], root)).stdout)
    const point = ofType(bounded, "point")[0]!
    expect(point.files).toBe(2)
    const skipped = point.skipped as ReadonlyArray<{ reason: string }>
    expect(skipped.length).toBeGreaterThan(0)
    expect(skipped.every((s) => s.reason === "budget")).toBe(true)
    const whole = ofType(jsonLines((await cli(["capture", "--json"], root)).stdout), "point")[0]!
    expect(whole).toMatchObject({ files: 5, skipped: [] })
    const bad = await cli(["capture", "--max-files", "0", "--workspace", root])
    expect(bad.code).toBe(3)
    expect(bad.stderr).toContain("--max-files must be a whole number, 1 or more")
    // Four copies of babel's shape (110,696 files) fit the default budget.
    const { DEFAULT_CAPTURE_SETTINGS } = await import("@rewind/core")
    expect(DEFAULT_CAPTURE_SETTINGS.maxFiles).toBeGreaterThanOrEqual(110_696)
  })

  it("status reports snapshot usage", async () => {
    const { root } = await seeded()
    expect((await cli(["capture", "--json", "--workspace", root])).code).toBe(0)
    const status = await cli(["status", "--json", "--workspace", root])
    expect(status.code).toBe(0)
    const snapshots = ofType(jsonLines(status.stdout), "snapshots")[0]!
    expect(snapshots.blobs).toBeGreaterThan(0)
    expect(snapshots.pointsPerSession).toEqual([{ sessionId: expect.any(String), points: 1 }])
  })

  it("diff without a point in a session that has none fails clearly (exit 2)", async () => {
    const { root } = await seeded()
    const none = await cli(["diff", "--json"], root)
    expect(none.code).toBe(2)
    expect(jsonLines(none.stdout).at(-1)).toMatchObject({ type: "error", reason: "no_point" })
    expect(none.stdout).toContain("has no point yet to compare with (rewind capture makes one)")
  })

  it("bad arguments exit 3 with a clear message, before any store is opened", async () => {
    const root = tempDir()
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [["diff", "../etc/passwd"], "PointId"],
      [["capture", "--path", "../outside.txt"], "--path ../outside.txt"],
      [["capture", "--turn", "a turn"], "TurnId"],
      [["gc", "--keep-last", "-1"], "--keep-last must be a whole number, 0 or more"],
      [["gc", "--grace-minutes", "soon"], "soon"],
      [["recover", "--continue", "op_a", "--rollback", "op_b"], "not both"],
      [["restore", "pt-x", "--token", "t", "--checkpoint", "ckpt_1"], "give exactly one of"],
      [["restore", "--checkpoint", "ckpt_1", "--token", "t"], "--token goes with a <point>"],
    ]
    const results = await Promise.all(cases.map(([args]) => cli([...args, "--workspace", root])))
    results.forEach((r, i) => {
      const [args, message] = cases[i]!
      expect(r.code, args.join(" ")).toBe(3)
      expect(r.stderr, args.join(" ")).toContain(message)
    })
    expect(existsSync(join(root, ".rewind"))).toBe(false)
  })

  it("a missing store is a clear error (exit 2) for every new command, and creates nothing", async () => {
    const root = tempDir()
    const commands = [["capture"], ["diff", "pt-1"], ["recover"], ["gc", "--dry-run"]]
    const results = await Promise.all(commands.map((c) => cli([...c, "--json", "--workspace", root])))
    results.forEach((r, i) => {
      expect(r.code, commands[i]!.join(" ")).toBe(2)
      expect(r.stderr).toContain("no Rewind store")
      expect(jsonLines(r.stdout)[0]).toMatchObject({ type: "error", code: 2, reason: "StoreMissing" })
    })
    expect(existsSync(join(root, ".rewind"))).toBe(false)
  })

  it("a corrupt store is a clear error (exit 2) and is left untouched", async () => {
    const root = tempDir()
    mkdirSync(join(root, ".rewind"))
    const garbage = Buffer.from("not a database at all\n".repeat(300))
    writeFileSync(join(root, ".rewind", "rewind.db"), garbage)
    for (const command of [["capture"], ["gc"]]) {
      const r = await cli([...command, "--json", "--workspace", root])
      expect(r.code, command[0]).toBe(2)
      expect(r.stderr, command[0]).toMatch(/error: .+/)
      expect(jsonLines(r.stdout)[0]).toMatchObject({ type: "error", code: 2 })
    }
    expect(readFileSync(join(root, ".rewind", "rewind.db")).equals(garbage)).toBe(true)
  })
})
