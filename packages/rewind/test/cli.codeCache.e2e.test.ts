/**
 * The built bin's capture from its own bundle with a V8 code cache (cli/captureCached.ts,
 * cli/codeCache.ts): the first capture writes the cache, the next takes it (and leaves it as it
 * is), a corrupt one is replaced, a cache directory that cannot be made costs nothing, and
 * `REWIND_CODE_CACHE=off` writes none; every one of these prints what the bin prints with the
 * cache off. The full CLI's other commands the same way from their own bundle (cli/cliCached.ts). Also what the bundles ship: no fast-check (scripts/fastCheckStub.cjs), and a capture
 * bundle that finds the fs adapter's native module as the chunks do.
 */
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { BIN, cli, HOW_FOUND, jsonLines, tempDir } from "./cliHarness.js"

// The process path only: no hand-over to a running server.
const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  cli(args, undefined, { REWIND_CAPTURE_SERVER: "off", ...env })

const CLI_DIST = dirname(BIN)
const BUNDLE = join(CLI_DIST, "chunks", "captureBundle.cjs")

/** A point line without what differs between two captures of the same tree. */
const comparable = (out: string) =>
  jsonLines(out).map((line) =>
    Object.fromEntries(
      Object.entries(line).filter(([k]) => !["pointId", "turnId", "capturedAt", ...HOW_FOUND].includes(k)),
    ),
  )

const workspace = async () => {
  const root = tempDir()
  writeFileSync(join(root, "a.txt"), "a\n")
  expect((await run(["init", "--workspace", root], {})).code).toBe(0)
  // The session exists: every capture after this one prints the same lines.
  expect((await run(["capture", "--json", "--workspace", root], { REWIND_CODE_CACHE: "off" })).code).toBe(0)
  return root
}

const cacheFiles = (cacheHome: string, bundle = "captureBundle.cjs") =>
  existsSync(join(cacheHome, "rewind"))
    ? readdirSync(join(cacheHome, "rewind"))
        .filter((name) => name.startsWith(`${bundle}-`) && name.endsWith(".v8"))
        .map((name) => join(cacheHome, "rewind", name))
    : []

describe("the built bin's capture with a code cache", () => {
  it("writes the cache, then takes it; corrupt, it is replaced; off, none is written; the output is the same", async () => {
    const root = await workspace()
    const capture = ["capture", "--json", "--workspace", root]
    const expected = await run(capture, { REWIND_CODE_CACHE: "off" })
    expect(expected.code).toBe(0)
    expect(jsonLines(expected.stdout).map((l) => l.type)).toEqual(["point"])

    const cacheHome = join(tempDir(), "cache")
    const first = await run(capture, { XDG_CACHE_HOME: cacheHome })
    expect(first.code).toBe(0)
    expect(comparable(first.stdout)).toEqual(comparable(expected.stdout))
    const [file, ...more] = cacheFiles(cacheHome)
    expect(more).toEqual([])
    const written = readFileSync(file!)
    const writtenAt = statSync(file!).mtimeMs

    // Taken: a cache V8 refused, or one that failed its digest, would have been written again.
    const second = await run(capture, { XDG_CACHE_HOME: cacheHome })
    expect(second.code).toBe(0)
    expect(comparable(second.stdout)).toEqual(comparable(expected.stdout))
    expect(readFileSync(file!).equals(written)).toBe(true)
    expect(statSync(file!).mtimeMs).toBe(writtenAt)

    const corrupt = Buffer.from(written)
    for (let i = 64; i < corrupt.length; i += 997) corrupt[i] = corrupt[i]! ^ 0x5a
    writeFileSync(file!, corrupt)
    const afterCorrupt = await run(capture, { XDG_CACHE_HOME: cacheHome })
    expect(afterCorrupt.code).toBe(0)
    expect(comparable(afterCorrupt.stdout)).toEqual(comparable(expected.stdout))
    expect(readFileSync(file!).equals(corrupt)).toBe(false)
    expect(cacheFiles(cacheHome)).toEqual([file])

    const offHome = join(tempDir(), "cache")
    const off = await run(capture, { XDG_CACHE_HOME: offHome, REWIND_CODE_CACHE: "off" })
    expect(off.code).toBe(0)
    expect(comparable(off.stdout)).toEqual(comparable(expected.stdout))
    expect(existsSync(offHome)).toBe(false)
  })

  it("a cache directory that cannot be made: the capture runs as without a cache", async () => {
    const root = await workspace()
    const blocked = tempDir()
    writeFileSync(join(blocked, "a-file"), "")
    const env = { XDG_CACHE_HOME: join(blocked, "a-file", "cache") }
    const expected = await run(["capture", "--json", "--workspace", root], { REWIND_CODE_CACHE: "off" })
    for (let i = 0; i < 2; i++) {
      const result = await run(["capture", "--json", "--workspace", root], env)
      expect(result.code).toBe(0)
      expect(result.stderr).toBe("")
      expect(comparable(result.stdout)).toEqual(comparable(expected.stdout))
    }
  })

  it("a capture that fails writes no cache, and fails as the full CLI does", async () => {
    const root = tempDir()
    const cacheHome = join(tempDir(), "cache")
    const args = ["capture", "--json", "--workspace", root]
    const cached = await run(args, { XDG_CACHE_HOME: cacheHome })
    const full = await run(args, { REWIND_CAPTURE_FAST: "off" })
    expect(cached.code).toBe(2)
    expect(cached.code).toBe(full.code)
    expect(cached.stdout).toBe(full.stdout)
    expect(cacheFiles(cacheHome)).toEqual([])
  })
})

