// Random operations on a real directory tree, shared by the property tests that hold a capture's
// shortcuts (the live engine's watcher, the seal of a cold capture) against a full scan of the same
// tree: a sandbox, the operations, how to apply them, and a manifest as comparable text.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { loadManifest } from "@rewind/core"
import { Effect, FastCheck as fc } from "effect"

export interface Sandbox {
  readonly root: string
  readonly store: string
  readonly base: string
}

export const sandbox = (): Sandbox => {
  const base = mkdtempSync(join(tmpdir(), "rewind-live-"))
  const root = join(base, "ws")
  const store = join(base, "store")
  mkdirSync(root)
  mkdirSync(store)
  return { root, store, base }
}

export type Op =
  | { readonly op: "write"; readonly path: string; readonly content: string }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "rename"; readonly from: string; readonly to: string }
  | { readonly op: "mkdir"; readonly path: string }
  | { readonly op: "rmdir"; readonly path: string }
  | { readonly op: "symlink"; readonly path: string; readonly target: string }
  | { readonly op: "chmod"; readonly path: string; readonly mode: number }
  | { readonly op: "ignore"; readonly dir: string; readonly rules: string }
  /**
   * The same number of bytes written over a file, stamped with a fixed mtime (`STAMP`): twice in a
   * row on the same file, only its ctime tells.
   */
  | { readonly op: "rewriteKeepingTimes"; readonly path: string }

const DIRS = ["", "a", "b", "a/c", "a/c/d", "node_modules"]
const NAMES = ["x.txt", "y.js", "z.log", "w"]
const file = fc
  .tuple(fc.constantFrom(...DIRS), fc.constantFrom(...NAMES))
  .map(([d, n]) => (d === "" ? n : `${d}/${n}`))
const dir = fc.constantFrom(...DIRS.filter((d) => d !== ""))
const anyPath = fc.oneof(file, dir)

/** A write of some short content to one of `paths`. */
export const writeArb = (paths: fc.Arbitrary<string>, maxLength = 12): fc.Arbitrary<Op> =>
  fc.record({ op: fc.constant("write" as const), path: paths, content: fc.string({ maxLength }) })

/** A removal of one of `paths`. */
export const removeArb = (paths: fc.Arbitrary<string>): fc.Arbitrary<Op> =>
  fc.record({ op: fc.constant("remove" as const), path: paths })

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: writeArb(file) },
  { weight: 2, arbitrary: removeArb(file) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("rename" as const), from: anyPath, to: anyPath }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("mkdir" as const), path: dir }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("rmdir" as const), path: dir }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("symlink" as const),
      path: file,
      target: fc.constantFrom("x.txt", "../a", "gone"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("chmod" as const),
      path: file,
      mode: fc.constantFrom(0o644, 0o755),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("ignore" as const),
      dir: fc.constantFrom("", "a"),
      rules: fc.constantFrom("*.log\n", "c/\n", "!node_modules\n", "w\n", ""),
    }),
  },
)

/** The whole-second mtime `rewriteKeepingTimes` stamps (a time Node sets back exactly). */
const STAMP = new Date("2020-01-01T00:00:00Z")

/** A file rewritten in place with as many bytes, its mtime put back (see the `Op`). */
export const rewriteKeepingTimesArb: fc.Arbitrary<Op> = fc.record({
  op: fc.constant("rewriteKeepingTimes" as const),
  path: file,
})

/** Applies one operation; one the tree does not allow (a missing source, a file in the way) does nothing. */
export const apply = (root: string, op: Op) => {
  const at = (p: string) => join(root, p)
  try {
    switch (op.op) {
      case "write":
        mkdirSync(dirname(at(op.path)), { recursive: true })
        writeFileSync(at(op.path), op.content)
        break
      case "remove":
        rmSync(at(op.path), { force: true })
        break
      case "rename":
        mkdirSync(dirname(at(op.to)), { recursive: true })
        renameSync(at(op.from), at(op.to))
        break
      case "mkdir":
        mkdirSync(at(op.path), { recursive: true })
        break
      case "rmdir":
        rmSync(at(op.path), { recursive: true, force: true })
        break
      case "symlink":
        mkdirSync(dirname(at(op.path)), { recursive: true })
        symlinkSync(op.target, at(op.path))
        break
      case "chmod":
        chmodSync(at(op.path), op.mode)
        break
      case "ignore":
        mkdirSync(at(op.dir), { recursive: true })
        writeFileSync(join(at(op.dir), ".gitignore"), op.rules)
        break
      case "rewriteKeepingTimes": {
        const before = lstatSync(at(op.path))
        if (!before.isFile()) break
        writeFileSync(at(op.path), before.size % 2 === 0 ? "#".repeat(before.size) : "%".repeat(before.size))
        utimesSync(at(op.path), STAMP, STAMP)
        break
      }
    }
  } catch {
    // Not applicable to this tree: the step goes on with the others.
  }
}

/** Whether an ignore file lies at or below `path` (a directory removed or renamed takes it along). */
const holdsIgnoreFile = (root: string, path: string): boolean => {
  try {
    const s = lstatSync(join(root, path))
    if (!s.isDirectory()) return path.endsWith(".gitignore")
    return readdirSync(join(root, path)).some((name) =>
      holdsIgnoreFile(root, path === "" ? name : `${path}/${name}`),
    )
  } catch {
    return false
  }
}

/** Whether the operation changes an ignore file (then the capture rightly scans in full). */
export const touchesIgnoreFile = (root: string, op: Op) =>
  op.op === "ignore" ||
  (op.op === "rename" && (holdsIgnoreFile(root, op.from) || holdsIgnoreFile(root, op.to))) ||
  (op.op === "rmdir" && holdsIgnoreFile(root, op.path))

export const manifestText = (hash: Parameters<typeof loadManifest>[0]) =>
  Effect.map(loadManifest(hash), (m) => JSON.stringify([...m].sort(([a], [b]) => (a < b ? -1 : 1))))
