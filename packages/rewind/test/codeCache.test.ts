/**
 * The code cache of the capture bundle (cli/codeCache.ts), on small scripts of the bundle's form:
 * made after a run without one (holding what the whole run compiled), used by the next, keyed by
 * the script's bytes, a corrupt one or one V8 refuses replaced, never read from or written to a
 * directory that is not the user's alone, a directory that cannot be written costing nothing but
 * the cache, and `REWIND_CODE_CACHE=off` reading and writing nothing. Each run is a process of its own (the built module), as the bin's
 * are: within one process V8 answers a second compile of the same source from its own compilation
 * cache, whatever cache it is given.
 */
import { execFile } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { codeCacheDir } from "../src/cli/codeCache.js"
import { tempDir } from "./cliHarness.js"

const MODULE = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "cli", "codeCache.js")

/** `cache`: "not used" when runWithCodeCache declined (then the bin loads its ESM chunks). */
interface Loaded {
  readonly cache: string
  readonly exports?: Record<string, unknown>
}

/** Runs `program` (an ES module's text) in a new process: what it wrote to stdout. */
const run = (program: string, env: Record<string, string>) =>
  new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", program],
      { encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(stderr))),
    )
  })

/**
 * Runs `file` with its cache in a new process, which then (after `meanwhile`, code of the run's
 * own) saves the cache: what it saw.
 */
const load = (file: string, env: Record<string, string>, meanwhile = "") =>
  run(
    `import { runWithCodeCache } from ${JSON.stringify(pathToFileURL(MODULE).href)}
const loaded = runWithCodeCache(${JSON.stringify(file)}, process.env)
${meanwhile}
loaded?.saveCache()
process.stdout.write(JSON.stringify(loaded === undefined ? { cache: "not used" } : { cache: loaded.cache, exports: loaded.exports }))`,
    env,
  ).then((stdout) => JSON.parse(stdout) as Loaded)

/**
 * Garbage enough for a dozen of V8's major collections, each of which ages the bytecode of
 * functions that did not run since and drops the old, as a long capture's collections do (large
 * buffers never touched: the collections come from their size, at no cost in memory or time).
 */
const CHURN = `for (let i = 0; i < 200; i++) new ArrayBuffer(64 << 20)`

/** A script in the bundle's form (scripts/bundleCli.mjs) whose exports show what it was given. */
const script = (dir: string, name: string, answer: number) => {
  const file = join(dir, name)
  writeFileSync(
    file,
    `(function (exports, require, module, __filename, __dirname, __importMetaUrl) {"use strict";
  const twice = (n) => n * 2
  exports.answer = twice(${answer})
  exports.file = __filename
  exports.dir = __dirname
  exports.url = __importMetaUrl
  exports.sep = require("node:path").sep
  exports.strict = (function () { return this === undefined })()
})
`,
  )
  return file
}

const cacheDirOf = (env: { XDG_CACHE_HOME: string }) => join(env.XDG_CACHE_HOME, "rewind")
const cacheFiles = (env: { XDG_CACHE_HOME: string }) =>
  existsSync(cacheDirOf(env)) ? readdirSync(cacheDirOf(env)).filter((name) => name.endsWith(".v8")) : []

