/**
 * A capture's seal: how a repeat capture tells that nothing in scope changed since the last one
 * without scanning, so a cold process (the CLI before every model request) pays for a listing of
 * the tree's directories in native code rather than for a scan that builds an object per entry,
 * decodes the previous manifest and stat cache and decides every path again.
 *
 * A full capture that could vouch for its scan records a seal artifact (`PointCaptured.scanSeal`):
 * the directories it listed, a digest of their listings (`Workspace.sealListings`: every entry's
 * name, kind and whole lstat, ctime included), and a digest of the rest of what decided the point
 * (`contextOf`: the repository's index and outer ignore files by their stats, the settings that
 * decide scope, the store's places, the paths the session's checkpoints and write intents name).
 * The next capture of the session lists those directories again; the same digest and the same
 * context mean the same point, and it is recorded as the previous one (same manifest, stat cache
 * and skipped list) without a scan. Anything else, and the capture takes the full path.
 *
 * Why equal listings mean an equal point: every change to a file, link or directory entry (content,
 * mode, name, target, creation, removal) sets its ctime to the time of the change, which nothing
 * can set back. A seal is only recorded when every entry counted is older than the capture's start
 * by the racy window (`newestChangeNs`), so any later change gives a ctime that differs from the
 * sealed one, and the listing differs. With no change since before the capture began, what the
 * capture read is what was sealed; with equal listings now, it is still the tree. Ignore files in
 * scope are entries of the listings; the ones outside it and the index are in the context.
 *
 * Not sealed (the seal would not vouch for the next point): a capture that tracked a path beyond
 * its scan that is there (a checkpoint's file under an ignored directory) or whose absence no
 * listing shows (a path deleted since is a tombstone, and stays one while its directory's listing
 * says it is not there; see `absenceListed`), had declared paths, took
 * tracked files below an ignored directory, or left anything out for a reason that is not a fixed
 * function of the listings (budget, unreadable, changed while read, a refused ignore file, an
 * invalid path); a live engine's capture (its watcher is better); a workspace without
 * `sealListings`. A seal that cannot be read (collected, damaged) only costs the full path.
 *
 * `.git` and Rewind's store are counted by name and kind only: git and every capture change their
 * stats, and no capture looks inside them. Changing what a scan decides from the same listings
 * (the skip list, ignore-file limits) must bump `SEAL_VERSION`, which is part of the context.
 */
import type { ContentHash, PointCaptured, SkippedPath, SkipReason, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Encoding, Option, Schema } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { type ListingSeal, type StatFree, Workspace, type WorkspaceService } from "../ports/Workspace.js"
import { WorkspaceChanges } from "../ports/WorkspaceChanges.js"
import type { SessionState } from "../session/sessionState.js"
import { hashContent } from "../workspace/contentHash.js"
import { STORE_DIRECTORY_NAME, storeDirectories, VCS_NAME } from "../workspace/protection.js"
import { repositoryKey } from "../workspace/repository.js"
import type { PointIndex } from "./pointIndex.js"
import type { ScanResult } from "./workspaceScan.js"

/** Part of every context: bump it whenever a scan would decide differently from the same listings. */
const SEAL_VERSION = 1

const STAT_FREE_NAMES: ReadonlyArray<string> = [VCS_NAME, STORE_DIRECTORY_NAME]

/**
 * The least racy window a seal takes, whatever the capture's setting (a host may set 0 for its stat
 * cache): file times come from a coarse clock (a tick of up to 10 ms), and a change in the tick of
 * an entry's listed ctime could leave its stat as listed.
 */
const MIN_WINDOW_MS = 20

/** Skip reasons that follow from the listings and the context alone. */
const FIXED_REASONS: ReadonlySet<SkipReason> = new Set<SkipReason>([
  "skipped_directory",
  "protected",
  "not_a_regular_file",
  "unsupported_name",
  "over_size_limit",
])

const SealRecord = Schema.parseJson(
  Schema.Struct({
    seal: Schema.Literal(SEAL_VERSION),
    digest: Schema.String,
    context: Schema.String,
    /** In the order listed (the directories that changed last first: see `hotFirst`). */
    directories: Schema.Array(Schema.String),
    /** Each listing's check, 8 bytes a directory, base64 (`ListingSeal.checks`). */
    checks: Schema.String,
    storePaths: Schema.Array(Schema.String),
  }),
)
const decodeRecord = Schema.decodeUnknownOption(SealRecord)
const encodeRecord = Schema.encodeSync(SealRecord)

