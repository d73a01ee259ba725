// Compiled ignore files are remembered by the hash of their bytes (core's ignoreFileCompile.ts), so
// a per-path protection check does not recompile the same root `.gitignore` on every call. These
// tests pin what the memo must not change: the rules of a file are those of its bytes now (an
// edited file is recompiled, and going back to earlier bytes gives their rules again), equal
// bytes in two directories apply each under its own directory, and a refusal for taking too long
// by the clock is not remembered (the next check compiles again). Each test uses bytes no other
// test uses, since the memo lives as long as the module.
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { checkProtection } from "@rewind/core"
import { Clock, Effect } from "effect"
import { makeEnv, ROOT } from "../support/fileRewindEnv.js"

const p = (s: string) => s as WorkspacePath

/** Each path's protection as `kind@rules-of` (or "free"), for a fresh check (one operation). */
const verdicts = (env: ReturnType<typeof makeEnv>, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const found = yield* checkProtection(paths.map(p))
    return paths.map((path) => {
      const hit = found.get(p(path))
      if (hit === undefined) return "free"
      const of = /ignore rules of (.*)$/.exec(hit.message)?.[1]
      return `${hit.kind}@${of ?? "?"}`
    })
  }).pipe(Effect.provide(env.layer()))

/** A clock whose every read is 3 s after the last: any compile overruns its 2 s budget. */
const slowClock = (): Clock.Clock => {
  let now = 1_800_000_000_000
  const tick = () => {
    now += 3_000
    return now
  }
  const clock: Clock.Clock = Object.create(Clock.make())
  return Object.assign(clock, {
    unsafeCurrentTimeMillis: tick,
    currentTimeMillis: Effect.sync(tick),
    unsafeCurrentTimeNanos: () => BigInt(tick()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(tick()) * 1_000_000n),
  })
}

describe("compiled ignore files are remembered by their bytes, never by their path", () => {
  it.effect("an edited ignore file gives its new rules; its earlier bytes their earlier rules", () =>
    Effect.gen(function* () {
      const env = makeEnv()
      const asked = ["x.log", "y.tmp", "sub/z.log"]
      const write = (text: string) => env.fs.writeFile(`${ROOT}/.gitignore`, `# memo edit test\n${text}`)
      write("*.log\n")
      const first = yield* verdicts(env, asked)
      expect(first).toEqual(["ignored@the workspace root", "free", "ignored@the workspace root"])
      // The same bytes again (a hit) answer as the first compile did.
      expect(yield* verdicts(env, asked)).toEqual(first)
      write("*.tmp\n")
      expect(yield* verdicts(env, asked)).toEqual(["free", "ignored@the workspace root", "free"])
      write("*.log\n")
      expect(yield* verdicts(env, asked)).toEqual(first)
    }),
  )

  it.effect("equal bytes in two directories apply each under its own directory", () =>
    Effect.gen(function* () {
      const env = makeEnv()
      const text = "# memo two directories\n*.log\n!keep.log\n/only-here.txt\n"
      env.fs.writeFile(`${ROOT}/a/.gitignore`, text)
      env.fs.writeFile(`${ROOT}/b/.gitignore`, text)
      const asked = [
        "a/x.log",
        "b/x.log",
        "a/keep.log",
        "a/only-here.txt",
        "b/only-here.txt",
        "only-here.txt",
      ]
      const expected = ["ignored@a", "ignored@b", "free", "ignored@a", "ignored@b", "free"]
      expect(yield* verdicts(env, asked)).toEqual(expected)
      expect(yield* verdicts(env, asked)).toEqual(expected)
      // Asked in the other order (b's directory decided first, a's rules from the memo).
      expect(yield* verdicts(env, [...asked].reverse())).toEqual([...expected].reverse())
    }),
  )

  it.effect("a file refused for compiling too long is compiled again by the next check", () =>
    Effect.gen(function* () {
      const env = makeEnv()
      env.fs.writeFile(`${ROOT}/.gitignore`, "# memo slow clock\n*.log\n")
      // Under a clock that says the compile took 3 s, the file is refused: no rules apply.
      expect(yield* verdicts(env, ["x.log"]).pipe(Effect.withClock(slowClock()))).toEqual(["free"])
      // That refusal was the clock's, not the bytes': the same bytes now compile and apply.
      expect(yield* verdicts(env, ["x.log"])).toEqual(["ignored@the workspace root"])
      // And a compiled file stays compiled whatever the clock says afterwards (a memo hit).
      expect(yield* verdicts(env, ["x.log"]).pipe(Effect.withClock(slowClock()))).toEqual([
        "ignored@the workspace root",
      ])
    }),
  )
})
