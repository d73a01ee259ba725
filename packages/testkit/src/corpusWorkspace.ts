/**
 * Workspaces built from the shape of a real repository (`bench/corpora/*.shape.tsv.gz`: every
 * directory, file with its mode and size, symlink with its target, and the text of each ignore
 * file, with no content), so tests and benchmarks run on the trees agents really work in — deep
 * package layouts, thousands of small files, real ignore rules — instead of a generated grid.
 *
 * Content is deterministic: each file gets bytes derived from its path, of its recorded size (up
 * to a cap), so two builds of one shape are byte-identical and a changed byte is a real change.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { gunzipSync } from "node:zlib"

export interface ShapeEntry {
  readonly kind: "D" | "F" | "L" | "I"
  readonly mode: number
  readonly size: number
  readonly path: string
  /** A link's target, or an ignore file's text. */
  readonly target?: string
}

/** Reads a `.shape.tsv.gz` file (see the corpora README for the format). */
export const readShape = (file: string): ReadonlyArray<ShapeEntry> => {
  const text = gunzipSync(readFileSync(file)).toString("utf8")
  const out: Array<ShapeEntry> = []
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const [kind, mode, size, path, target] = line.split("\t")
    if (kind !== "D" && kind !== "F" && kind !== "L" && kind !== "I") continue
    if (path === undefined) continue
    out.push({
      kind,
      mode: Number.parseInt(mode ?? "644", 8),
      size: Number(size ?? 0),
      path,
      ...(target === undefined ? {} : { target: kind === "I" ? (JSON.parse(target) as string) : target }),
    })
  }
  return out
}

/** Deterministic content of `size` bytes for `path` (printable text, one line per 64 bytes). */
export const shapeContent = (path: string, size: number): Buffer => {
  const buffer = Buffer.alloc(size)
  let h = 2166136261
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 16777619) >>> 0
  for (let i = 0; i < size; i++) {
    if (i % 64 === 63) buffer[i] = 10
    else {
      h = Math.imul(h ^ i, 2654435761) >>> 0
      buffer[i] = 97 + (h % 26)
    }
  }
  return buffer
}

export interface MaterialiseOptions {
  /** Only entries whose path passes (directories above a kept entry are made as needed). */
  readonly include?: (path: string) => boolean
  /** Larger files are written at this size. Default: as recorded. */
  readonly maxFileBytes?: number
  /** `copies` > 1 replicates the shape under `copy-<i>/` (4 × babel ≈ 110,000 files). */
  readonly copies?: number
}

export interface Materialised {
  readonly files: number
  readonly directories: number
  readonly links: number
  readonly bytes: number
}

/** Builds the shape under `root` (which must exist). */
export const materialiseShape = (
  entries: ReadonlyArray<ShapeEntry>,
  root: string,
  options: MaterialiseOptions = {},
): Materialised => {
  const tally = { files: 0, directories: 0, links: 0, bytes: 0 }
  const copies = options.copies ?? 1
  for (let copy = 0; copy < copies; copy++) {
    const base = copies === 1 ? root : join(root, `copy-${copy}`)
    for (const e of entries) {
      if (options.include !== undefined && !options.include(e.path)) continue
      const at = join(base, e.path)
      switch (e.kind) {
        case "D":
          mkdirSync(at, { recursive: true, mode: e.mode })
          tally.directories++
          break
        case "F": {
          mkdirSync(dirname(at), { recursive: true })
          const size = Math.min(e.size, options.maxFileBytes ?? e.size)
          writeFileSync(at, shapeContent(e.path, size), { mode: e.mode })
          tally.files++
          tally.bytes += size
          break
        }
        case "L":
          mkdirSync(dirname(at), { recursive: true })
          symlinkSync(e.target ?? "", at)
          tally.links++
          break
        case "I":
          mkdirSync(dirname(at), { recursive: true })
          writeFileSync(at, e.target ?? "")
          tally.files++
          break
      }
    }
  }
  return tally
}
