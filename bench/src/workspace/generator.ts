/**
 * The deterministic workspace generator: N text files in nested directories, mostly small source
 * and prose files with some larger ones (about 10 KB on average, so 10,000 files are about 100 MB).
 *
 * Everything is a function of (seed, file index): the layout, each file's size and its bytes. That
 * is what lets a mutated file be put back without keeping a copy, and lets separate benchmark
 * processes share one generated tree through its manifest.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { makeRng, mixSeed, type Rng } from "./prng.js"

export interface GeneratedFile {
  readonly index: number
  /** Relative, `/`-separated. */
  readonly path: string
  readonly size: number
}

export interface WorkspaceSpec {
  readonly fileCount: number
  readonly seed: number
}

export interface GeneratedWorkspace extends WorkspaceSpec {
  /** Absolute path of the tree itself (nothing else is written inside it). */
  readonly root: string
  readonly files: ReadonlyArray<GeneratedFile>
  readonly totalBytes: number
  readonly directories: ReadonlyArray<string>
}

const FILES_PER_DIRECTORY = 16
const DIRECTORY_NAMES = ["src", "lib", "test", "docs", "app", "core", "util", "pkg"] as const
/** Share of larger files, and the size ranges (bytes) that give a mean of about 10 KB. */
const LARGE_SHARE = 0.12
const SMALL_SIZE = [512, 10_000] as const
const LARGE_SIZE = [20_000, 70_000] as const

/**
 * Directory j in bijective base 8: every prefix of a directory is itself a directory with a smaller
 * index, so parents always exist and the tree gets about one level deeper per 8x more files.
 */
const directoryPath = (j: number): string => {
  const parts: Array<string> = []
  let n = j + 1
  while (n > 0) {
    const digit = (n - 1) % DIRECTORY_NAMES.length
    parts.unshift(DIRECTORY_NAMES[digit]!)
    n = Math.floor((n - 1) / DIRECTORY_NAMES.length)
  }
  return parts.join("/")
}

const EXTENSIONS = [
  [".ts", 0.6],
  [".md", 0.15],
  [".json", 0.1],
  [".txt", 0.15],
] as const

const fileRng = (seed: number, index: number): Rng => makeRng(mixSeed(seed, index))

/** The paths and sizes of a workspace, without writing anything. */
export const workspaceLayout = (spec: WorkspaceSpec): Array<GeneratedFile> => {
  const files: Array<GeneratedFile> = []
  for (let index = 0; index < spec.fileCount; index++) {
    const rng = fileRng(spec.seed, index)
    const large = rng.next() < LARGE_SHARE
    const size = large ? rng.int(LARGE_SIZE[0], LARGE_SIZE[1]) : rng.int(SMALL_SIZE[0], SMALL_SIZE[1])
    let roll = rng.next()
    let ext: string = EXTENSIONS[0][0]
    for (const [candidate, share] of EXTENSIONS) {
      if (roll < share) {
        ext = candidate
        break
      }
      roll -= share
    }
    const dir = directoryPath(Math.floor(index / FILES_PER_DIRECTORY))
    const stem = large ? `fixture_${index}` : `module_${index}`
    files.push({ index, path: `${dir}/${stem}${ext}`, size })
  }
  return files
}

const WORDS = [
  "state",
  "event",
  "branch",
  "cursor",
  "message",
  "session",
  "store",
  "blob",
  "hash",
  "point",
  "manifest",
  "restore",
  "capture",
  "turn",
  "token",
  "preview",
  "apply",
  "journal",
  "refusal",
  "scope",
  "file",
  "path",
  "root",
  "content",
  "size",
  "index",
  "value",
  "result",
  "config",
  "layer",
  "service",
  "reader",
  "writer",
  "buffer",
  "stream",
  "queue",
  "task",
  "option",
  "entry",
  "record",
] as const
const TYPES = ["string", "number", "boolean", "ReadonlyArray<string>", "Map<string, number>", "Uint8Array"]

const capitalise = (w: string) => w.charAt(0).toUpperCase() + w.slice(1)

