/**
 * The confined workspace's walk and its reads: resolving a workspace path through the primitives
 * (refusing a symlink on the way), reading and stat-ing files, listing and scanning directories.
 * Every path reaches a primitive only after `resolveIn` confined it, except the directories handed
 * to `readdirStatBeneath` and the files handed to `readFilesBeneath`, which the operating system
 * confines as it opens them; what those primitives decline goes the walked way, so both give the
 * same answer.
 */
import { aFileKind, WorkspaceIoError, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import {
  LISTING_CHECK_BYTES,
  type ListingSeal,
  NO_CTIME,
  type ScannedEntry,
  type StatFree,
  type WorkspaceError,
  type WorkspaceFile,
  type WorkspaceReadOptions,
} from "../ports/Workspace.js"
import { type ProbedEntry, resolveConfined, surelyShortEnough } from "./confinedPathResolution.js"
import {
  byName,
  type FileSystemPrimitives,
  ioError,
  notRegular,
  type Operation,
  sortedByName,
} from "./filesystemPrimitives.js"

/** An absolute, symlink-free root and the primitives of the filesystem it lives on. */
export interface ConfinedRoot {
  readonly root: string
  readonly fs: FileSystemPrimitives
}

/**
 * `seen`: directories already probed in the same bulk call. Only directories are remembered (the
 * components every path of a batch walks through); the last component is always probed.
 */
export const resolveIn = (
  { root, fs }: ConfinedRoot,
  path: string,
  operation: Operation,
  finalSymlink: "refuse" | "report",
  seen?: Map<string, ProbedEntry>,
) =>
  resolveConfined(path, {
    root,
    finalSymlink,
    operation,
    probe: (absolute) => {
      const known = seen?.get(absolute)
      if (known !== undefined) return Effect.succeed(known)
      const probed = Effect.mapError(fs.probe(absolute), ioError(operation, path))
      return seen === undefined
        ? probed
        : Effect.tap(probed, (entry) => {
            if (entry.kind === "directory") seen.set(absolute, entry)
          })
    },
    // A bulk call's walk asks only for what it has not seen; a single path takes one step.
    ...(fs.probeWhole === undefined || seen !== undefined
      ? {}
      : {
          probeWhole: (absolute: string) =>
            Effect.mapError(fs.probeWhole!(absolute), ioError(operation, path)),
        }),
    notADirectory: (p, at) =>
      new WorkspaceIoError({
        operation,
        path: p,
        code: "ENOTDIR",
        message: `${JSON.stringify(at)} is not a directory, so ${JSON.stringify(p)} cannot exist`,
      }),
  })

const directoryOf = (at: ConfinedRoot, directory: string | undefined, seen?: Map<string, ProbedEntry>) =>
  Effect.gen(function* () {
    if (directory === undefined) return at.root
    const target = yield* resolveIn(at, directory, "scan", "refuse", seen)
    if (target.kind !== "directory") {
      return yield* new WorkspaceIoError({
        operation: "scan",
        path: directory,
        code: target.kind === "missing" ? "ENOENT" : "ENOTDIR",
        message: `${JSON.stringify(directory)} is ${target.kind === "missing" ? "missing" : aFileKind(target.kind)}, not a directory`,
      })
    }
    return target.absolute
  })

export const readPath = (
  at: ConfinedRoot,
  path: string,
  seen?: Map<string, ProbedEntry>,
  options?: WorkspaceReadOptions,
) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "read", "refuse", seen)
    switch (target.kind) {
      case "missing":
        return Option.none()
      case "file":
        return Option.some(
          yield* Effect.mapError(at.fs.readFile(target.absolute, options), ioError("read", path)),
        )
      default:
        return yield* notRegular(path, target.kind, "read")
    }
  })

export const statPath = (at: ConfinedRoot, path: string, seen?: Map<string, ProbedEntry>) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "stat", "report", seen)
    if (target.kind === "missing") return Option.none()
    return Option.some(yield* Effect.mapError(at.fs.stat(target.absolute), ioError("stat", path)))
  })

/**
 * The read of a path whose directories this bulk call has all probed already: the file is opened
 * straight away, without an `lstat` of its own. `readFile` refuses a symlink, a directory or a
 * FIFO by contract, so a file is read exactly when the walk would have found one there; any
 * failure goes the whole way round (`readPath`), which gives the same answer and the same error as
 * a read on its own. Undefined when a directory on the way has not been probed in this call.
 */
