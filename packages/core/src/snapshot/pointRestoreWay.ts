/**
 * What stands in the way of a point's files where a path changed kind since the point (module-
 * internal to `snapshot/`, for the restore plan). A point that holds a file at `p` holds nothing
 * beneath `p`, and a point that holds a path beneath `p` holds no file at `p`. So:
 *
 * - a directory standing where the point has a regular file or a symlink is in the way with all it
 *   holds (the agent replaced `config` by `config/a`, or the link `vendor` by a copy of what it
 *   led to): every file and link inside it is a path the point implies absent;
 * - a regular file or a symlink standing where the point needs a directory is in the way itself
 *   (the agent replaced `lib/x` by a file `lib`, or `lib/` by a link to another directory of the
 *   tree): it is a path the point implies absent. A link is taken away as a link (never followed;
 *   the rescue point records its target and the redo makes it again), so nothing is written
 *   through it. A link leading out of the root stays (no redo could make it again: no restore
 *   makes a link that leads out), and the point's paths beneath it are kept as they are
 *   (`keptBeneath`, reported with the protected paths).
 *
 * These implied paths are handed to the plan, which inspects them and deletes what they hold as it
 * does for the point's own tombstones (recoverably: the rescue point takes each first, and the redo
 * puts them back). Only what a restore could put back counts: a directory that also holds
 * something else (a protected path — ignored, `.git`, the store —, a FIFO or device, a name that
 * is not UTF-8, a directory that cannot be listed, an empty directory, which no point records) is
 * `blocked`, none of its entries is implied, and the plan keeps it as a conflict: nothing is lost.
 * The redo of a restore that made a link where a directory stood finds nothing of the directory
 * beneath the link (`restore/targetRead.ts`: no file is beneath a link), takes the link away and
 * writes the files back. The decision of what stands at each path stays the plan's (`standing`);
 * this module only finds the paths.
 */
