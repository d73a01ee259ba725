/**
 * `rewind capture` without the option parser (cli/captureFast.ts): which arguments it takes (the
 * rest goes to the full CLI), that taking them runs the capture in this process, and that on the
 * built bin its output and exit codes are the full CLI's (`REWIND_CAPTURE_FAST=off`), point line
 * for point line, error for error, in both the JSON and the human form.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { ID_PATTERN } from "@rewind/contracts"
import { Option } from "effect"
import { parseCaptureArgs } from "../src/cli/captureClient.js"
import { captureFast, parseFastCaptureArgs } from "../src/cli/captureFast.js"
import { PLAIN_ID } from "../src/cli/plainCaptureArgs.js"
import { cli, HOW_FOUND, jsonLines, tempDir } from "./cliHarness.js"

// The process path only: no hand-over to a running server.
const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  cli(args, undefined, { REWIND_CAPTURE_SERVER: "off", ...env })
const FAST = { REWIND_CAPTURE_FAST: "on" }
const FULL = { REWIND_CAPTURE_FAST: "off" }

const workspace = async () => {
  const root = tempDir()
  writeFileSync(join(root, "a.txt"), "a\n")
  mkdirSync(join(root, "src"))
  writeFileSync(join(root, "src", "b.ts"), "export const b = 1\n")
  const dir = join(tempDir(), "store")
  expect((await run(["init", "--workspace", root, "--dir", dir], FULL)).code).toBe(0)
  return { root, dir }
}

/** A point line without what differs between two captures of the same tree. */
const comparable = (line: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(line).filter(([k]) => !["pointId", "turnId", "capturedAt", ...HOW_FOUND].includes(k)),
  )

afterEach(() => {
  vi.restoreAllMocks()
})

describe("one reading of a plain capture command line", () => {
  it("pins the id pattern to contracts' ID_PATTERN", () => {
    expect(PLAIN_ID.source).toBe(ID_PATTERN.source)
    expect(PLAIN_ID.flags).toBe(ID_PATTERN.flags)
  })

  it("the server hand-over and the fast path take and leave the same --json command lines", () => {
    const cwd = tempDir()
    const lines = [
      [],
      ["--dir", "-x"],
      ["--dir=s"],
      ["--session", "ses-1", "--turn=t:2"],
      ["--session", "not an id"],
      ["--max-files", "50"],
      ["--max-files", "9999999999999999"],
      ["--max-files", "0"],
      ["--workspace", cwd],
      ["--workspace", join(cwd, "missing")],
      ["--path", "a.txt"],
      ["--dir", "a", "--dir", "b"],
      ["extra"],
    ]
    for (const line of lines) {
      const args = ["--json", ...line]
      const fast = parseFastCaptureArgs(args, cwd)
      const client = parseCaptureArgs(args, cwd)
      expect(client === undefined, JSON.stringify(args)).toBe(fast === undefined)
    }
  })
})

