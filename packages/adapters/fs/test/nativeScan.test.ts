// The native directory scanner against the JavaScript one: on random trees (files of every mode,
// nested directories, symlinks that dangle or lead out, FIFOs) and on paths that fail, both give
// the same answer, entry for entry and error for error.
import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { Effect, Either, FastCheck as fc } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { nativeModule } from "../src/internal/nativeModule.js"
import { hasMkfifo } from "./fsFixture.js"

const p = (path: string) => path as WorkspacePath

const nativePrimitives = NodeWorkspace.nodePrimitives("/", { durability: "atomic", nativeScan: true })
const jsPrimitives = NodeWorkspace.nodePrimitives("/", { durability: "atomic", nativeScan: false })

const scanBoth = (paths: ReadonlyArray<string>) => {
  const sorted = <A extends { readonly name: string }, E>(r: Either.Either<ReadonlyArray<A>, E>) =>
    Either.map(r, (entries) => [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)))
  return {
    native: Effect.runSync(nativePrimitives.readdirStatMany!(paths)).map(sorted),
    javascript: Effect.runSync(jsPrimitives.readdirStatMany!(paths)).map(sorted),
  }
}

const withTemp = <A>(run: (base: string) => A): A => {
  const base = mkdtempSync(join(tmpdir(), "rewind-dirscan-"))
  try {
    return run(base)
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

/** `withTemp` for a test that waits (a workspace lists directories off the main thread). */
const withTempAsync = async <A>(run: (base: string) => Promise<A>): Promise<A> => {
  const base = mkdtempSync(join(tmpdir(), "rewind-dirscan-"))
  try {
    return await run(base)
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

/** A workspace's answer, waited for. */
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const name = fc.constantFrom("a", "b.ts", "Ü.md", "日本", ".hidden", "x y", "z-9", "lib", "n")
type Node =
  | { readonly kind: "file"; readonly size: number; readonly mode: number }
  | { readonly kind: "dir"; readonly children: ReadonlyArray<readonly [string, Node]> }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "fifo" }

const node: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({
      kind: fc.constant("file" as const),
      size: fc.nat(3000),
      mode: fc.constantFrom(0o644, 0o755, 0o600, 0o4755, 0o444),
    }),
    fc.record({
      kind: fc.constant("dir" as const),
      children: fc.uniqueArray(fc.tuple(name, tie("node")), { maxLength: 5, selector: ([n]) => n }),
    }),
    fc.record({
      kind: fc.constant("link" as const),
      target: fc.constantFrom("a", "../outside", "/etc", "missing/x", "lib/", "日本"),
    }),
    fc.constant({ kind: "fifo" as const }),
  ),
})).node

/** Writes the tree; returns every directory in it. */
const plant = (at: string, tree: Node, directories: Array<string>): void => {
  switch (tree.kind) {
    case "file":
      writeFileSync(at, Buffer.alloc(tree.size, 7))
      chmodSync(at, tree.mode)
      return
    case "link":
      symlinkSync(tree.target, at)
      return
    case "fifo":
      if (hasMkfifo) execFileSync("mkfifo", [at])
      else writeFileSync(at, "")
      return
    case "dir":
      mkdirSync(at)
      directories.push(at)
      for (const [child, sub] of tree.children) plant(join(at, child), sub, directories)
  }
}