describe("the built bin's full CLI with a code cache (cli/cliCached.ts)", () => {
  it("every other command runs from its bundle: the same output as the ESM chunks, the cache written once and taken", async () => {
    const root = await workspace()
    const cacheHome = join(tempDir(), "cache")
    const commands = [
      ["sessions", "--json", "--workspace", root],
      ["points", "--json", "--workspace", root],
      ["timeline", "--json", "--workspace", root],
      ["status", "--json", "--workspace", root],
    ]
    // status says whether the code cache is used (its code_cache record): the one line that differs.
    const sameBesidesCache = (out: string) =>
      out.split("\n").filter((line) => !line.includes('"type":"code_cache"'))
    for (const args of commands) {
      const off = await run(args, { REWIND_CODE_CACHE: "off" })
      const cached = await run(args, { XDG_CACHE_HOME: cacheHome })
      expect(cached.code, cached.stderr).toBe(off.code)
      expect(sameBesidesCache(cached.stdout)).toEqual(sameBesidesCache(off.stdout))
      expect(cached.stderr).toBe(off.stderr)
    }
    // Written by the first command that succeeded, then taken by the others (not rewritten).
    const [file, ...more] = cacheFiles(cacheHome, "cliBundle.cjs")
    expect(more).toEqual([])
    const writtenAt = statSync(file!).mtimeMs
    expect((await run(commands[0]!, { XDG_CACHE_HOME: cacheHome })).code).toBe(0)
    expect(statSync(file!).mtimeMs).toBe(writtenAt)
    // The capture bundle's cache is its own; none was made by these commands.
    expect(cacheFiles(cacheHome)).toEqual([])
  })

  it("a failing command and a usage error fail as from the chunks, and write no cache", async () => {
    const empty = tempDir()
    const cacheHome = join(tempDir(), "cache")
    for (const args of [
      ["sessions", "--json", "--workspace", empty],
      ["restore", "--no-such-option"],
    ]) {
      const off = await run(args, { REWIND_CODE_CACHE: "off" })
      const cached = await run(args, { XDG_CACHE_HOME: cacheHome })
      expect(off.code).not.toBe(0)
      expect(cached.code).toBe(off.code)
      expect(cached.stdout).toBe(off.stdout)
      expect(cached.stderr).toBe(off.stderr)
    }
    expect(cacheFiles(cacheHome, "cliBundle.cjs")).toEqual([])
  })

  it.skipIf(process.platform !== "linux")(
    "from the bundle, doctor finds the fs adapter's native module as the chunks do",
    async () => {
      const root = await workspace()
      const nativeOf = async (env: Record<string, string>) => {
        const result = await run(["doctor", "--json", "--workspace", root], env)
        expect(result.code, result.stderr).toBe(0)
        return jsonLines(result.stdout).find((line) => line.type === "doctor")?.native
      }
      const fromBundle = await nativeOf({ XDG_CACHE_HOME: join(tempDir(), "cache") })
      expect(fromBundle).toMatchObject({ loaded: true, scanner: "native" })
      expect(fromBundle).toEqual(await nativeOf({ REWIND_CODE_CACHE: "off" }))
    },
  )
})

