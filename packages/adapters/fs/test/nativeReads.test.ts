// A capture's reads on the native pool thread (`native/readbatch.c`, `internal/nativeReads.ts`)
// answer every path as the main-thread reads and the checked JavaScript reads do (the same bytes
// and mode, the same refusal or absence), over random small trees with symlinks, empty and large
// files; each file they read carries the SHA-256 of exactly its bytes; a file changed moments
// before the read is declined by the native side and read the walked way, never recorded from a
// read that could be torn.
import { createHash } from "node:crypto"
import { mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { hashContent, type WorkspaceFile } from "@rewind/core"
import { Effect, Either, FastCheck as fc, Option } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { nativeModule } from "../src/internal/nativeModule.js"
import { HOLD_STILL_WINDOWS_NS } from "../src/internal/stableRead.js"
import { tempDirectory } from "./fsFixture.js"
import { readAnswerShape } from "./readAnswer.js"

const available = NodeWorkspace.implementation.reads === "native-thread"

/** Longer than stableRead's SETTLE_NS: files this old are read by the native side, not declined. */
const SETTLED_MS = 150

type Answer = Either.Either<Option.Option<WorkspaceFile>, unknown>

const shape = readAnswerShape

const hashOf = (answer: Answer) =>
  Either.isRight(answer) && Option.isSome(answer.right) ? answer.right.value.hash : undefined

interface Node {
  readonly path: string
  readonly kind: "file" | "link"
  readonly size: number
  readonly seed: number
  readonly target: string
}

const contentOf = (size: number, seed: number) => {
  const out = Buffer.alloc(size)
  for (let i = 0; i < size; i++) out[i] = (seed + i * 31 + (i >> 7)) & 0xff
  return out
}

const names = fc.constantFrom("a", "b", "c", "d.txt", "e.js")
const paths = fc.array(names, { minLength: 1, maxLength: 3 }).map((segments) => segments.join("/"))
const sizes = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 200 }),
  fc.constantFrom(55, 56, 63, 64, 65, 4096, 70_000, 1_100_000),
)
const nodes = fc.array(
  fc.record({
    path: paths,
    kind: fc.constantFrom("file" as const, "file" as const, "link" as const),
    size: sizes,
    seed: fc.integer({ min: 0, max: 255 }),
    target: fc.constantFrom("a", "d.txt", "../outside/secret", "b/c", "missing"),
  }),
  { maxLength: 14 },
)

/** Writes what it can of `tree` (a path whose directory is taken by a file is skipped). */
const materialise = (root: string, tree: ReadonlyArray<Node>) => {
  for (const node of tree) {
    const at = join(root, node.path)
    try {
      mkdirSync(join(at, ".."), { recursive: true })
      if (node.kind === "link") symlinkSync(node.target, at)
      else writeFileSync(at, contentOf(node.size, node.seed))
    } catch {
      // Taken already (a directory, a file or a link in the way): the tree is what got written.
    }
  }
}