const readUnderSeen = (at: ConfinedRoot, path: string, seen: Map<string, ProbedEntry>) => {
  if (workspacePathProblem(path) !== undefined) return undefined
  let absolute = at.root === "/" ? "" : at.root
  let start = 0
  for (let cut = path.indexOf("/"); cut !== -1; cut = path.indexOf("/", start)) {
    absolute = `${absolute}/${path.slice(start, cut)}`
    if (seen.get(absolute)?.kind !== "directory") return undefined
    start = cut + 1
  }
  return Effect.orElse(Effect.map(at.fs.readFile(`${absolute}/${path.slice(start)}`), Option.some), () =>
    readPath(at, path, seen),
  )
}

type Read = Either.Either<Option.Option<WorkspaceFile>, WorkspaceError>

export const readMany = (at: ConfinedRoot, paths: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const seen = new Map<string, ProbedEntry>()
    const walked = (path: string) => Effect.either(readUnderSeen(at, path, seen) ?? readPath(at, path, seen))
    const beneath = at.fs.readFilesBeneath
    if (beneath === undefined) return Effect.forEach(paths, walked)
    // Well-formed paths go to the primitive, which the operating system confines; what it
    // declines, and the rest, the walked way (the answer or error a read on its own gives).
    const eligible = paths.flatMap((path, i) => (workspacePathProblem(path) === undefined ? [i] : []))
    return Effect.gen(function* () {
      const direct = yield* beneath(
        at.root,
        eligible.map((i) => paths[i]!),
      )
      const answers: Array<Read | undefined> = new Array(paths.length)
      eligible.forEach((i, k) => {
        const file = direct[k]
        if (file !== undefined) answers[i] = Either.right(Option.some(file))
      })
      const rest = paths.flatMap((_, i) => (answers[i] === undefined ? [i] : []))
      const others = yield* Effect.forEach(rest, (i) => walked(paths[i]!))
      rest.forEach((i, k) => {
        answers[i] = others[k]
      })
      return answers as Array<Read>
    })
  })

/**
 * The stat of a path whose directories this bulk call has all probed already: only its last
 * component is probed, then stat'ed as the walk's `report` would (missing: none; anything else,
 * a symlink too, its stat). A protection check stats a few files in each directory of one chain,
 * so all but the first go this way. Undefined when a directory on the way was not probed in this
 * call, or the path is not plainly valid and short (the walk decides those); any failure goes the
 * whole way round (`statPath`), which gives the same answer and the same error.
 */
const statUnderSeen = (at: ConfinedRoot, path: string, seen: Map<string, ProbedEntry>) => {
  if (workspacePathProblem(path) !== undefined) return undefined
  const segments = path.split("/")
  if (!surelyShortEnough(at.root, path, segments)) return undefined
  let absolute = at.root === "/" ? "" : at.root
  for (let i = 0; i < segments.length - 1; i++) {
    absolute = `${absolute}/${segments[i]}`
    if (seen.get(absolute)?.kind !== "directory") return undefined
  }
  absolute = `${absolute}/${segments.at(-1)}`
  const probed = seen.get(absolute)
  return Effect.orElse(
    Effect.flatMap(probed === undefined ? at.fs.probe(absolute) : Effect.succeed(probed), (entry) =>
      entry.kind === "missing"
        ? Effect.succeed(Option.none())
        : Effect.map(at.fs.stat(absolute), Option.some),
    ),
    () => statPath(at, path, seen),
  )
}

export const statMany = (at: ConfinedRoot, paths: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const seen = new Map<string, ProbedEntry>()
    return Effect.forEach(paths, (path) =>
      Effect.either(statUnderSeen(at, path, seen) ?? statPath(at, path, seen)),
    )
  })

export const listDirectory = (at: ConfinedRoot, directory: WorkspacePath | undefined) =>
  Effect.gen(function* () {
    const absolute = yield* directoryOf(at, directory)
    const entries = yield* Effect.mapError(at.fs.readdir(absolute), ioError("scan", directory ?? "."))
    return [...entries].sort(byName)
  })

export const scanDirectory = (at: ConfinedRoot, directory: WorkspacePath | undefined) =>
  Effect.gen(function* () {
    const absolute = yield* directoryOf(at, directory)
    const entries = yield* Effect.mapError(at.fs.readdirStat(absolute), ioError("scan", directory ?? "."))
    return [...entries].sort(byName)
  })

type Listing = Either.Either<ReadonlyArray<ScannedEntry>, WorkspaceError>

