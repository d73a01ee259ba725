/**
 * Deterministic changes to a generated workspace, the kind an agent makes: edit a few lines of k
 * files, create new files, delete files. Each takes a seed, so round r of a benchmark makes the same
 * change on every run, and a different one from round r-1 (so a snapshot always has work to do).
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type GeneratedFile, type GeneratedWorkspace, lineFor } from "./generator.js"
import { makeRng, type Rng } from "./prng.js"

/** `count` distinct items of `pool`, chosen by `rng` (partial Fisher-Yates over indices). */
export const pickDistinct = <A>(pool: ReadonlyArray<A>, count: number, rng: Rng): Array<A> => {
  if (count > pool.length) throw new Error(`cannot pick ${count} of ${pool.length}`)
  const indices = pool.map((_, i) => i)
  const out: Array<A> = []
  for (let i = 0; i < count; i++) {
    const j = rng.int(i, indices.length - 1)
    const chosen = indices[j]!
    indices[j] = indices[i]!
    indices[i] = chosen
    out.push(pool[chosen]!)
  }
  return out
}

/** Replaces two lines near the middle of a text and inserts a third: a small, diff-friendly edit. */
export const editText = (text: string, path: string, rng: Rng): string => {
  const lines = text.split("\n")
  const at = Math.max(1, Math.min(lines.length - 2, rng.int(1, Math.max(1, lines.length - 2))))
  lines.splice(at, 2, lineFor(path, rng), lineFor(path, rng), lineFor(path, rng))
  return lines.join("\n")
}

/** Edits `files` in place; returns their paths. */
export const editFiles = (root: string, files: ReadonlyArray<GeneratedFile>, seed: number): Array<string> => {
  const rng = makeRng(seed)
  return files.map((f) => {
    const abs = join(root, f.path)
    writeFileSync(abs, editText(readFileSync(abs, "utf8"), f.path, rng))
    return f.path
  })
}

/** Creates `count` new files of 1-12 KB beside existing ones; returns their paths. */
export const createFiles = (
  ws: GeneratedWorkspace,
  count: number,
  seed: number,
  existing: ReadonlySet<string>,
): Array<string> => {
  const rng = makeRng(seed)
  const paths: Array<string> = []
  let attempt = 0
  while (paths.length < count) {
    const dir = rng.pick(ws.directories)
    const path = `${dir}/added_${seed >>> 0}_${attempt++}.ts`
    if (existing.has(path) || paths.includes(path)) continue
    const size = rng.int(1_000, 12_000)
    const lines = [`// ${path}: created by a benchmark mutation`]
    let length = lines[0]!.length
    while (length < size) {
      const line = lineFor(path, rng)
      lines.push(line)
      length += line.length + 1
    }
    writeFileSync(join(ws.root, path), `${lines.join("\n")}\n`)
    paths.push(path)
  }
  return paths
}

export const deleteFiles = (root: string, files: ReadonlyArray<GeneratedFile>): Array<string> =>
  files.map((f) => {
    unlinkSync(join(root, f.path))
    return f.path
  })