describe("the capture bundle's code cache", () => {
  it("is made after a run without one, then used; the script gets what a module gets", async () => {
    const root = tempDir()
    const file = script(root, "bundle.cjs", 21)
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    const first = await load(file, env)
    expect(first.cache).toBe("absent")
    expect(first.exports).toEqual({
      answer: 42,
      file,
      dir: root,
      url: pathToFileURL(file).href,
      sep: "/",
      strict: true,
    })
    const files = cacheFiles(env)
    expect(files).toHaveLength(1)
    expect(statSync(cacheDirOf(env)).mode & 0o777).toBe(0o700)
    const path = join(cacheDirOf(env), files[0]!)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const written = readFileSync(path)

    const second = await load(file, env)
    expect(second.cache).toBe("used")
    expect(second.exports).toEqual(first.exports)
    // A cache V8 took is not written again.
    expect(readFileSync(path).equals(written)).toBe(true)
  })

  it("holds what the run compiled, even after collections that drop unused bytecode", async () => {
    const root = tempDir()
    // Many functions, each run once by the script's top level (as a bundle's modules' code is).
    const functions = Array.from(
      { length: 200 },
      (_, i) =>
        `exports.f${i} = function f${i}(x) { let s = 0; for (let k = 0; k < x; k++) s += k * ${i}; return s + ${i} };`,
    )
    const file = join(root, "many.cjs")
    writeFileSync(
      file,
      `(function (exports, require, module, __filename, __dirname, __importMetaUrl) {"use strict";
  ${functions.join("\n  ")}
  for (const name in exports) exports[name](3)
})
`,
    )
    // The premise: in a process that does not keep its bytecode, the churn drops some of it.
    const sizes = JSON.parse(
      await run(
        `import { readFileSync } from "node:fs"
import { Script } from "node:vm"
const script = new Script(readFileSync(${JSON.stringify(file)}, "utf8"))
script.runInThisContext()({}, () => undefined, {}, "", "", "")
const before = script.createCachedData().length
${CHURN}
process.stdout.write(JSON.stringify([before, script.createCachedData().length]))`,
        {},
      ),
    ) as [number, number]
    expect(sizes[1]).toBeLessThan(sizes[0])

    const quiet = { XDG_CACHE_HOME: join(root, "quiet") }
    const churned = { XDG_CACHE_HOME: join(root, "churned") }
    expect((await load(file, quiet)).cache).toBe("absent")
    expect((await load(file, churned, CHURN)).cache).toBe("absent")
    const sizeOf = (env: { XDG_CACHE_HOME: string }) =>
      statSync(join(cacheDirOf(env), cacheFiles(env)[0]!)).size
    expect(sizeOf(churned)).toBe(sizeOf(quiet))
    // And it is taken by the next run, which compiled it under the same flags.
    expect((await load(file, churned, CHURN)).cache).toBe("used")
  })

  it("is keyed by the script's bytes: a changed script of the same name and length has its own", async () => {
    const root = tempDir()
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    expect((await load(script(root, "bundle.cjs", 21), env)).cache).toBe("absent")
    const changed = await load(script(root, "bundle.cjs", 12), env)
    expect(changed.cache).toBe("absent")
    expect(changed.exports?.answer).toBe(24)
    expect(cacheFiles(env)).toHaveLength(2)
  })

  it("a corrupt cache is not given to V8: compiled from source, then rewritten", async () => {
    const root = tempDir()
    const file = script(root, "bundle.cjs", 21)
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    await load(file, env)
    const path = join(cacheDirOf(env), cacheFiles(env)[0]!)
    const bytes = readFileSync(path)
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0xff
    writeFileSync(path, bytes, { mode: 0o600 })
    const corrupt = await load(file, env)
    expect(corrupt.cache).toBe("absent")
    expect(corrupt.exports?.answer).toBe(42)
    expect(readFileSync(path).equals(bytes)).toBe(false)
    expect((await load(file, env)).cache).toBe("used")

    writeFileSync(path, "short", { mode: 0o600 })
    expect((await load(file, env)).cache).toBe("absent")
    expect((await load(file, env)).cache).toBe("used")
  })

  it("a whole cache V8 refuses (made for another source) is detected and rewritten", async () => {
    const root = tempDir()
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    const file = script(root, "bundle.cjs", 21)
    await load(file, env)
    const path = join(cacheDirOf(env), cacheFiles(env)[0]!)
    // Another script's cache (whole, its digest right) under this script's name.
    const otherEnv = { XDG_CACHE_HOME: join(root, "other") }
    await load(script(tempDir(), "bundle.cjs", 123_456), otherEnv)
    writeFileSync(path, readFileSync(join(cacheDirOf(otherEnv), cacheFiles(otherEnv)[0]!)), { mode: 0o600 })
    const refused = await load(file, env)
    expect(refused.cache).toBe("rejected")
    expect(refused.exports?.answer).toBe(42)
    expect((await load(file, env)).cache).toBe("used")
  })

  it("REWIND_CODE_CACHE=off reads and writes nothing", async () => {
    const root = tempDir()
    const file = script(root, "bundle.cjs", 21)
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    await load(file, env)
    const written = cacheFiles(env).map((name) => readFileSync(join(cacheDirOf(env), name)))
    expect(codeCacheDir({ ...env, REWIND_CODE_CACHE: "off" })).toBeUndefined()
    expect((await load(file, { ...env, REWIND_CODE_CACHE: "off" })).cache).toBe("not used")
    expect(cacheFiles(env).map((name) => readFileSync(join(cacheDirOf(env), name)))).toEqual(written)
    const fresh = { XDG_CACHE_HOME: join(root, "fresh") }
    expect((await load(file, { ...fresh, REWIND_CODE_CACHE: "off" })).cache).toBe("not used")
    expect(existsSync(fresh.XDG_CACHE_HOME)).toBe(false)
  })

  it("a directory it cannot create is not used", async () => {
    const root = tempDir()
    const file = script(root, "bundle.cjs", 21)
    writeFileSync(join(root, "a-file"), "")
    // Under a regular file: no directory can be made there (whoever runs the test, root included).
    const env = { XDG_CACHE_HOME: join(root, "a-file", "cache") }
    expect((await load(file, env)).cache).toBe("not used")
  })

  it("a directory others may write is neither read nor written", async () => {
    const root = tempDir()
    const file = script(root, "bundle.cjs", 21)
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    await load(file, env)
    chmodSync(cacheDirOf(env), 0o777)
    expect((await load(file, env)).cache).toBe("not used")
    const other = { XDG_CACHE_HOME: join(root, "other") }
    mkdirSync(cacheDirOf(other), { recursive: true })
    chmodSync(cacheDirOf(other), 0o777)
    expect((await load(file, other)).cache).toBe("not used")
    expect(readdirSync(cacheDirOf(other))).toEqual([])
  })

  it("keeps the newest few caches of a script name", async () => {
    const root = tempDir()
    const env = { XDG_CACHE_HOME: join(root, "cache") }
    for (let i = 0; i < 7; i++) await load(script(root, "bundle.cjs", i), env)
    expect(cacheFiles(env)).toHaveLength(4)
  })

  it("without XDG_CACHE_HOME it lies in ~/.cache/rewind", () => {
    expect(codeCacheDir({})).toMatch(/[\\/]\.cache[\\/]rewind$/)
    expect(codeCacheDir({ XDG_CACHE_HOME: "relative" })).toMatch(/[\\/]\.cache[\\/]rewind$/)
  })
})