describe("status and doctor say whether the code cache is used", () => {
  it("used, off, or a directory that cannot be made: each said, in JSON and in words", async () => {
    const root = await workspace()
    const blocked = tempDir()
    writeFileSync(join(blocked, "a-file"), "")
    const cacheHome = join(tempDir(), "cache")
    const cases: ReadonlyArray<{ env: Record<string, string>; usable: boolean; words: RegExp }> = [
      { env: { XDG_CACHE_HOME: cacheHome }, usable: true, words: /code cache .*cache\/rewind/ },
      {
        env: { REWIND_CODE_CACHE: "off" },
        usable: false,
        words: /no code cache: off \(REWIND_CODE_CACHE=off\)/,
      },
      {
        env: { XDG_CACHE_HOME: join(blocked, "a-file", "cache") },
        usable: false,
        words: /no code cache: .* cannot be made or written \(ENOTDIR\)/,
      },
    ]
    for (const { env, usable, words } of cases) {
      const status = await run(["status", "--json", "--workspace", root], env)
      expect(status.code, status.stderr).toBe(0)
      const record = jsonLines(status.stdout).find((line) => line.type === "code_cache")
      expect(record).toMatchObject({ usable, dir: usable ? join(cacheHome, "rewind") : null })
      expect(record?.warning === null).toBe(usable)
      const doctor = await run(["doctor", "--json", "--workspace", root], env)
      expect(jsonLines(doctor.stdout).find((line) => line.type === "doctor")?.codeCache).toEqual({
        usable: record?.usable,
        dir: record?.dir,
        warning: record?.warning,
      })
      const human = await run(["status", "--workspace", root], env)
      expect(human.stdout).toMatch(words)
    }
  })
})

describe("what the bundles ship", () => {
  it("no fast-check: effect's Schema import of it is the stub", () => {
    const files = [
      BIN,
      ...readdirSync(join(CLI_DIST, "chunks")).map((name) => join(CLI_DIST, "chunks", name)),
    ]
    const sources = files.map((file) => readFileSync(file, "utf8"))
    for (const [i, source] of sources.entries()) {
      expect(source.includes("node_modules/fast-check/"), files[i]).toBe(false)
      expect(source.includes("node_modules/pure-rand/"), files[i]).toBe(false)
    }
    // The stub stands where fast-check stood (esbuild names each bundled file in a comment).
    expect(readFileSync(BUNDLE, "utf8")).toContain("scripts/fastCheckStub.cjs")
    expect(
      sources.some((source, i) => files[i] !== BUNDLE && source.includes("scripts/fastCheckStub.cjs")),
    ).toBe(true)
  })

  it.skipIf(process.platform !== "linux")(
    "the capture bundle loads the fs adapter's native module from the installed package",
    async () => {
      const adapterModule = realpathSync(
        join(
          dirname(createRequire(import.meta.url).resolve("@rewind/adapter-fs")),
          "..",
          "build",
          "Release",
          "dirscan.node",
        ),
      )
      const program = `import { runWithCodeCache } from ${JSON.stringify(pathToFileURL(join(CLI_DIST, "codeCache.js")).href)}
const loaded = runWithCodeCache(${JSON.stringify(BUNDLE)}, { XDG_CACHE_HOME: ${JSON.stringify(join(tempDir(), "cache"))} })
process.stdout.write(JSON.stringify(loaded.exports.nativeStatus()))`
      const status = await new Promise<Record<string, unknown>>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--input-type=module", "-e", program],
          { encoding: "utf8" },
          (error, stdout, stderr) =>
            error === null ? resolve(JSON.parse(stdout)) : reject(new Error(stderr)),
        ),
      )
      expect(status).toMatchObject({ loaded: true, path: adapterModule, scanner: "native" })
    },
  )
})