/** `scanDirectories` with every path resolved by the walk first (directories met once per call). */
const scanChecked = (at: ConfinedRoot, directories: ReadonlyArray<WorkspacePath | undefined>) =>
  Effect.gen(function* () {
    const seen = new Map<string, ProbedEntry>()
    const resolved = yield* Effect.forEach(directories, (d) => Effect.either(directoryOf(at, d, seen)))
    const readable = resolved.flatMap((r) => (Either.isRight(r) ? [r.right] : []))
    const listed =
      at.fs.readdirStatMany === undefined
        ? yield* Effect.forEach(readable, (absolute) => Effect.either(at.fs.readdirStat(absolute)))
        : yield* at.fs.readdirStatMany(readable)
    let next = 0
    return resolved.map((r, i): Listing => {
      if (Either.isLeft(r)) return Either.left(r.left)
      const entries = listed[next++]!
      return Either.isLeft(entries)
        ? Either.left(ioError("scan", directories[i] ?? ".")(entries.left))
        : Either.right(sortedByName(entries.right))
    })
  })

/**
 * Lists `directories` through `direct` (the primitive that opens each beneath the root, given the
 * well-formed ones relative to it, sealing them when given `statFree`); what it declines, and the
 * rest, the checked way. `eligible` holds the indices `direct` was given, in its order.
 */
const scanBeneath = (
  at: ConfinedRoot,
  directories: ReadonlyArray<WorkspacePath | undefined>,
  direct: NonNullable<FileSystemPrimitives["readdirStatBeneath"]>,
  statFree?: StatFree,
) =>
  Effect.gen(function* () {
    const eligible = directories.flatMap((d, i) =>
      d === undefined || workspacePathProblem(d) === undefined ? [i] : [],
    )
    const { listings, seal } = yield* direct(
      at.root,
      eligible.map((i) => directories[i] ?? ""),
      statFree,
    )
    const answers = new Map<number, Listing>()
    eligible.forEach((i, k) => {
      const entries = listings[k]
      if (entries !== undefined) answers.set(i, Either.right(sortedByName(entries)))
    })
    const rest = directories.flatMap((_, i) => (answers.has(i) ? [] : [i]))
    const checked =
      rest.length === 0
        ? []
        : yield* scanChecked(
            at,
            rest.map((i) => directories[i]),
          )
    for (const [k, i] of rest.entries()) answers.set(i, checked[k]!)
    return { listings: directories.map((_, i) => answers.get(i)!), eligible, seal }
  })

export const scanDirectories = (at: ConfinedRoot, directories: ReadonlyArray<WorkspacePath | undefined>) =>
  Effect.gen(function* () {
    const beneath = at.fs.readdirStatBeneath
    if (beneath === undefined) return yield* scanChecked(at, directories)
    return (yield* scanBeneath(at, directories, beneath)).listings
  })

/**
 * `scanDirectories` with each listing sealed as `sealListings` seals it (the workspace's
 * `scanDirectoriesSealed`): a directory not listed beneath the root by the primitive (listed the
 * checked way) has no check and is in the seal's `failed`. For a primitive that lists beneath.
 */
export const scanDirectoriesSealed = (
  at: ConfinedRoot,
  directories: ReadonlyArray<WorkspacePath | undefined>,
  statFree: StatFree,
  beneath: NonNullable<FileSystemPrimitives["readdirStatBeneath"]>,
) =>
  Effect.gen(function* () {
    const { listings, eligible, seal: listed } = yield* scanBeneath(at, directories, beneath, statFree)
    if (listed === undefined) return { listings, seal: undefined }
    const checks = new Uint8Array(directories.length * LISTING_CHECK_BYTES)
    const newestByDirectory = new BigInt64Array(directories.length).fill(NO_CTIME)
    const sealedAt = new Set<number>()
    const failedThere = new Set(listed.failed ?? [])
    eligible.forEach((i, k) => {
      if (failedThere.has(k)) return
      checks.set(
        listed.checks.subarray(k * LISTING_CHECK_BYTES, (k + 1) * LISTING_CHECK_BYTES),
        i * LISTING_CHECK_BYTES,
      )
      newestByDirectory[i] = listed.newestByDirectory[k]!
      sealedAt.add(i)
    })
    const failed = directories.flatMap((_, i) => (sealedAt.has(i) ? [] : [i]))
    const seal: ListingSeal = { checks, newestByDirectory, ...(failed.length > 0 ? { failed } : {}) }
    return { listings, seal }
  })

export const readLink = (at: ConfinedRoot, path: string) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "readlink", "report")
    if (target.kind !== "symlink") {
      return yield* new WorkspaceIoError({
        operation: "readlink",
        path,
        code: "EINVAL",
        message: `${JSON.stringify(path)} is ${target.kind === "missing" ? "missing" : aFileKind(target.kind)}, not a symlink`,
      })
    }
    return yield* Effect.mapError(at.fs.readlink(target.absolute), ioError("readlink", path))
  })