/** A listing of the sealed directories taken at the start of a capture, for its own seal. */
interface SealReading {
  readonly directories: ReadonlyArray<string>
  readonly storePaths: ReadonlyArray<string>
  readonly seal: ListingSeal
}

export type SealCheck =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Scan"; readonly context: string; readonly reading?: SealReading }
  /** No seal will be checked or recorded by this capture, for the reason given. */
  | { readonly _tag: "Off"; readonly why: string }

/** What a full capture's seal came to: its artifact, or why it has none. */
type SealOutcome = { readonly scanSeal: ContentHash } | { readonly unsealed: string }

const unsealed = (why: string): SealOutcome => ({ unsealed: why })
const racy = (windowMs: number) => unsealed(`something changed within ${windowMs} ms of the capture`)

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/** What decides a capture's point besides the listings (see the header). */
const contextOf = (
  state: SessionState,
  index: PointIndex,
  settings: { readonly maxFileBytes: number; readonly maxFiles: number },
) =>
  Effect.gen(function* () {
    const stores = yield* storeDirectories
    const repository = yield* repositoryKey
    return hashContent(
      JSON.stringify([
        SEAL_VERSION,
        repository,
        settings.maxFileBytes,
        settings.maxFiles,
        stores,
        state.checkpoints.map((c) => c.path),
        index.writeIntents.map((intent) => intent.entries.map((e) => e.path)),
      ]),
    )
  })

/**
 * Before a capture scans: whether its session's latest point's seal still holds (`Unchanged`: the
 * point may be recorded as that one), or the capture scans (with the context and, when the seal's
 * directories were listed, that listing for its own seal), or seals are off for it.
 */
export const checkSeal = (input: {
  readonly base: PointCaptured | undefined
  readonly state: SessionState
  readonly index: PointIndex
  readonly settings: { readonly maxFileBytes: number; readonly maxFiles: number }
  readonly declaredPaths: number
}): Effect.Effect<SealCheck, never, Workspace | ArtifactStore> =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const live = yield* Effect.serviceOption(WorkspaceChanges)
    if (workspace.sealListings === undefined)
      return {
        _tag: "Off",
        why: "this workspace cannot seal its listings (that takes the native scanner, on Linux)",
      } as const
    if (Option.isSome(live))
      return { _tag: "Off", why: "a live engine's watcher tells what changed" } as const
    if (input.declaredPaths > 0) return { _tag: "Off", why: "the capture declared paths" } as const
    const context = yield* contextOf(input.state, input.index, input.settings)
    const sealHash = input.base?.scanSeal
    if (sealHash === undefined) return { _tag: "Scan", context } as const
    const bytes = yield* Effect.option((yield* ArtifactStore).get(sealHash))
    const record = Option.flatMap(bytes, (b) => decodeRecord(new TextDecoder().decode(b)))
    // Another context (a checkpoint since, the index): the seal cannot hold, whatever the listings.
    if (Option.isNone(record) || record.value.context !== context) return { _tag: "Scan", context } as const
    const { directories, storePaths, digest } = record.value
    const checks = Either.getOrUndefined(Encoding.decodeBase64(record.value.checks))
    const listed = yield* sealed(
      workspace,
      directories,
      { names: STAT_FREE_NAMES, paths: storePaths },
      checks,
    )
    // "differs": the listing stopped at the first directory that changed, so none is reused.
    if (Option.isNone(listed) || listed.value === "differs") return { _tag: "Scan", context } as const
    if (listed.value.digest === digest) return { _tag: "Unchanged" } as const
    return { _tag: "Scan", context, reading: { directories, storePaths, seal: listed.value } } as const
  })

/**
 * `sealListings`, where a defect (an adapter's bug) is "cannot tell": a seal only saves a scan, so
 * nothing that goes wrong with one may cost the capture itself.
 */
const sealed = (
  workspace: WorkspaceService,
  directories: ReadonlyArray<string>,
  statFree: StatFree,
  expectedChecks?: Uint8Array,
) =>
  (workspace.sealListings?.(directories, statFree, expectedChecks) ?? Effect.succeed(Option.none())).pipe(
    Effect.catchAllDefect(() => Effect.succeed(Option.none<ListingSeal | "differs">())),
  )

/**
 * The directories in the order a seal lists them: those holding the most recently changed files
 * first (an agent edits the same few places turn after turn), so that when something changed the
 * next capture's listing stops early (`sealListings`' checks); by path otherwise.
 */
