/**
 * The native hook client's own rules against Node's (its `--probe-*` modes): its JSON reader
 * never accepts what `JSON.parse` refuses and accepts what `JSON.stringify` writes, its SHA-256 is
 * Node's, and it names the same socket as `workspaceSocketPath` for the same (workspace, store)
 * and environment — the property the fast path rests on (a different name would only send hooks
 * to the Node client, but silently slower). Seeded properties.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { workspaceSocketPath } from "../src/server/workspaceSocket.js"
import { tempDir } from "./cliHarness.js"
import { nativeClient } from "./hookHarness.js"

const probeJson = (input: string | Buffer) => {
  const [verdict, hex] = execFileSync(nativeClient(), ["--probe-json"], { input })
    .toString()
    .trim()
    .split(" ")
  return { accepted: verdict === "accepted", sha256: hex }
}

const parses = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const sha256 = (input: string | Buffer) => createHash("sha256").update(input).digest("hex")

describe("the native hook client's rules are Node's (probe)", { timeout: 120_000 }, () => {
  it("accepts what JSON.stringify writes (compact and indented), with Node's SHA-256", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), (value, indent) => {
        const text = JSON.stringify(value, null, indent ? 2 : undefined)
        const probe = probeJson(text)
        expect(probe).toEqual({ accepted: true, sha256: sha256(text) })
      }),
      { seed: 27, numRuns: 60 },
    )
  })

  it("never accepts what JSON.parse refuses (mutated JSON texts)", () => {
    const piece = fc.constantFrom(
      '"',
      "\\",
      ",",
      ":",
      "{",
      "}",
      "[",
      "]",
      " ",
      "\n",
      "0",
      "-",
      "e",
      ".",
      "\u0001",
      "\\u",
      "d800",
      "é",
      "tru",
      "01",
      "1.",
    )
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }),
        fc.array(fc.tuple(fc.nat(), piece, fc.nat(3)), { maxLength: 3 }),
        (value, edits) => {
          let text = JSON.stringify(value)
          for (const [at, insert, cut] of edits) {
            const i = text.length === 0 ? 0 : at % (text.length + 1)
            text = text.slice(0, i) + insert + text.slice(i + cut)
          }
          const probe = probeJson(text)
          if (probe.accepted) expect(parses(text)).toBe(true)
          expect(probe.sha256).toBe(sha256(text))
        },
      ),
      { seed: 2727, numRuns: 150 },
    )
    // Bytes that are not UTF-8 are refused (the Node client reads them with replacements).
    expect(probeJson(Buffer.from([0x22, 0xff, 0x22])).accepted).toBe(false)
    expect(probeJson(Buffer.from('"\xc3\xa9"', "latin1")).accepted).toBe(true)
    for (const bad of [
      "",
      " ",
      "\ufeff{}",
      "{}x",
      "[1,]",
      '{"a" 1}',
      "01",
      "1.",
      "-",
      '"\t"',
      "nul",
      "[".repeat(300) + "]".repeat(300),
    ])
      expect(probeJson(bad).accepted, JSON.stringify(bad)).toBe(false)
  })

  it("names the same socket as workspaceSocketPath (real paths, symlinks, a store not made yet, XDG_RUNTIME_DIR or the temp dir)", () => {
    const base = tempDir()
    const root = join(base, "ws")
    mkdirSync(join(root, ".rewind"), { recursive: true })
    symlinkSync(root, join(base, "link"))
    const runtime = join(base, "run")
    mkdirSync(runtime, { mode: 0o700 })
    const tmp = join(base, "tmp")
    mkdirSync(tmp)
    const envs: ReadonlyArray<Record<string, string>> = [
      { XDG_RUNTIME_DIR: runtime, TMPDIR: tmp },
      { XDG_RUNTIME_DIR: "", TMPDIR: `${tmp}/` },
      { XDG_RUNTIME_DIR: join(runtime, "x".repeat(90)), TMPDIR: tmp },
    ]
    const pairs: ReadonlyArray<[string, string]> = [
      [root, join(root, ".rewind")],
      [join(base, "link"), join(base, "link", ".rewind")],
      [root, join(base, "elsewhere", "store")],
      [join(root, "sub", ".."), join(root, ".", ".rewind")],
    ]
    for (const env of envs) {
      for (const [workspace, store] of pairs) {
        const native = execFileSync(nativeClient(), ["--probe-socket", workspace, store], {
          env: { PATH: process.env.PATH ?? "", ...env },
        })
          .toString()
          .trim()
        // Node's side reads the temp dir from this process's environment (os.tmpdir()).
        const saved = process.env.TMPDIR
        process.env.TMPDIR = env.TMPDIR
        const expected = workspaceSocketPath(workspace, store, env) ?? "(none)"
        if (saved === undefined) delete process.env.TMPDIR
        else process.env.TMPDIR = saved
        expect(native, `${workspace} ${store} ${JSON.stringify(env)}`).toBe(expected)
      }
    }
  })
})