describe("readMany through the native pool-thread reads", () => {
  it.skipIf(!available)(
    "applies the hold-still windows it is handed (stableRead.ts's), not its own",
    async () => {
      const module = nativeModule as {
        readFilesBeneath: (
          root: string,
          relatives: Array<string>,
          walk: boolean,
          windows: readonly [number, number, number],
        ) => Promise<{ table: Float64Array }>
      }
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const dir = realpathSync(yield* tempDirectory("native-windows"))
            writeFileSync(join(dir, "fresh"), "just written")
            const modeWith = (windows: readonly [number, number, number]) =>
              Effect.promise(() => module.readFilesBeneath(dir, ["fresh"], false, windows)).pipe(
                Effect.map((batch) => batch.table[2]),
              )
            // A settle window of a minute declines a file written just now; none takes it at once.
            expect(yield* modeWith([60e9, 1e9, 5e9])).toBe(-1)
            expect(yield* modeWith([0, 0, 0])).toBe(0o644 & ~process.umask())
            // Without the windows the call is refused rather than run on a rule of its own.
            expect(() =>
              (module.readFilesBeneath as (...a: Array<unknown>) => unknown)(dir, ["fresh"], false),
            ).toThrow(/bad arguments/)
          }),
        ),
      )
    },
  )

  it.skipIf(!available)("hashes as node:crypto does, at every length around the block size", async () => {
    const module = nativeModule as {
      readFilesBeneath: (
        root: string,
        relatives: Array<string>,
        walk: boolean,
        windows: readonly [number, number, number],
      ) => Promise<{ buffer: ArrayBuffer; table: Float64Array; digests: Buffer | null }>
    }
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const dir = realpathSync(yield* tempDirectory("native-hash"))
          const lengths = [0, 1, 54, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 65_536, 300_001]
          lengths.forEach((n, i) => {
            writeFileSync(join(dir, `f${i}`), contentOf(n, i * 7))
          })
          yield* Effect.promise(() => sleep(SETTLED_MS))
          const batch = yield* Effect.promise(() =>
            module.readFilesBeneath(
              dir,
              lengths.map((_, i) => `f${i}`),
              false,
              HOLD_STILL_WINDOWS_NS,
            ),
          )
          // Node 20 exports OpenSSL's SHA256 to addons: the batch hashes (null only without it).
          expect(batch.digests).not.toBeNull()
          lengths.forEach((n, i) => {
            expect(batch.table[3 * i + 1]).toBe(n)
            const bytes = new Uint8Array(batch.buffer, batch.table[3 * i]!, n)
            expect(Buffer.from(bytes).equals(contentOf(n, i * 7))).toBe(true)
            expect(batch.digests!.toString("latin1", 64 * i, 64 * i + 64)).toBe(
              createHash("sha256")
                .update(contentOf(n, i * 7))
                .digest("hex"),
            )
          })
        }),
      ),
    )
  })

  it.scoped.skipIf(!available)(
    "answers random trees as the main-thread and checked reads do, with each file's hash",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(nodes, (tree) =>
            Effect.runPromise(
              Effect.scoped(
                Effect.gen(function* () {
                  const base = realpathSync(yield* tempDirectory("native-reads"))
                  const root = join(base, "root")
                  mkdirSync(root)
                  mkdirSync(join(base, "outside"))
                  writeFileSync(join(base, "outside", "secret"), "not the workspace's")
                  materialise(root, tree)
                  yield* Effect.promise(() => sleep(SETTLED_MS))
                  const asked = [
                    ...new Set([
                      ...tree.map((n) => n.path),
                      "a",
                      "missing",
                      "a/missing",
                      "../outside/secret",
                    ]),
                  ] as Array<WorkspacePath>
                  const threaded = yield* NodeWorkspace.make(root)
                  const mainThread = yield* NodeWorkspace.make(root, { nativeReads: false })
                  const checked = yield* NodeWorkspace.make(root, { nativeFiles: false })
                  const viaThread = yield* threaded.readMany(asked)
                  const viaMain = yield* mainThread.readMany(asked)
                  const viaChecked = yield* checked.readMany(asked)
                  let hashed = 0
                  asked.forEach((path, i) => {
                    expect(shape(viaThread[i]!), path).toEqual(shape(viaMain[i]!))
                    expect(shape(viaThread[i]!), path).toEqual(shape(viaChecked[i]!))
                    const hash = hashOf(viaThread[i]!)
                    if (hash !== undefined) {
                      hashed++
                      const file = Option.getOrThrow(Either.getOrThrow(viaThread[i]!))
                      expect(hash, path).toBe(hashContent(file.content))
                    }
                    // The main-thread reads never claim a hash.
                    expect(hashOf(viaMain[i]!)).toBeUndefined()
                  })
                  // Every settled regular file was read by the native side (none declined).
                  const files = asked.filter((_, i) => {
                    const a = viaMain[i]!
                    return Either.isRight(a) && Option.isSome(a.right)
                  })
                  expect(hashed).toBe(files.length)
                }),
              ),
            ),
          ),
          { numRuns: 15 },
        ),
      ),
    30_000,
  )

  it.scoped.skipIf(!available)(
    "declines a file changed moments before the read: it is read the walked way, whole",
    () =>
      Effect.gen(function* () {
        const root = realpathSync(yield* tempDirectory("native-fresh"))
        writeFileSync(join(root, "old"), "settled")
        yield* Effect.promise(() => sleep(SETTLED_MS))
        writeFileSync(join(root, "fresh"), "just written")
        const workspace = yield* NodeWorkspace.make(root)
        const [old, fresh] = yield* workspace.readMany(["old", "fresh"] as Array<WorkspacePath>)
        expect(hashOf(old!)).toBe(hashContent(new TextEncoder().encode("settled")))
        // Declined by the native side (ctime within SETTLE_NS): no hash, and the content the
        // walked read took once the file held still.
        expect(hashOf(fresh!)).toBeUndefined()
        expect(shape(fresh!)).toEqual({
          content: Buffer.from("just written").toString("base64"),
          mode: statSync(join(root, "fresh")).mode & 0o7777,
        })
      }),
  )
})