import { aFileKind, type ProtectedPath, type WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"
import { linkProtection, makeProtectionCheck } from "../workspace/protection.js"
import type { Inspected } from "./pointInspection.js"
import type { ManifestEntry } from "./pointManifest.js"

/** A directory standing where the point has a file: what it holds, or why it must stay. */
export type DirectoryInTheWay =
  | { readonly holds: ReadonlyArray<WorkspacePath> }
  | { readonly blocked: string }

export interface Way {
  /** Paths the point implies absent where a file or link stands now, not in the point. */
  readonly implied: ReadonlyArray<WorkspacePath>
  /** Each directory in the way of one of the point's files. */
  readonly directories: ReadonlyMap<WorkspacePath, DirectoryInTheWay>
  /** The point's paths beneath a link that leads out of the root: kept as they are, like the link. */
  readonly keptBeneath: ReadonlyMap<WorkspacePath, ProtectedPath>
}

const joined = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`) as WorkspacePath

/**
 * Every file and link beneath the directories at `roots`, a level of the tree at a time (one bulk
 * `scanDirectories` per level), each root with its holdings or the first thing that blocks it.
 */
const walkDirectories = (roots: ReadonlyArray<WorkspacePath>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const isProtected = yield* makeProtectionCheck()
    const holds = new Map<WorkspacePath, Array<WorkspacePath>>(roots.map((r) => [r, []]))
    const blocked = new Map<WorkspacePath, string>()
    let level: Array<{ readonly root: WorkspacePath; readonly dir: WorkspacePath }> = roots.map((r) => ({
      root: r,
      dir: r,
    }))
    while (level.length > 0) {
      const listed = yield* workspace.scanDirectories(level.map((l) => l.dir))
      const next: typeof level = []
      for (const [i, { root, dir }] of level.entries()) {
        if (blocked.has(root)) continue
        const scan = listed[i]!
        const block = (why: string) => void blocked.set(root, why)
        if (Either.isLeft(scan)) {
          block(`${dir} cannot be listed: ${scan.left.message}`)
          continue
        }
        // A point records no directory, so neither the rescue point nor the redo could make an
        // empty one again: it stays, and so does the directory around it.
        if (scan.right.length === 0) {
          block(
            dir === root
              ? "it is empty, and no point records a directory"
              : `it holds ${dir}, an empty directory, which no point records`,
          )
          continue
        }
        for (const entry of scan.right) {
          if (entry.unsupportedName === true) {
            block(`it holds ${joined(dir, entry.name)}, whose name is not valid UTF-8`)
            break
          }
          const path = joined(dir, entry.name)
          const kept = yield* isProtected(path, entry.stat.kind === "directory")
          if (Option.isSome(kept)) {
            block(`it holds ${path}, which a restore never deletes (${kept.value.message})`)
            break
          }
          if (entry.stat.kind === "directory") next.push({ root, dir: path })
          else if (entry.stat.kind === "file" || entry.stat.kind === "symlink") holds.get(root)!.push(path)
          else {
            block(`it holds ${path}, ${aFileKind(entry.stat.kind)}, which no point records`)
            break
          }
        }
      }
      level = next.filter((l) => !blocked.has(l.root))
    }
    return new Map<WorkspacePath, DirectoryInTheWay>(
      roots.map((r) => {
        const why = blocked.get(r)
        return [r, why === undefined ? { holds: holds.get(r)! } : { blocked: why }]
      }),
    )
  })

/** What stands above a path where the point needs a directory: an entry in the way, or a link kept. */
type Above = { readonly inTheWay: WorkspacePath } | { readonly keptLink: ProtectedPath }

/**
 * The regular file or symlink above `path` that stands where the point needs a directory (the
 * stat that failed on it said a file or a link is on the way), shallowest first: in the way, or
 * kept when it is a link leading out of the root (`linkProtection`: no restore takes one away).
 * Undefined when none can be found or the protection policy keeps it otherwise.
 */
const entryAbove = (
  path: WorkspacePath,
  seen: Map<string, Above | null>,
  isProtected: Effect.Effect.Success<ReturnType<typeof makeProtectionCheck>>,
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    for (let cut = path.indexOf("/"); cut > 0; cut = path.indexOf("/", cut + 1)) {
      const above = path.slice(0, cut) as WorkspacePath
      const known = seen.get(above)
      if (known !== undefined) return known ?? undefined
      const stat = yield* Effect.either(workspace.stat(above))
      if (Either.isRight(stat) && Option.isSome(stat.right) && stat.right.value.kind === "directory") continue
      const kind = Either.isRight(stat) && Option.isSome(stat.right) ? stat.right.value.kind : undefined
      let found: Above | null = null
      if ((kind === "file" || kind === "symlink") && Option.isNone(yield* isProtected(above))) {
        const target = kind === "symlink" ? yield* Effect.either(workspace.readLink(above)) : undefined
        const kept =
          target !== undefined && Either.isRight(target) ? linkProtection(above, target.right) : undefined
        // A link whose target cannot be read is left where it stands (a conflict beneath it).
        if (kept !== undefined) found = { keptLink: kept }
        else if (target === undefined || Either.isRight(target)) found = { inTheWay: above }
      }
      seen.set(above, found)
      return found ?? undefined
    }
    return undefined
  })

/** The paths in the way of the point's paths (see the header), from what the plan found. */
export const findWay = (
  manifest: ReadonlyMap<WorkspacePath, ManifestEntry>,
  inspected: ReadonlyMap<WorkspacePath, Inspected>,
) =>
  Effect.gen(function* () {
    const directories: Array<WorkspacePath> = []
    const underEntry: Array<WorkspacePath> = []
    for (const [path, wanted] of manifest) {
      if (wanted.kind === "tombstone") continue
      const now = inspected.get(path)
      if (now === undefined) continue
      if (Either.isRight(now)) {
        const directory = "notRegular" in now.right && now.right.notRegular === "directory"
        if (directory && (wanted.kind === "file" || wanted.kind === "link")) directories.push(path)
      } else if (nothingCanBeThere(now.left)) underEntry.push(path)
    }
    const implied = new Set<WorkspacePath>()
    const inTheWay = directories.length === 0 ? new Map() : yield* walkDirectories(directories)
    for (const found of inTheWay.values()) {
      if ("holds" in found) for (const p of found.holds) if (!manifest.has(p)) implied.add(p)
    }
    const keptBeneath = new Map<WorkspacePath, ProtectedPath>()
    if (underEntry.length > 0) {
      const isProtected = yield* makeProtectionCheck()
      const seen = new Map<string, Above | null>()
      for (const path of underEntry) {
        const above = yield* entryAbove(path, seen, isProtected)
        if (above === undefined) continue
        if ("keptLink" in above) {
          keptBeneath.set(path, {
            path,
            kind: "escaping_link",
            message: `${path} lies beneath the link ${above.keptLink.path}: ${above.keptLink.message}`,
          })
        } else if (!manifest.has(above.inTheWay)) implied.add(above.inTheWay)
      }
    }
    return { implied: [...implied].sort(), directories: inTheWay, keptBeneath } satisfies Way
  })
