/**
 * End-to-end tests of the BUILT `rewind` binary's handling of what a person types (issue 21):
 * `--path` values are never trimmed nor dropped (item 11), and `--help` writes no ANSI codes into
 * a pipe or with NO_COLOR set (item 17, first half).
 */
import { execFile } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Rewind } from "@rewind/core"
import { Effect, Option } from "effect"
import { makeOutput } from "../src/cli/output.js"
import { captureSession } from "../src/cli/snapshotCommands.js"
import type { CliRewind } from "../src/cli/store.js"
import { layerEmbeddedService } from "../src/serviceLayer.js"
import { BIN, cli, jsonLines, tempDir } from "./cliHarness.js"
import { okValue } from "./okValue.js"

/** The built binary with stdout a pipe and the given environment (NO_COLOR removed unless given). */
const cliWithEnv = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const { NO_COLOR: _, FORCE_COLOR: __, ...rest } = process.env
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", env: { ...rest, ...env } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    )
  })

describe("rewind CLI input (built binary)", { timeout: 240_000 }, () => {
  it("--path is never trimmed: ' lead.txt' is the file named ' lead.txt', ' ' is legal, '' is refused", async () => {
    const root = tempDir()
    expect((await cli(["init"], root)).code).toBe(0)
    writeFileSync(join(root, "other.txt"), "x")

    // Neither ' lead.txt' nor 'lead.txt' exists: the declared path is tracked as a tombstone.
    const captured = await cli(["capture", "--path", " lead.txt", "--path= ", "--json"], root)
    expect(captured.code).toBe(0)
    const point = jsonLines(captured.stdout).find((l) => l.type === "point")!
    expect(point).toMatchObject({ tombstones: 2 })

    // Which name was tracked shows once the file appears: a tracked path is not "untracked".
    writeFileSync(join(root, " lead.txt"), "lead")
    writeFileSync(join(root, "lead.txt"), "not this one")
    writeFileSync(join(root, " "), "space")
    const diff = jsonLines((await cli(["diff", point.pointId as string, "--json"], root)).stdout)
    const byPath = new Map(diff.filter((l) => l.type === "diff").map((l) => [l.path, l]))
    expect(byPath.get(" lead.txt")).toMatchObject({ change: "added", untracked: false })
    expect(byPath.get(" ")).toMatchObject({ change: "added", untracked: false })
    expect(byPath.get("lead.txt")).toMatchObject({ change: "added", untracked: true })

    const empty = await cli(["capture", "--path", "", "--json"], root)
    expect(empty.code).toBe(3)
    expect(empty.stderr).toContain('--path "": a workspace path must not be empty')
    const dotted = await cli(["capture", "--path", "./d//e.txt", "--json"], root)
    expect(dotted.code).toBe(0)
    // Nor is any other path: `--dir=v` keeps a trailing space (the parser trims such an argument).
    expect((await cli(["init", `--dir=${join(root, "store ")}`], root)).code).toBe(0)
    expect(existsSync(join(root, "store ", "rewind.db"))).toBe(true)
    expect(existsSync(join(root, "store"))).toBe(false)
    for (const bad of ["../x", "/etc/passwd"]) {
      const refused = await cli(["capture", "--path", bad], root)
      expect(refused.code, bad).toBe(3)
    }
  })

  it("--help prints no ANSI colour codes into a pipe, with or without NO_COLOR", async () => {
    for (const env of [{}, { NO_COLOR: "1" }] as ReadonlyArray<Record<string, string>>) {
      for (const args of [["--help"], ["capture", "--help"]]) {
        const help = await cliWithEnv(args, env)
        expect(help.code, args.join(" ")).toBe(0)
        expect(help.stdout).toContain("capture")
        expect(help.stdout + help.stderr).not.toContain("\x1b[")
      }
    }
  })

  it("simultaneous first captures from several processes on an empty store create one session (item 15)", async () => {
    const root = tempDir()
    expect((await cli(["init"], root)).code).toBe(0)
    writeFileSync(join(root, "a.txt"), "a")
    const runs = await Promise.all(Array.from({ length: 6 }, () => cli(["capture", "--json"], root)))
    for (const run of runs) expect(run.code, run.stderr).toBe(0)
    const created = runs.flatMap((r) => jsonLines(r.stdout).filter((l) => l.type === "session_created"))
    expect(created).toHaveLength(1)
    const pointSessions = new Set(
      runs.flatMap((r) =>
        jsonLines(r.stdout)
          .filter((l) => l.type === "point")
          .map((l) => l.sessionId),
      ),
    )
    expect(pointSessions.size).toBe(1)
    const sessions = jsonLines((await cli(["sessions", "--json"], root)).stdout)
    expect(sessions.filter((l) => l.type === "session")).toHaveLength(1)
    // Every capture landed in it: the default `points` shows all six.
    const points = jsonLines((await cli(["points", "--json"], root)).stdout).filter((l) => l.type === "point")
    expect(points).toHaveLength(6)
  })

  it("two captures that both read an empty store choose the same session (the race, made certain)", async () => {
    const root = tempDir()
    const program = Effect.gen(function* () {
      const service = yield* Rewind
      // Every listSessions answers "empty", as each racer saw it before the other created one.
      const stale: CliRewind = {
        ...service,
        workspaceRoot: root,
        dir: join(root, ".rewind"),
        listSessions: () => Effect.succeed({ ok: true as const, value: [] }),
      }
      const out = makeOutput(true)
      const first = yield* captureSession(stale, out, Option.none())
      const second = yield* captureSession(stale, out, Option.none())
      expect(second).toBe(first)
      expect(okValue(yield* service.listSessions())).toHaveLength(1)
    })
    await Effect.runPromise(
      program.pipe(Effect.provide(layerEmbeddedService({ workspaceRoot: root, durability: "atomic" }))),
    )
  })
})