const codeLine = (rng: Rng): string => {
  const w = () => rng.pick(WORDS)
  const indent = "  ".repeat(rng.int(0, 3))
  switch (rng.int(0, 7)) {
    case 0:
      return `${indent}const ${w()}${capitalise(w())} = ${w()}(${w()}, ${rng.int(0, 9999)})`
    case 1:
      return `${indent}export function ${w()}${capitalise(w())}(${w()}: ${rng.pick(TYPES)}): ${rng.pick(TYPES)} {`
    case 2:
      return `${indent}return ${w()}.${w()}(${w()}.${w()} + ${rng.int(1, 64)})`
    case 3:
      return `${indent}if (${w()}.${w()} === undefined) throw new Error("missing ${w()} ${w()}")`
    case 4:
      return `${indent}// ${w()} the ${w()} before the ${w()} is ${w()}ed, so the ${w()} stays ${w()}`
    case 5:
      return `import { ${w()}, ${w()}${capitalise(w())} } from "./${w()}/${w()}.js"`
    case 6:
      return `${indent}for (const ${w()} of ${w()}s) ${w()}.push(${w()}.${w()})`
    default:
      return `${indent}}`
  }
}

const proseLine = (rng: Rng): string => {
  const n = rng.int(6, 16)
  const words: Array<string> = []
  for (let i = 0; i < n; i++) words.push(rng.pick(WORDS))
  return `${capitalise(words.join(" "))}.`
}

/** A line of the same flavour as the file's, for edits and new files. */
export const lineFor = (path: string, rng: Rng): string =>
  path.endsWith(".md") || path.endsWith(".txt") ? proseLine(rng) : codeLine(rng)

/** The bytes of one generated file: a header naming it, then lines until its size is reached. */
export const fileContent = (seed: number, file: GeneratedFile): Buffer => {
  // A distinct stream from the layout's, so changing line shapes never moves sizes or paths.
  const rng = fileRng(mixSeed(seed, 0x5eed), file.index)
  const lines = [`// ${file.path}: generated file ${file.index} (seed ${seed})`]
  let length = lines[0]!.length + 1
  while (length < file.size) {
    const line = lineFor(file.path, rng)
    lines.push(line)
    length += line.length + 1
  }
  const text = lines.join("\n")
  // Exact size, ending in a newline, so the layout alone knows the workspace's byte count.
  return Buffer.from(`${text.slice(0, file.size - 1)}\n`, "utf8")
}

const MANIFEST = "manifest.json"

/**
 * Writes a workspace into `<dir>/tree` and its manifest into `<dir>/manifest.json`. The manifest
 * lives beside the tree, never inside it, so scanners of the tree see only generated files.
 */
export const generateWorkspace = (dir: string, spec: WorkspaceSpec): GeneratedWorkspace => {
  const root = join(dir, "tree")
  const files = workspaceLayout(spec)
  const directories = new Set<string>()
  for (const f of files) directories.add(f.path.slice(0, f.path.lastIndexOf("/")))
  mkdirSync(root, { recursive: true })
  for (const d of directories) mkdirSync(join(root, d), { recursive: true })
  let totalBytes = 0
  for (const f of files) {
    const bytes = fileContent(spec.seed, f)
    writeFileSync(join(root, f.path), bytes)
    totalBytes += bytes.length
  }
  const workspace: GeneratedWorkspace = { ...spec, root, files, totalBytes, directories: [...directories] }
  writeFileSync(join(dir, MANIFEST), JSON.stringify({ ...spec, totalBytes }))
  return workspace
}

/** Opens a workspace generated earlier (by this process or another one), or undefined if none. */
export const openWorkspace = (dir: string, spec: WorkspaceSpec): GeneratedWorkspace | undefined => {
  let manifest: { fileCount: number; seed: number; totalBytes: number }
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8"))
  } catch {
    return undefined
  }
  if (manifest.fileCount !== spec.fileCount || manifest.seed !== spec.seed) return undefined
  const files = workspaceLayout(spec)
  const directories = new Set<string>()
  for (const f of files) directories.add(f.path.slice(0, f.path.lastIndexOf("/")))
  return {
    ...spec,
    root: join(dir, "tree"),
    files,
    totalBytes: manifest.totalBytes,
    directories: [...directories],
  }
}