describe("capture without the option parser", () => {
  it("takes plain arguments, as the full CLI would read them", () => {
    const cwd = tempDir()
    // No workspace named: the one the full CLI finds (workspaceRoot.ts); here no store, so cwd.
    expect(parseFastCaptureArgs([], cwd)).toEqual({
      json: false,
      workspace: Option.some(cwd),
      dir: Option.none(),
      session: Option.none(),
      turn: Option.none(),
      paths: [],
      maxFiles: Option.none(),
    })
    expect(
      parseFastCaptureArgs(
        ["--json", "--workspace", cwd, "--dir=s", "--session", "ses-1", "--turn=t:2", "--max-files", "50"],
        cwd,
      ),
    ).toEqual({
      json: true,
      workspace: Option.some(cwd),
      dir: Option.some("s"),
      session: Option.some("ses-1"),
      turn: Option.some("t:2"),
      paths: [],
      maxFiles: Option.some(50),
    })
    // From a subdirectory of a workspace with a store: that workspace, as every command finds it.
    mkdirSync(join(cwd, ".rewind"))
    mkdirSync(join(cwd, "src", "deep"), { recursive: true })
    expect(parseFastCaptureArgs(["--json"], join(cwd, "src", "deep"))?.workspace).toEqual(Option.some(cwd))
    // A store named without a workspace: the working directory, as the full CLI takes it.
    expect(parseFastCaptureArgs(["--dir", "s"], join(cwd, "src"))?.workspace).toEqual(
      Option.some(join(cwd, "src")),
    )
  })

  it("leaves everything else to the full CLI", () => {
    const cwd = tempDir()
    for (const args of [
      ["--path", "a.txt"],
      ["--help"],
      ["-h"],
      ["--json", "--json"],
      ["--dir", "a", "--dir", "b"],
      ["--dir"],
      ["--dir", ""],
      ["--dir", "-x"],
      ["--session", "not an id"],
      ["--turn", ""],
      ["--max-files", "0"],
      ["--max-files", "1.5"],
      ["--max-files", "9999999999999999"],
      ["--workspace", join(cwd, "missing")],
      ["--log-level", "debug"],
      ["--wizard"],
      ["extra"],
    ])
      expect(parseFastCaptureArgs(args, cwd), JSON.stringify(args)).toBeUndefined()
  })

  it("runs the capture in this process when it takes the arguments", async () => {
    const { root, dir } = await workspace()
    const written: Array<string> = []
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const code = await captureFast(["--json", "--workspace", root, "--dir", dir, "--turn", "t-1"], {}, root)
    vi.restoreAllMocks()
    expect(code).toBe(0)
    const point = jsonLines(written.join("")).find((l) => l.type === "point")
    expect(point).toMatchObject({ turnId: "t-1", files: 2, via: "process", existing: false })
    expect(await captureFast(["--help"], {}, root)).toBeUndefined()
    expect(await captureFast(["--json", "--dir", dir], { REWIND_CAPTURE_FAST: "off" }, root)).toBeUndefined()
  })

  it("prints what the full CLI prints, and exits as it does", async () => {
    const { root, dir } = await workspace()
    const base = ["capture", "--workspace", root, "--dir", dir]
    // The first capture creates the session: both report it the same way, on their own store.
    const other = join(tempDir(), "store")
    expect((await run(["init", "--workspace", root, "--dir", other], FULL)).code).toBe(0)
    const fastFirst = await run([...base, "--json"], FAST)
    const fullFirst = await run(["capture", "--workspace", root, "--dir", other, "--json"], FULL)
    expect(fastFirst.code).toBe(0)
    expect(fullFirst.code).toBe(0)
    expect(jsonLines(fastFirst.stdout).map(comparable)).toEqual(jsonLines(fullFirst.stdout).map(comparable))
    expect(jsonLines(fastFirst.stdout).map((l) => l.type)).toEqual(["session_created", "point"])

    // Repeats on the same store: new turns, each other's turns again (the existing point), and
    // the default (a new manual turn).
    for (const [fastTurn, fullTurn] of [
      [
        ["--turn", "t-7"],
        ["--turn", "t-8"],
      ],
      [
        ["--turn", "t-8"],
        ["--turn", "t-7"],
      ],
      [[], []],
    ] as const) {
      const fast = await run([...base, "--json", ...fastTurn], FAST)
      const full = await run([...base, "--json", ...fullTurn], FULL)
      expect(fast.code).toBe(0)
      expect(full.code).toBe(0)
      expect(jsonLines(fast.stdout).map(comparable)).toEqual(jsonLines(full.stdout).map(comparable))
    }
    // The human form.
    const human = (out: string) =>
      out.replace(/pt-[0-9a-f]+/g, "PT").replace(/manual-[0-9TZ]+-[0-9a-f]+/g, "TURN")
    const fastHuman = await run(base, FAST)
    const fullHuman = await run(base, FULL)
    expect(fastHuman.code).toBe(0)
    expect(human(fastHuman.stdout)).toBe(human(fullHuman.stdout))
    expect(fastHuman.stdout).toMatch(/^captured point pt-[0-9a-f]+ for turn manual-/)
    expect(fastHuman.stdout).not.toMatch(/symlink/)
    // A symlink is counted in the human line too (both paths), as the JSON record's `links`.
    symlinkSync("a.txt", join(root, "link"))
    for (const how of [FAST, FULL]) {
      const linked = await run(base, how)
      expect(linked.code).toBe(0)
      expect(linked.stdout).toMatch(/: 2 file\(s\), 1 symlink\(s\), /)
    }
    // A name the capture leaves out is shown with its control characters escaped, never raw.
    writeFileSync(join(root, "odd\x1b[2Jname"), "x")
    for (const how of [FAST, FULL]) {
      const odd = await run(base, how)
      expect(odd.code).toBe(0)
      expect(odd.stdout).toContain("left out odd\\x1b[2Jname: unsupported_name")
      expect(odd.stdout).not.toContain("\x1b")
    }

    // Failures: no store, an unknown session.
    for (const args of [
      ["capture", "--json", "--workspace", root, "--dir", join(tempDir(), "none")],
      [...base, "--json", "--session", "ses-missing", "--turn", "t-9"],
      ["capture", "--workspace", root, "--dir", join(tempDir(), "none")],
    ]) {
      const fast = await run(args, FAST)
      const full = await run(args, FULL)
      expect(fast.code, args.join(" ")).toBe(full.code)
      expect(fast.code).not.toBe(0)
      expect(fast.stdout).toBe(full.stdout)
      expect(fast.stderr).toBe(full.stderr)
    }
  })
})
