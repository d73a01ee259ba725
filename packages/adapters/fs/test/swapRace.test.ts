// The acceptance test of kernel-confined writes (issue 20, item 6): while a child process
// exchanges a directory inside the root with a symlink to a directory outside it
// (renameat2(RENAME_EXCHANGE) in a tight loop), the workspace writes a few thousand files and
// deletes a thousand under that directory, through the Workspace service as a restore does. In
// every try nothing outside the root changes: no file written, replaced or deleted there, no temp
// file left there. Individual operations may fail (a link on the way is refused); only the outside
// matters. The outside holds files of the very names written and deleted, so an escaped write or
// delete shows in its fingerprint.
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { makeConfinedWorkspace } from "@rewind/core"
import { Effect } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { nodePrimitives } from "../src/NodeWorkspace.js"
import { tempDirectory } from "./fsFixture.js"

/** Tries per way of opening directories (openat2; the component walk systems without it use). */
const TRIES = { openat2: 3, walk: 2 } as const
const WRITES = 2000
const DELETES = 1000
/** The attacker's own bound, in case the test dies before killing it. */
const ATTACKER_SECONDS = 30

const exchangeLoop = fileURLToPath(new URL("./fixtures/exchangeLoop.py", import.meta.url))
const name = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, "0")}`

/** A hash of everything under a (flat) directory: names, kinds, modes, sizes, mtimes, contents. */
const fingerprint = (directory: string): string => {
  const hash = createHash("sha256")
  for (const entry of readdirSync(directory).sort()) {
    const path = join(directory, entry)
    const s = lstatSync(path, { bigint: true })
    hash.update(`${entry}\0${s.mode} ${s.size} ${s.mtimeNs}\0`)
    hash.update(s.isSymbolicLink() ? readlinkSync(path) : s.isFile() ? readFileSync(path) : "dir")
  }
  return hash.digest("hex")
}

/** Starts the attacker and waits until it has made its first exchange. */
const startAttacker = (a: string, b: string) =>
  Effect.acquireRelease(
    Effect.async<ChildProcess, Error>((resume) => {
      const child = spawn("python3", [exchangeLoop, a, b, String(ATTACKER_SECONDS)], {
        stdio: ["ignore", "pipe", "inherit"],
      })
      child.once("error", (e) => resume(Effect.fail(e)))
      child.stdout!.once("data", () => resume(Effect.succeed(child)))
    }),
    (child) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGKILL")
      }),
  )

const oneTry = (attempt: number, walk: boolean) =>
  Effect.scoped(
    Effect.gen(function* () {
      const base = realpathSync(yield* tempDirectory(`swap-race-${attempt}`))
      const root = join(base, "ws")
      const outside = join(base, "outside")
      mkdirSync(join(root, "d"), { recursive: true })
      mkdirSync(outside)
      // Look-alikes of a few of the files written (an escaped write to any other name shows as a
      // new entry), and of every file deleted.
      for (let i = 0; i < WRITES; i += 20) writeFileSync(join(outside, name("f", i)), `outside ${i}\n`)
      for (let i = 0; i < DELETES; i++) {
        if (i % 10 === 0) writeFileSync(join(outside, name("del", i)), `outside ${i}\n`)
        writeFileSync(join(root, "d", name("del", i)), `inside ${i}\n`)
      }
      // `d` and `dlink` trade places all the time: `d` is now the directory, now a link out.
      symlinkSync(outside, join(root, "dlink"))
      const before = fingerprint(outside)

      const workspace = walk
        ? makeConfinedWorkspace(root, nodePrimitives(root, { durability: "atomic" }, { walkBeneath: true }))
        : yield* NodeWorkspace.make(root, { durability: "atomic" })
      yield* startAttacker(join(root, "d"), join(root, "dlink"))
      const content = (i: number) => new TextEncoder().encode(`v2 ${name("f", i)}\n`)
      const started = performance.now()
      let refused = 0
      for (let i = 0; i < WRITES; i++) {
        const r = yield* Effect.either(workspace.write(`d/${name("f", i)}` as WorkspacePath, content(i)))
        if (r._tag === "Left") refused++
      }
      for (let i = 0; i < DELETES; i++) {
        const r = yield* Effect.either(workspace.delete(`d/${name("del", i)}` as WorkspacePath))
        if (r._tag === "Left") refused++
      }
      console.log(
        `${walk ? "walk" : "openat2"} try ${attempt}: ${Math.round(performance.now() - started)} ms of writes and deletes, ${refused} refused`,
      )
      return {
        before,
        after: fingerprint(outside),
        temps: readdirSync(outside).filter((n) => n.endsWith(".tmp")),
        refused,
      }
    }),
  )

describe.each([
  ["openat2", false],
  ["component walk", true],
])("swap race (%s): a directory exchanged with a link out of the root during a restore", (_, walk) => {
  it.effect.skipIf(NodeWorkspace.implementation.fileOperations !== "kernel-confined")(
    `writes ${WRITES} files and deletes ${DELETES} without touching anything outside, in every try`,
    () =>
      Effect.gen(function* () {
        let refusedInAll = 0
        for (let attempt = 0; attempt < TRIES[walk ? "walk" : "openat2"]; attempt++) {
          const { before, after, temps, refused } = yield* oneTry(attempt, walk)
          expect(temps, `try ${attempt}: temp files outside the root`).toEqual([])
          expect(after === before, `try ${attempt}: the outside tree changed`).toBe(true)
          refusedInAll += refused
        }
        // The attacker really raced the workspace: some operations met the link and were refused.
        expect(refusedInAll).toBeGreaterThan(0)
      }),
  )
})