describe("native directory scanner", () => {
  it.skipIf(process.platform !== "linux")("is built on Linux by the install step", () => {
    // `npm ci` builds it with node-gyp; a silent fallback would make every scan slow unseen.
    expect(NodeWorkspace.nativeScanAvailable).toBe(true)
  })

  it.skipIf(!NodeWorkspace.nativeScanAvailable)("lists random trees as the JavaScript scanner does", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, node), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (roots, reversed) =>
          withTemp((base) => {
            const directories = [base]
            const seen = new Set<string>()
            for (const [n, tree] of roots) {
              if (seen.has(n)) continue
              seen.add(n)
              plant(join(base, n), tree, directories)
            }
            const asked = reversed ? [...directories].reverse() : directories
            const { native, javascript } = scanBoth(asked)
            expect(native).toEqual(javascript)
            expect(native.every(Either.isRight)).toBe(true)
          }),
      ),
      { numRuns: 60, seed: 7 },
    )
  })

  it.skipIf(!NodeWorkspace.nativeScanAvailable)(
    "lists a directory larger than one read of its entries (several getdents64 batches) in full",
    () =>
      withTempAsync(async (base) => {
        // 3,000 names of ~70 bytes: ~270 KB of directory records, four times the scanner's buffer.
        const big = join(base, "big")
        mkdirSync(big)
        const names: Array<string> = []
        for (let i = 0; i < 3000; i++) {
          const n = `${String(i).padStart(5, "0")}-${"é".repeat(20)}-${"x".repeat(i % 40)}`
          names.push(n)
          if (i % 500 === 7) symlinkSync(`${"t".repeat(300)}/${i}`, join(big, n))
          else if (i % 700 === 3) mkdirSync(join(big, n))
          else writeFileSync(join(big, n), String(i))
        }
        const { native, javascript } = scanBoth([big])
        expect(native).toEqual(javascript)
        const listed = Either.getOrThrow(native[0]!)
        expect(listed.map((e) => e.name).sort()).toEqual([...names].sort())
        expect(listed.filter((e) => e.target !== undefined)).toHaveLength(6)
        // The same through the confined scan a workspace takes (scanBeneath).
        const scanned = async (nativeScan: boolean) =>
          (
            await run(
              Effect.flatMap(NodeWorkspace.make(base, { nativeScan }), (w) => w.scanDirectories([p("big")])),
            )
          ).map((r) => Either.getOrUndefined(r))
        const confined = await scanned(true)
        expect(confined).toEqual(await scanned(false))
        expect(confined[0]).toHaveLength(3000)
      }),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable)(
    "lets a workspace scan random trees as the JavaScript scanner does, through symlinks and refusals",
    () =>
      fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(name, node), { minLength: 1, maxLength: 6 }), (roots) =>
          withTempAsync(async (base) => {
            const root = join(base, "root")
            mkdirSync(root)
            mkdirSync(join(base, "outside"))
            writeFileSync(join(base, "outside", "secret"), "s")
            const directories = [root]
            const seen = new Set<string>()
            for (const [n, tree] of roots) {
              if (seen.has(n)) continue
              seen.add(n)
              plant(join(root, n), tree, directories)
            }
            const relative = directories.map((d) => d.slice(root.length + 1))
            // Every directory, every path through a symlink of the tree, and paths that fail.
            const asked = [
              ...relative.map((r) => (r === "" ? undefined : r)),
              ...relative.flatMap((r) => [...seen].map((n) => (r === "" ? n : `${r}/${n}`))),
              "missing/deeper",
              "../outside",
              "lib/../..",
            ] as Array<WorkspacePath | undefined>
            const scan = (nativeScan: boolean) =>
              run(Effect.flatMap(NodeWorkspace.make(root, { nativeScan }), (w) => w.scanDirectories(asked)))
            const withNative = await scan(true)
            const withJs = await scan(false)
            expect(withNative.map((r) => Either.getOrUndefined(r))).toEqual(
              withJs.map((r) => Either.getOrUndefined(r)),
            )
            expect(withNative.map((r) => Either.isLeft(r) && [r.left._tag, r.left.message])).toEqual(
              withJs.map((r) => Either.isLeft(r) && [r.left._tag, r.left.message]),
            )
          }),
        ),
        { numRuns: 40, seed: 11 },
      ),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable)(
    "answers many directories at once in the order asked, on its threads",
    () =>
      withTemp((base) => {
        const directories: Array<string> = []
        for (let d = 0; d < 64; d++) {
          const dir = join(base, `d${d}`)
          mkdirSync(dir)
          directories.push(dir)
          for (let f = 0; f < d % 7; f++) writeFileSync(join(dir, `f${f}`), `${d}/${f}`)
        }
        // Failing paths mixed in: each gets its own answer and the others are unaffected.
        const asked = [...directories, join(base, "missing"), join(base, "d3", "f0"), base]
        const { native, javascript } = scanBoth(asked)
        expect(native).toEqual(javascript)
        expect(native.map((r) => (Either.isRight(r) ? r.right.length : "failed"))).toEqual([
          ...directories.map((_, d) => d % 7),
          "failed",
          "failed",
          64,
        ])
      }),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable)(
    "fails a path with Node's own error code and wording, and refuses a symlink in its place",
    () =>
      withTemp((base) => {
        writeFileSync(join(base, "file"), "x")
        mkdirSync(join(base, "real"))
        symlinkSync("real", join(base, "link"))
        const asked = [join(base, "missing"), join(base, "file")]
        const { native, javascript } = scanBoth(asked)
        expect(native).toEqual(javascript)
        expect(native.map((r) => Either.isLeft(r) && r.left.code)).toEqual(["ENOENT", "ENOTDIR"])
        // The path was checked free of symlinks before it reached the scanner: one found there now
        // was swapped in since, and is not followed.
        const [swapped] = Effect.runSync(nativePrimitives.readdirStatMany!([join(base, "link")]))
        // (Linux says ENOTDIR for O_DIRECTORY | O_NOFOLLOW on a symlink, other systems ELOOP.)
        expect(["ENOTDIR", "ELOOP"]).toContain(Either.isLeft(swapped!) && swapped.left.code)
      }),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable)(
    "hands back the same listing for a directory that did not change, and a new one for any change",
    () =>
      withTempAsync(async (base) => {
        const root = join(base, "root")
        for (const d of ["a", "b", "c", "d", "e"]) {
          mkdirSync(join(root, d), { recursive: true })
          writeFileSync(join(root, d, "f.txt"), "12345")
        }
        symlinkSync("a", join(root, "e", "link"))
        const workspace = Effect.runSync(NodeWorkspace.make(root))
        const asked = [undefined, "a", "b", "c", "d", "e"] as Array<WorkspacePath | undefined>
        const scan = async () => (await run(workspace.scanDirectories(asked))).map(Either.getOrThrow)
        const first = await scan()
        const unchanged = await scan()
        for (const [i, listing] of unchanged.entries()) expect(listing).toBe(first[i])
        // A directory asked twice in one call is answered twice, alike.
        const twice = (await run(workspace.scanDirectories([p("d"), p("d")]))).map(Either.getOrThrow)
        expect(twice).toEqual([first[4], first[4]])
        expect(twice[0]).toBe(first[4])
        // Same size, new mtime; a mode change; a new name; a link retargeted (same length).
        utimesSync(join(root, "a", "f.txt"), new Date(1_000_000), new Date(2_000_000))
        chmodSync(join(root, "b", "f.txt"), 0o600)
        writeFileSync(join(root, "c", "g.txt"), "")
        rmSync(join(root, "e", "link"))
        symlinkSync("b", join(root, "e", "link"))
        const second = await scan()
        const fresh: Array<ReadonlyArray<unknown>> = []
        for (const d of asked)
          fresh.push(
            Either.getOrThrow(
              (await run(NodeWorkspace.make(root).pipe(Effect.flatMap((w) => w.scanDirectories([d])))))[0]!,
            ),
          )
        expect(second).toEqual(fresh)
        // The root lists c and e, whose mtimes moved with their entries; only d is untouched.
        expect(second.map((listing, i) => listing === first[i])).toEqual([
          false,
          false,
          false,
          false,
          true,
          false,
        ])
        expect(second[1]![0]!.stat.mtimeNs).toBe(2_000_000_000_000n)
        expect(second[5]!.find((e) => e.name === "link")?.target).toBe("b")
        // Another workspace over the same root keeps its own listings.
        const other = Effect.runSync(NodeWorkspace.make(root))
        const elsewhere = (await run(other.scanDirectories(asked))).map(Either.getOrThrow)
        expect(elsewhere).toEqual(second)
        for (const [i, listing] of elsewhere.entries()) expect(listing).not.toBe(second[i])
      }),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable)(
    "answers as the JavaScript scanner does when the root itself is gone",
    () =>
      withTempAsync(async (base) => {
        const root = join(base, "root")
        mkdirSync(join(root, "src"), { recursive: true })
        const withNative = Effect.runSync(NodeWorkspace.make(root))
        const withJs = Effect.runSync(NodeWorkspace.make(root, { nativeScan: false }))
        const asked = [undefined, p("src")]
        // Listed once, so the native side also holds listings of the root it can no longer open.
        await run(withNative.scanDirectories(asked))
        rmSync(root, { recursive: true })
        const fromNative = await run(withNative.scanDirectories(asked))
        const fromJs = await run(withJs.scanDirectories(asked))
        expect(fromNative.every(Either.isLeft)).toBe(true)
        expect(fromNative.map((r) => Either.isLeft(r) && [r.left._tag, r.left.message])).toEqual(
          fromJs.map((r) => Either.isLeft(r) && [r.left._tag, r.left.message]),
        )
      }),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable)("reports a symlink's target however long it is", () =>
    withTemp((base) => {
      const long = `${"segment/".repeat(400)}end`
      symlinkSync(long, join(base, "long"))
      symlinkSync("x", join(base, "short"))
      const { native, javascript } = scanBoth([base])
      expect(native).toEqual(javascript)
    }),
  )

  it.skipIf(!NodeWorkspace.nativeScanAvailable || process.platform !== "linux")(
    "the confined calls take their optional arguments as optional: no previous bytes, no seal",
    () =>
      withTempAsync(async (base) => {
        mkdirSync(join(base, "d"))
        writeFileSync(join(base, "d", "f"), "x")
        type Listing = { readonly names: ReadonlyArray<string> }
        const module = nativeModule as {
          readonly scanBeneath: (...args: ReadonlyArray<unknown>) => ReadonlyArray<Listing>
          readonly scanBeneathAsync: (...args: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Listing>>
        }
        // Without `previous`, with it undefined, and with it an array: the same listings.
        for (const args of [
          [base, ["", "d"], 1],
          [base, ["", "d"], 1, undefined],
          [base, ["", "d"], 1, []],
        ]) {
          const names = (listings: ReadonlyArray<Listing>) => listings.map((l) => [...l.names].sort())
          expect(names(module.scanBeneath(...args))).toEqual([["d"], ["f"]])
          expect(names(await module.scanBeneathAsync(...args))).toEqual([["d"], ["f"]])
        }
      }),
  )
})
