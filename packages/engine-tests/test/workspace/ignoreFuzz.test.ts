// The ignore-file fuzz target (issue 21): hostile `.gitignore` / `.rewindignore` content — random
// bytes, NULs, long lines, pathological globs (runs of `*` that make a regular expression
// backtrack), too many patterns, broken classes and escapes — placed at the root and in a
// subdirectory beside names built to make a backtracking glob slow. Every capture must end in this
// process with a point, the files outside the bad rules' reach captured, and every refused ignore
// file reported as `ignore_file_refused`. `REWIND_FUZZ_FULL=1` runs ten times as many cases.
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { capturePoint, compileIgnoreFile, loadManifest } from "@rewind/core"
import { Effect, Either, FastCheck as fc } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const FULL = process.env.REWIND_FUZZ_FULL === "1"
const RUNS = FULL ? 2_000 : 200
const SEED = Number(process.env.REWIND_FUZZ_SEED ?? 20261201)

const token = fc.constantFrom(
  "*",
  "**",
  "?",
  "[a-z]",
  "[",
  "]",
  "!",
  "\\",
  "/",
  "a",
  ".",
  "#",
  " ",
  "log",
  "-",
  "{",
  "}",
)
const globLine = fc.array(token, { maxLength: 24 }).map((t) => t.join(""))
const content = fc.oneof(
  fc.array(globLine, { maxLength: 40 }).map((lines) => lines.join("\n")),
  fc.string({ unit: "binary", maxLength: 400 }),
  fc.integer({ min: 2, max: 40 }).map((n) => `${"*a".repeat(n)}*b\n`),
  fc.integer({ min: 1, max: 200 }).map((k) => `${"x".repeat(k * 1024)}\n`),
  fc.integer({ min: 1, max: 64 }).map((k) => "\u0000".repeat(k * 1024)),
  fc.integer({ min: 19_990, max: 20_100 }).map((n) => "p\n".repeat(n)),
  fc.constantFrom("*.log\n", "!keep.log\n", "sub/\n", "**/deep/**\n", "\\!x\n", "[z-a]\n"),
)

/** The root rules as the compiler takes them (refused: a.txt cannot be excluded by them). */
const rootRulesOf = (text: string) =>
  Effect.runSync(compileIgnoreFile("root", new TextEncoder().encode(text)))

describe("ignore-file fuzz", () => {
  it.effect(`every capture ends with a point and reports what it refused (${RUNS} cases, seed ${SEED})`, () =>
    Effect.gen(function* () {
      let cases = 0
      let refusedFiles = 0
      let slowest = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(content, content, fc.boolean(), async (root, sub, rewindignore) => {
            const env = makeEnv()
            const w = (p: string, c: string) => env.fs.writeFile(`${ROOT}/${p}`, c)
            w("a.txt", "a")
            w("sub/b.txt", "b")
            w("sub/x.log", "x")
            w(`sub/${"a".repeat(200)}c`, "slow name")
            w(rewindignore ? ".rewindignore" : ".gitignore", root)
            w("sub/.gitignore", sub)
            const started = performance.now()
            const outcome = await Effect.runPromise(
              Effect.gen(function* () {
                const sessionId = yield* newSession
                return yield* capturePoint(sessionId, "turn-1" as TurnId)
              }).pipe(Effect.provide(env.layer())),
            )
            slowest = Math.max(slowest, performance.now() - started)
            cases++
            expect(outcome._tag).toBe("Captured")
            if (outcome._tag !== "Captured") return
            const manifest = await Effect.runPromise(
              loadManifest(outcome.point.manifestHash).pipe(Effect.provide(env.layer())),
            )
            const refused = outcome.point.skipped
              .filter((s) => s.reason === "ignore_file_refused")
              .map((s) => s.path)
            refusedFiles += refused.length
            const subListed = [...manifest.keys()].some((p) => p.startsWith("sub/"))
            for (const [path, text, listed] of [
              [rewindignore ? ".rewindignore" : ".gitignore", root, true],
              ["sub/.gitignore", sub, subListed],
            ] as const) {
              const verdict = await Effect.runPromise(compileIgnoreFile(path, new TextEncoder().encode(text)))
              // A refused file is reported, and only a refused one (when its directory was listed).
              if (refused.includes(path)) expect(Either.isLeft(verdict), `${path} reported`).toBe(true)
              else if (listed) expect(Either.isLeft(verdict), `${path} not reported`).toBe(false)
            }
            // The root's own files are captured whatever the bad rules say, unless a rule that
            // compiled excludes them.
            if (Either.isLeft(rootRulesOf(root))) expect(manifest.has("a.txt" as never)).toBe(true)
          }),
          { numRuns: RUNS, seed: SEED },
        ),
      )
      console.log(
        `[fuzz] ignore files: ${cases} cases (seed ${SEED}), ${refusedFiles} ignore files refused, slowest capture ${slowest.toFixed(0)} ms`,
      )
    }),
  )
})