const hotFirst = (directories: ReadonlyArray<string>, scan: ScanResult): ReadonlyArray<string> => {
  const newest = new Map<string, bigint>()
  for (const [path, { stat }] of scan.entries) {
    const slash = path.lastIndexOf("/")
    const dir = slash === -1 ? "" : path.slice(0, slash)
    const known = newest.get(dir)
    if (known === undefined || stat.ctimeNs > known) newest.set(dir, stat.ctimeNs)
  }
  const at = (dir: string) => newest.get(dir) ?? -1n
  return [...directories].sort((a, b) => {
    const [x, y] = [at(a), at(b)]
    return x !== y ? (x > y ? -1 : 1) : a < b ? -1 : a > b ? 1 : 0
  })
}

/**
 * Whether the listings vouch for `path` being absent: the nearest directory above it that the scan
 * listed has no entry on the way to it (so none can appear without that listing changing).
 */
const absenceListed = (scan: ScanResult, path: string): boolean => {
  const { scopes, excluded } = scan.tree
  for (let end = path.lastIndexOf("/"); ; end = path.lastIndexOf("/", end - 1)) {
    const dir = end <= 0 ? "" : path.slice(0, end)
    if (scopes.has(dir)) {
      const next = path.indexOf("/", dir.length === 0 ? 0 : dir.length + 1)
      const child = next === -1 ? path : path.slice(0, next)
      return !scopes.has(child) && !excluded.has(child) && !scan.entries.has(child as WorkspacePath)
    }
    if (end <= 0) return false
  }
}

/**
 * After a full capture: the seal of its point, or why it cannot vouch for one (see the header).
 * `startedAtMs` is the capture's start, before any listing it made or reuses.
 */
export const sealCapture = (input: {
  readonly check: SealCheck
  readonly scan: ScanResult
  /** The paths tracked beyond the scan, and whether the capture found each absent. */
  readonly tracked: ReadonlySet<string>
  readonly absent: (path: string) => boolean
  readonly skipped: ReadonlyArray<SkippedPath>
  readonly startedAtMs: number
  readonly racyWindowMs: number
}): Effect.Effect<SealOutcome, never, Workspace | ArtifactStore> =>
  Effect.gen(function* () {
    const { check, scan } = input
    const workspace = yield* Workspace
    if (check._tag === "Off") return unsealed(check.why)
    if (check._tag !== "Scan") return unsealed("seals are off")
    if (scan.tree.beyond.size > 0) return unsealed("it took files git tracks below an ignored directory")
    for (const path of input.tracked)
      if (!input.absent(path) || !absenceListed(scan, path))
        return unsealed(`${path} was tracked beyond what the scan listed`)
    const notFixed = input.skipped.find((s) => !FIXED_REASONS.has(s.reason))
    if (notFixed !== undefined) return unsealed(`${notFixed.path} was left out (${notFixed.reason})`)
    // A file the scan saw change within the window: no listing needed to know there is no seal.
    const windowMs = Math.max(input.racyWindowMs, MIN_WINDOW_MS)
    const racyFromNs = BigInt(input.startedAtMs - windowMs) * 1_000_000n
    for (const { stat } of scan.entries.values()) if (stat.ctimeNs >= racyFromNs) return racy(windowMs)
    const listedNow = [...scan.tree.scopes.keys()].sort()
    const storePaths = [...(yield* storeDirectories)].sort()
    const statFree: StatFree = { names: STAT_FREE_NAMES, paths: storePaths }
    const earlier = check.reading
    let seal: ListingSeal
    let directories: ReadonlyArray<string>
    if (
      earlier !== undefined &&
      sameList([...earlier.directories].sort(), listedNow) &&
      sameList(earlier.storePaths, storePaths)
    ) {
      // The same directories, listed before the scan: that listing is this point's seal too.
      seal = earlier.seal
      directories = earlier.directories
    } else {
      directories = hotFirst(listedNow, scan)
      const listed = yield* sealed(workspace, directories, statFree)
      if (Option.isNone(listed) || listed.value === "differs")
        return unsealed("a directory could not be listed again")
      seal = listed.value
    }
    if (seal.newestChangeNs >= racyFromNs) return racy(windowMs)
    const record = encodeRecord({
      seal: SEAL_VERSION,
      digest: seal.digest,
      context: check.context,
      directories,
      checks: Encoding.encodeBase64(seal.checks),
      storePaths,
    })
    const stored = yield* Effect.either((yield* ArtifactStore).put(new TextEncoder().encode(record)))
    return Either.isRight(stored)
      ? { scanSeal: stored.right }
      : unsealed(`the seal could not be stored: ${stored.left.message}`)
  })
