/**
 * A capture's seal: how a repeat capture tells what changed in scope since the last one without
 * scanning, so a cold process (the CLI before every model request) pays for a listing of the
 * tree's directories in native code rather than for a scan that builds an object per entry,
 * decodes the previous manifest and stat cache and decides every path again.
 *
 * A capture that could vouch for its listings records a seal artifact (`PointCaptured.scanSeal`):
 * the directories it listed, a 128-bit check of each one's listing (`Workspace.sealListings`:
 * every entry's name, kind and whole lstat, ctime included), the directories among them whose
 * checks vouch for nothing (`volatile`), and a digest of the rest of what decided the point
 * (`contextRest` with `repositoryKey`: the settings that decide scope, the store's places, the
 * repository's index and outer ignore files by their stats; and the same by content, `scopeOf`,
 * with and without the set of paths git tracks, for when only the stats moved), the tracked table
 * (a check of the names git tracks in each directory), the session table (a check of each path
 * the session's checkpoints and write intents name, `sessionTable`) and the beyond table (each file
 * git tracks below an ignored directory, which no listing holds, with a check of its stat:
 * `beyondTable`; checked one by one, and any change is a full scan).
 * A full capture takes the checks from its own scan's listings where the workspace seals as it
 * scans (`Workspace.scanDirectoriesSealed`), so it lists the tree once: a listing the scan decided
 * by vouches for the point as one taken after the scan would (a change after it differs from it).
 * The next capture of the session lists those directories again. The same context (or the same
 * by content) and every check equal (none volatile) mean the same point, recorded as the previous
 * one without a scan; some checks different mean only those directories changed (`SealedChanges`,
 * captured by `sealedCapture.ts`). Where only what git tracks changed, the directories whose
 * tracked names changed count as changed too (`trackedChanges`): a path git starts or stops
 * tracking changes what a scan decides in its own directory and nowhere else, except below an
 * ignored directory, which the capture of the changes refuses. So does the nearest sealed
 * directory above a path the session named since the seal (`sessionChanges`: a capture examines
 * every such path, and a capture of the changes examines those below a directory it lists again),
 * so a checkpoint of a new file does not cost the next capture the whole tree. Anything else (a
 * path the seal's session named that the session no longer names), and the capture scans the
 * whole tree.
 *
 * Why an equal check means an unchanged directory: every change to a file, link or directory
 * entry (content, mode, name, target, creation, removal) sets its ctime to the time of the change,
 * which nothing can set back. A listing vouches for its directory only when every entry counted is
 * older than the capture's start by the racy window (`newestByDirectory`); otherwise it is
 * volatile. So any later change gives a ctime that differs from the sealed one, and the check
 * differs (but for a chance of one in 2^128). Ignore files in scope are entries of the listings;
 * the ones outside it and the index are in the context.
 *
 * Not sealed (the seal would not vouch for the next point): a capture that tracked a path beyond
 * its scan that is there (a checkpoint's file under an ignored directory) or whose absence no
 * listing shows (a path deleted since is a tombstone, and stays one while its directory's listing
 * says it is not there; see `absenceListed`), had declared paths, took
 * more than `MAX_BEYOND` files git tracks below ignored directories or one that changed within the
 * racy window, or left anything out for a reason that is not a fixed
 * function of the listings (budget, unreadable, changed while read, a refused ignore file, an
 * invalid path); a live engine's capture (its watcher is better); a workspace without
 * `sealListings`. A seal that cannot be read (collected, damaged) only costs the full path.
 *
 * `.git` and Rewind's store are counted by name and kind only: git and every capture change their
 * stats, and no capture looks inside them. Changing what a scan decides from the same listings
 * (the skip list, ignore-file limits) must bump `SEAL_VERSION`, which is part of the context.
 */
import {
  type ContentHash,
  type FileStat,
  type PointCaptured,
  parentOf,
  type SkippedPath,
  type SkipReason,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Effect, Either, Option, Schema } from "effect"
import { packHex, unpackHex } from "../internal/hex.js"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import {
  LISTING_CHECK_BYTES,
  type ListingSeal,
  type StatFree,
  Workspace,
  type WorkspaceService,
} from "../ports/Workspace.js"
import { WorkspaceChanges } from "../ports/WorkspaceChanges.js"
import type { SessionState } from "../session/sessionState.js"
import { hashContent, sameBytes, sha256HexOfText } from "../workspace/contentHash.js"
import type { TrackedFiles } from "../workspace/gitIndex.js"
import { STORE_DIRECTORY_NAME, storeDirectories, VCS_NAME } from "../workspace/protection.js"
import { repositoryKey, repositoryScope } from "../workspace/repository.js"
import type { PointIndex } from "./pointIndex.js"
import type { ScanResult } from "./workspaceScan.js"

/**
 * Part of every context and record: bump it whenever a scan would decide differently from the same
 * listings, or the record changes (2: 16-byte checks, volatile directories, no digest; 3: the
 * context by content and the tracked table; 4: the session's paths out of the context, into the
 * session table, and each directory's tracked names checked in the index's order; 5: the files git
 * tracks below an ignored directory, by their stats; 6: a record may be a delta over its base's).
 */
const SEAL_VERSION = 6 as const

/**
 * The deepest a seal delta may sit over its full record: a read takes at most this many records
 * (a few hundred bytes each) beside the full one.
 */
const MAX_SEAL_DEPTH = 16

/** The bytes of a tracked table's entry: a directory's key, then the check of its tracked names. */
const TRACKED_BYTES = 16

/** The bytes of a session table's entry: the check of a path the session names. */
const SESSION_BYTES = 8

/** The bytes of a listing's check. */
const CHECK_BYTES = LISTING_CHECK_BYTES

const STAT_FREE_NAMES: ReadonlyArray<string> = [VCS_NAME, STORE_DIRECTORY_NAME]

/** What a seal counts by name and kind only: `.git` anywhere, and the store's places. */
export const sealStatFree: Effect.Effect<StatFree> = Effect.map(storeDirectories, (stores) => ({
  names: STAT_FREE_NAMES,
  paths: [...stores].sort(),
}))

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

/**
 * A seal record as stored: a JSON header line (`SealHeader`), then the checks (`CHECK_BYTES` a
 * directory, in the order of the directories), the tracked table (`TRACKED_BYTES` an entry, see
 * `trackedTable`), the session table (`SESSION_BYTES` an entry, see `sessionTable`) and the
 * directories, each followed by a NUL. Binary because a tree's directories
 * and checks are most of it (50k directories at four copies of babel): JSON with base64 cost a
 * capture ~0.2 s to read and more to write.
 *
 * A delta (`base` set) is the record of a capture of the changes that kept its base seal's
 * directories in their order: its header is whole (it is small), then the indices of the
 * directories whose check changed (4 bytes each, big-endian), their checks, the tracked table
 * unless it is the base's (`baseTracked`), and the session table; the directories and every other
 * check are the base's. The checks are random bytes that no compression shrinks: stored whole at
 * every capture of a change, they grew a store by ~0.4 MB a turn at babel's shape (~1.7 MB at four
 * copies), where a delta takes a few hundred bytes. A delta sits at `depth` over a full record
 * (at most `MAX_SEAL_DEPTH`), one more than its base, so a chain is finite and a forged loop is
 * refused.
 */
const SealHeader = Schema.parseJson(
  Schema.Struct({
    seal: Schema.Literal(SEAL_VERSION),
    context: Schema.String,
    /** The context by content (`scopeOf`): what a context whose stats moved is compared by. */
    scope: Schema.String,
    /** The same without the set of paths git tracks: equal, and only the tracked set changed. */
    rules: Schema.String,
    directories: Schema.Int.pipe(Schema.nonNegative()),
    /** Entries of the tracked table. */
    tracked: Schema.Int.pipe(Schema.nonNegative()),
    /** Entries of the session table. */
    session: Schema.Int.pipe(Schema.nonNegative()),
    /**
     * The directories (by index) whose checks vouch for nothing: something in them changed within
     * the racy window, or the capture that sealed them did not list them (see the header).
     */
    volatile: Schema.Array(Schema.Int.pipe(Schema.nonNegative())),
    storePaths: Schema.Array(Schema.String),
    /** The files git tracks below an ignored directory, each with the check of its stat (`beyondTable`). */
    beyond: Schema.Array(Schema.Tuple(Schema.String, Schema.String)),
    /** A delta's base seal. */
    base: Schema.optional(Schema.String),
    /** A delta's depth over its full record. */
    depth: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_SEAL_DEPTH))),
    /** A delta's count of directories whose check changed. */
    patched: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
    /** A delta whose tracked table is its base's. */
    baseTracked: Schema.optional(Schema.Boolean),
  }),
)
const decodeHeader = Schema.decodeUnknownOption(SealHeader)
const encodeHeader = Schema.encodeSync(SealHeader)

interface SealRecord {
  /**
   * The directories as stored (each followed by a NUL), when known: a record whose directories are
   * a read record's, in its order, reuses its bytes rather than encoding 50k names again.
   */
  readonly names?: Uint8Array
  readonly context: string
  readonly scope: string
  readonly rules: string
  readonly directories: ReadonlyArray<string>
  readonly checks: Uint8Array
  readonly tracked: Uint8Array
  readonly session: Uint8Array
  readonly volatile: ReadonlyArray<number>
  readonly storePaths: ReadonlyArray<string>
  readonly beyond: BeyondTable
}

/** A record as read, with where it sits: `depth` 0 for a full record. */
type ReadRecord = SealRecord & { readonly names: Uint8Array; readonly depth: number }

/** The seal a capture of the changes read, for its own seal to be stored as a delta over it. */
export interface SealBase {
  readonly hash: ContentHash
  readonly depth: number
  readonly checks: Uint8Array
  readonly tracked: Uint8Array
}

const textEncoder = new TextEncoder()
const textDecoder = new TextDecoder("utf-8", { fatal: true })

type Header = typeof SealHeader.Type

/** The header line of a record and where its body starts, or none. */
const decodeHead = (bytes: Uint8Array): Option.Option<{ readonly header: Header; readonly body: number }> => {
  const newline = bytes.indexOf(10)
  if (newline < 0) return Option.none()
  try {
    return Option.map(decodeHeader(textDecoder.decode(bytes.subarray(0, newline))), (header) => ({
      header,
      body: newline + 1,
    }))
  } catch {
    return Option.none()
  }
}

const concat = (parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** What every record's header says whole, full or delta. */
const headerOf = (record: SealRecord) => ({
  seal: SEAL_VERSION,
  context: record.context,
  scope: record.scope,
  rules: record.rules,
  directories: record.directories.length,
  tracked: record.tracked.length / TRACKED_BYTES,
  session: record.session.length / SESSION_BYTES,
  volatile: record.volatile,
  storePaths: record.storePaths,
  beyond: record.beyond,
})

const encodeRecord = (record: SealRecord): Uint8Array => {
  const header = textEncoder.encode(`${encodeHeader(headerOf(record))}\n`)
  const names = record.names ?? textEncoder.encode(record.directories.map((d) => `${d}\0`).join(""))
  return concat([header, record.checks, record.tracked, record.session, names])
}

/**
 * `record` as a delta over `base` (see `SealHeader`), when it is worth one: `record` keeps the
 * base's directories in their order, the base sits below the depth limit, and at most a quarter of
 * the checks changed; else undefined (the record is stored whole).
 */
const encodeDelta = (record: SealRecord, base: SealBase): Uint8Array | undefined => {
  const count = record.directories.length
  if (base.depth >= MAX_SEAL_DEPTH || base.checks.length !== record.checks.length) return undefined
  const patched: Array<number> = []
  for (let i = 0; i < count; i++) {
    if (checkDiffers(record.checks, base.checks, i)) patched.push(i)
    if (patched.length > count >> 2) return undefined
  }
  const baseTracked = sameBytes(record.tracked, base.tracked)
  const header = textEncoder.encode(
    `${encodeHeader({
      ...headerOf(record),
      base: base.hash,
      depth: base.depth + 1,
      patched: patched.length,
      ...(baseTracked ? { baseTracked } : {}),
    })}\n`,
  )
  const indices = new Uint8Array(patched.length * 4)
  const view = new DataView(indices.buffer)
  const checks = new Uint8Array(patched.length * CHECK_BYTES)
  patched.forEach((i, k) => {
    view.setUint32(k * 4, i)
    checks.set(record.checks.subarray(i * CHECK_BYTES, (i + 1) * CHECK_BYTES), k * CHECK_BYTES)
  })
  return concat([header, indices, checks, baseTracked ? new Uint8Array(0) : record.tracked, record.session])
}

/** Whether directory `i`'s check differs between two runs of checks. */
const checkDiffers = (a: Uint8Array, b: Uint8Array, i: number) => {
  for (let at = i * CHECK_BYTES, end = at + CHECK_BYTES; at < end; at++) if (a[at] !== b[at]) return true
  return false
}

/** The fields every record's header carries whole. */
const fieldsOf = (header: Header) => ({
  context: header.context,
  scope: header.scope,
  rules: header.rules,
  volatile: header.volatile,
  storePaths: header.storePaths,
  beyond: header.beyond,
})

/** A stored full record, or none when it is not one this version wrote. */
const decodeFull = (bytes: Uint8Array, header: Header, body: number): Option.Option<ReadRecord> => {
  try {
    const table = body + header.directories * CHECK_BYTES
    const session = table + header.tracked * TRACKED_BYTES
    const start = session + header.session * SESSION_BYTES
    if (start > bytes.length) return Option.none()
    const directories = textDecoder.decode(bytes.subarray(start)).split("\0")
    // Every directory ends with a NUL: the last piece is empty.
    if (directories.pop() !== "" || directories.length !== header.directories) return Option.none()
    if (directories.some((d) => d !== "" && workspacePathProblem(d) !== undefined)) return Option.none()
    if (header.volatile.some((i) => i >= directories.length)) return Option.none()
    return Option.some({
      ...fieldsOf(header),
      names: bytes.subarray(start),
      directories,
      checks: bytes.subarray(body, table),
      tracked: bytes.subarray(table, session),
      session: bytes.subarray(session, start),
      depth: 0,
    })
  } catch {
    return Option.none()
  }
}

/** A delta's record over its base's as read (`base`), or none when the two do not fit. */
const applyDelta = (
  bytes: Uint8Array,
  header: Header,
  body: number,
  base: ReadRecord,
): Option.Option<ReadRecord> => {
  const count = base.directories.length
  const patched = header.patched ?? 0
  const trackedBytes = header.baseTracked === true ? 0 : header.tracked * TRACKED_BYTES
  const checksAt = body + patched * 4
  const trackedAt = checksAt + patched * CHECK_BYTES
  const sessionAt = trackedAt + trackedBytes
  const end = sessionAt + header.session * SESSION_BYTES
  if (end !== bytes.length || header.directories !== count) return Option.none()
  if (header.baseTracked === true && base.tracked.length !== header.tracked * TRACKED_BYTES)
    return Option.none()
  if (header.volatile.some((i) => i >= count)) return Option.none()
  const checks = new Uint8Array(base.checks)
  const view = new DataView(bytes.buffer, bytes.byteOffset + body, patched * 4)
  for (let k = 0; k < patched; k++) {
    const i = view.getUint32(k * 4)
    if (i >= count) return Option.none()
    checks.set(bytes.subarray(checksAt + k * CHECK_BYTES, checksAt + (k + 1) * CHECK_BYTES), i * CHECK_BYTES)
  }
  return Option.some({
    ...fieldsOf(header),
    names: base.names,
    directories: base.directories,
    checks,
    tracked: header.baseTracked === true ? base.tracked : bytes.subarray(trackedAt, sessionAt),
    session: bytes.subarray(sessionAt, end),
    depth: header.depth!,
  })
}

/**
 * The seal stored at `hash`, a delta read over its chain, or none when it or a record below is
 * missing or not one this version wrote (then the capture scans). `below`: the depth a record read
 * here must be under (each base sits one below its delta, so a forged loop ends).
 */
const readRecord = (
  hash: string,
  below = MAX_SEAL_DEPTH + 1,
): Effect.Effect<Option.Option<ReadRecord>, never, ArtifactStore> =>
  Effect.gen(function* () {
    const read = yield* Effect.option((yield* ArtifactStore).get(hash as ContentHash))
    if (Option.isNone(read)) return Option.none()
    const bytes = read.value
    const head = decodeHead(bytes)
    if (Option.isNone(head)) return Option.none()
    const { header, body } = head.value
    if (header.base === undefined) return decodeFull(bytes, header, body)
    const depth = header.depth
    if (depth === undefined || depth >= below) return Option.none()
    const base = yield* readRecord(header.base, depth)
    if (Option.isNone(base) || base.value.depth !== depth - 1) return Option.none()
    return applyDelta(bytes, header, body, base.value)
  })

/**
 * The artifacts the seal at `hash` is read from: itself and, for a delta, every record below it
 * (what a cleanup keeps of a session's latest seal). As far as they can be read: a seal whose
 * chain is broken only costs a scan.
 */
export const sealLayers = (
  hash: ContentHash,
): Effect.Effect<ReadonlyArray<ContentHash>, never, ArtifactStore> =>
  Effect.gen(function* () {
    const out: Array<ContentHash> = [hash]
    let at: ContentHash = hash
    for (let i = 0; i < MAX_SEAL_DEPTH; i++) {
      const bytes = yield* Effect.option((yield* ArtifactStore).get(at))
      const base = Option.flatMap(bytes, decodeHead).pipe(Option.flatMapNullable((h) => h.header.base))
      if (Option.isNone(base) || out.includes(base.value as ContentHash)) break
      at = base.value as ContentHash
      out.push(at)
    }
    return out
  })

/** A listing of the sealed directories taken at the start of a capture, for its own seal. */
interface SealReading {
  readonly directories: ReadonlyArray<string>
  /** The directories as the base point's seal stored them (`SealRecord.names`). */
  readonly names: Uint8Array
  readonly storePaths: ReadonlyArray<string>
  readonly seal: ListingSeal
}

/**
 * What changed since the base point's seal, by directory: what a capture of the changes
 * (`sealedCapture.ts`) lists again instead of the whole tree.
 */
export interface SealedChanges {
  /** The seal's directories, in its order, and the listing of them at this capture's start. */
  readonly directories: ReadonlyArray<string>
  /** The same as the seal stored them (`SealRecord.names`). */
  readonly names: Uint8Array
  /** The same as a set (which the capture of the changes asks of every directory it lists). */
  readonly sealed: ReadonlySet<string>
  readonly listing: ListingSeal
  /** Directories whose listing differs from the sealed one, could not be listed, or was volatile. */
  readonly changed: ReadonlySet<string>
  /** Of those, the ones that could not be listed (gone, or no longer a directory). */
  readonly failed: ReadonlySet<string>
  /** The seal read, what the capture's own seal is stored as a delta over where it can be. */
  readonly base: SealBase
}

export type SealCheck =
  | { readonly _tag: "Unchanged" }
  | {
      readonly _tag: "Scan"
      readonly context: string
      /** The context by content, taken after `context` and before the scan (see `scopeOf`). */
      readonly scope: SealScope
      /** The session table now (`sessionTable`). */
      readonly session: Uint8Array
      readonly reading?: SealReading
      /** Set when the base point's seal holds but for the directories it names. */
      readonly changes?: SealedChanges
      /**
       * With `changes`: the base seal's files tracked below an ignored directory, their stats found
       * unchanged at this capture's start (what a capture of the changes keeps of them).
       */
      readonly beyond?: BeyondTable
      /** Why the base point's seal cannot be used at all (when it has one). */
      readonly why?: string
    }
  /** No seal will be checked or recorded by this capture, for the reason given. */
  | { readonly _tag: "Off"; readonly why: string }

/** What a full capture's seal came to: its artifact, or why it has none. */
type SealOutcome = { readonly scanSeal: ContentHash } | { readonly unsealed: string }

const unsealed = (why: string): SealOutcome => ({ unsealed: why })

/**
 * What decides a capture's point besides the listings, the repository and the session's paths (see
 * the header): the settings that decide scope and the store's places. Made once per capture, as the
 * tail of the context's JSON, and digested with each of the repository's parts (`contextWith`).
 */
const contextRest = (settings: { readonly maxFileBytes: number; readonly maxFiles: number }) =>
  Effect.map(storeDirectories, (stores) =>
    JSON.stringify([settings.maxFileBytes, settings.maxFiles, stores]).slice(1),
  )

/**
 * The session table: a 64-bit check of each path the session's checkpoints and write intents name
 * (every capture examines those paths, in scope or not: `captureTracking.ts`), sorted, without
 * repeats (`bytes`, what a seal records instead of the paths, which a long session makes many of),
 * and the path of each check (`pathOf`, for `sessionChanges`).
 */
const sessionTable = (state: SessionState, index: PointIndex) => {
  const pathOf = new Map<string, string>()
  for (const c of state.checkpoints) pathOf.set(check64(c.path), c.path)
  for (const intent of index.writeIntents) for (const e of intent.entries) pathOf.set(check64(e.path), e.path)
  return { bytes: packHex([...pathOf.keys()].sort(), SESSION_BYTES), pathOf }
}

/**
 * Where the session's paths changed since a seal, as the sealed directories to list again: the
 * nearest sealed directory at or above each path named since (its capture examines the path, as
 * any capture examines the session's paths below a directory it lists). `undefined` when a path
 * the seal's session named is no longer named: whether a capture still takes it depends on more
 * than its directory, and the capture scans the whole tree. (A session's checkpoints and write
 * intents are only ever added to, rewinds included, so this is a safeguard, not a path taken.)
 */
const sessionChanges = (
  before: Uint8Array,
  now: ReturnType<typeof sessionTable>,
  sealed: () => ReadonlySet<string>,
): ReadonlySet<string> | undefined => {
  const old = new Set(unpackHex(before, SESSION_BYTES))
  for (const check of old) if (!now.pathOf.has(check)) return undefined
  const out = new Set<string>()
  if (now.pathOf.size === old.size) return out
  for (const [check, path] of now.pathOf) {
    if (old.has(check)) continue
    const at = nearestSealed(sealed(), parentOf(path))
    if (at === undefined) return undefined
    out.add(at)
  }
  return out
}

/** The nearest sealed directory at or above `directory`, if any (the root is, in a sealed tree). */
const nearestSealed = (sealed: ReadonlySet<string>, directory: string): string | undefined => {
  for (let at = directory; ; at = parentOf(at)) {
    if (sealed.has(at)) return at
    if (at === "") return undefined
  }
}

/** The digest of `[SEAL_VERSION, repository, ...rest]` (the JSON `contextRest` ends). */
const contextWith = (repository: string, rest: string) =>
  hashContent(`[${SEAL_VERSION},${JSON.stringify(repository)},${rest}`)

/**
 * The context by content, with the repository by what it contributes to a scan's decisions
 * (`repositoryScope`: where the root sits in it, the set of paths git tracks, the outer ignore
 * files' rules), read and parsed where their stats moved; and the same without the tracked set.
 * Git rewrites its index at every commit, `add` and often `status`, without a change to the
 * tracked set: compared by this, such a capture keeps its seal. Taken after the context by stats
 * (`repositoryKey`) and before the scan, so a seal never claims a scope its scan did not see: a
 * change between the two leaves a stale `context` beside a current `scope` (the next capture
 * compares scopes, which hold for the scan too), and one after both leaves them both stale (the
 * next capture scans).
 */
const scopeOf = (rest: string) =>
  Effect.map(repositoryScope, (repository) => ({
    scope: contextWith(repository.all, rest),
    rules: contextWith(repository.rules, rest),
    tracked: repository.tracked,
  }))

/**
 * The context by content (`scopeOf`) a seal records: with and without the tracked set, and the
 * tracked table (`bytes`, when known already: the base seal's, or the one just compared;
 * otherwise made from `files` when the seal is stored).
 */
export interface SealScope {
  readonly scope: string
  readonly rules: string
  readonly tracked: { readonly bytes?: Uint8Array; readonly files?: TrackedFiles }
}

/** 64 bits of a SHA-256, as 16 hex digits. */
const check64 = (text: string) => sha256HexOfText(text).slice(0, 16)

/**
 * The tracked table: for every directory holding paths git tracks (its parent's, for each path),
 * a check of the names it tracks there, keyed by a check of the directory's path. When the tracked
 * set changed, the directories whose entry changed are the only ones whose scan may decide
 * differently (`trackedChanges`); a whole tree's table is 16 bytes a directory, not its paths.
 */
const trackedTable = (files: TrackedFiles | undefined) => {
  const table = new Map<string, string>()
  const directoryOf = new Map<string, string>()
  // Two directories with one key would hide each other's changes: such a table places nothing.
  let collided = false
  // A directory at a time, its names in the index's order (sorted by bytes): no array of every
  // path, and no sort (at four copies of babel, 110k paths in 49k directories).
  files?.byDirectory((directory, names) => {
    const key = check64(`d\0${directory}`)
    collided ||= directoryOf.has(key)
    table.set(key, check64(names.join("\0")))
    directoryOf.set(key, directory)
  })
  return { table, directoryOf, collided }
}

const encodeTable = (table: ReadonlyMap<string, string>): Uint8Array =>
  packHex(
    [...table.keys()].sort().map((key) => key + table.get(key)!),
    TRACKED_BYTES,
  )

const decodeTable = (bytes: Uint8Array): Map<string, string> =>
  new Map(unpackHex(bytes, TRACKED_BYTES).map((entry) => [entry.slice(0, 16), entry.slice(16)]))

/**
 * Where the tracked set changed since a seal, as the sealed directories to list again: for each
 * directory whose tracked names changed, the nearest sealed directory at or above it (a scan of
 * the changes starts there and descends into whatever it did not seal, `sealedCapture.ts`).
 * `undefined` when a directory cannot be placed (its tracked names all went and it is not
 * sealed): the capture then scans the whole tree.
 */
const trackedChanges = (
  before: Uint8Array,
  now: ReturnType<typeof trackedTable>,
  directories: ReadonlyArray<string>,
  sealed: () => ReadonlySet<string>,
): ReadonlySet<string> | undefined => {
  if (now.collided) return undefined
  const old = decodeTable(before)
  const keys = new Set<string>()
  for (const [key, names] of now.table) if (old.get(key) !== names) keys.add(key)
  for (const key of old.keys()) if (!now.table.has(key)) keys.add(key)
  const found = new Set<string>()
  const unplaced = new Set<string>()
  for (const key of keys) {
    const directory = now.directoryOf.get(key)
    if (directory === undefined) unplaced.add(key)
    else found.add(directory)
  }
  if (unplaced.size > 0) {
    // Every sealed directory with such a key (one, but for a chance of one in 2^64).
    const placed = new Set<string>()
    for (const directory of directories) {
      const key = check64(`d\0${directory}`)
      if (unplaced.has(key)) {
        found.add(directory)
        placed.add(key)
      }
    }
    if (placed.size < unplaced.size) return undefined
  }
  const out = new Set<string>()
  for (const directory of found) {
    const at = nearestSealed(sealed(), directory)
    if (at === undefined) return undefined
    out.add(at)
  }
  return out
}

/**
 * The files git tracks below an ignored directory (`ScanTree.beyond`: no listing holds them, so no
 * listing check vouches for them), each with a check of its stat: kind, size, mode, both times and
 * inode, or "absent" where there is no file or link (gone, a directory, below a link). Checked one
 * by one at the next capture's start (`beyondChanged`); any change is a full scan, since a capture
 * of the changes does not descend into ignored directories. Sorted by path.
 */
export type BeyondTable = ReadonlyArray<readonly [string, string]>

/**
 * Above this many such files a seal is not recorded (each is stat'ed on its own at every check;
 * beyond a few thousand the full scan's listing is the cheaper way to look).
 */
const MAX_BEYOND = 4096

const ABSENT = "absent"

const statCheck = (stat: FileStat | undefined): string =>
  stat === undefined || stat.kind === "directory"
    ? ABSENT
    : sha256HexOfText(
        `${stat.kind}:${stat.size}:${stat.mode}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.inode}`,
      ).slice(0, 32)

/**
 * The beyond table of a full scan, from the stats its scan took them by (`takeTracked`): the point
 * holds what those stats describe. Undefined, with why, when one changed within the racy window (a
 * later change in the same clock tick could leave its stat as it is) or there are too many.
 */
const beyondTable = (scan: ScanResult, racyFrom: bigint): BeyondTable | string => {
  if (scan.tree.beyond.size > MAX_BEYOND)
    return `it took more than ${MAX_BEYOND} files git tracks below ignored directories`
  const table: Array<readonly [string, string]> = []
  for (const path of [...scan.tree.beyond].sort()) {
    const stat = scan.entries.get(path as WorkspacePath)?.stat
    if (stat !== undefined && stat.ctimeNs >= racyFrom)
      return `${path}, which git tracks below an ignored directory, changed within the racy window`
    table.push([path, statCheck(stat)])
  }
  return table
}

/** The first path of the table whose stat is not the one recorded, if any. */
const beyondChanged = (table: BeyondTable): Effect.Effect<string | undefined, never, Workspace> =>
  Effect.gen(function* () {
    if (table.length === 0) return undefined
    const workspace = yield* Workspace
    const stats = yield* workspace.statMany(table.map(([path]) => path as WorkspacePath))
    for (let i = 0; i < table.length; i++) {
      const found = stats[i]!
      const now = Either.isRight(found) ? statCheck(Option.getOrUndefined(found.right)) : ABSENT
      if (now !== table[i]![1]) return table[i]![0]
    }
    return undefined
  })

/**
 * Before a capture scans: whether its session's latest point's seal still holds (`Unchanged`: the
 * point may be recorded as that one), or the capture scans (with the context, the listing of the
 * seal's directories for its own seal, and what changed since the seal), or seals are off for it.
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
    const rest = yield* contextRest(input.settings)
    const context = contextWith(yield* repositoryKey, rest)
    const session = sessionTable(input.state, input.index)
    // Taken at most once, and only where the stats moved or the capture scans.
    const scoped = yield* Effect.cached(scopeOf(rest))
    let tracked: SealScope["tracked"] | undefined
    // The context by content when the seal's holds for it: the seal's context by stats is this one,
    // so the repository files are the ones it read (their stats say so, as everywhere they are
    // compared: `repository.ts`), and its scope is theirs. Taken from the seal, it needs no index
    // parsed: a capture of a few changed directories then parses none (`sealedCapture.ts`).
    let sealedScope: { readonly scope: string; readonly rules: string } | undefined
    const scopeNow = (): Effect.Effect<
      { readonly scope: string; readonly rules: string; readonly tracked?: TrackedFiles | undefined },
      never,
      Workspace
    > => (sealedScope === undefined ? scoped : Effect.succeed(sealedScope))
    const scan = (fields: {
      readonly why?: string
      readonly reading?: SealReading
      readonly changes?: SealedChanges
      readonly beyond?: BeyondTable
    }) =>
      Effect.map(
        scopeNow(),
        (s) =>
          ({
            _tag: "Scan",
            context,
            scope: { scope: s.scope, rules: s.rules, tracked: tracked ?? { files: s.tracked } },
            session: session.bytes,
            ...fields,
          }) as const,
      )
    const sealHash = input.base?.scanSeal
    if (sealHash === undefined) return yield* scan({})
    const record = yield* readRecord(sealHash)
    if (Option.isNone(record)) return yield* scan({ why: "the last point's seal could not be read" })
    const { directories, names, storePaths, volatile, checks } = record.value
    // The seal's directories as a set, made once and only where it is asked for.
    let sealedSet: ReadonlySet<string> | undefined
    const sealedDirectories = () => {
      sealedSet ??= new Set(directories)
      return sealedSet
    }
    // Another context (the index or an outer ignore file rewritten): the seal holds if the context
    // by content is the same; or, where only the set of paths git tracks changed, for every
    // directory but those where it changed.
    let trackedIn: ReadonlySet<string> | undefined
    if (record.value.context === context) {
      tracked = { bytes: record.value.tracked }
      sealedScope = { scope: record.value.scope, rules: record.value.rules }
    } else {
      const now = yield* scoped
      if (record.value.scope === now.scope) tracked = { bytes: record.value.tracked }
      else {
        const why =
          "what decides scope changed since the last point (the ignore files above the root, the settings)"
        if (record.value.rules !== now.rules) return yield* scan({ why })
        const table = trackedTable(now.tracked)
        trackedIn = trackedChanges(record.value.tracked, table, directories, sealedDirectories)
        if (trackedIn === undefined)
          return yield* scan({ why: "the files git tracks changed where the seal cannot place them" })
        tracked = { bytes: encodeTable(table.table) }
      }
    }
    const beyondNow = yield* beyondChanged(record.value.beyond)
    if (beyondNow !== undefined)
      return yield* scan({ why: `${beyondNow}, which git tracks below an ignored directory, changed` })
    const sessionIn = sessionChanges(record.value.session, session, sealedDirectories)
    if (sessionIn === undefined)
      return yield* scan({
        why: "a path the session's checkpoints or write intents named is no longer named",
      })
    const listed = yield* sealed(workspace, directories, { names: STAT_FREE_NAMES, paths: storePaths })
    if (Option.isNone(listed) || listed.value.checks.length !== checks.length)
      return yield* scan({ why: "the sealed directories could not be listed" })
    const listing = listed.value
    const failed = new Set((listing.failed ?? []).map((i) => directories[i]!))
    const changed = new Set<string>([...failed, ...(trackedIn ?? []), ...sessionIn])
    for (const i of volatile) if (i >= 0 && i < directories.length) changed.add(directories[i]!)
    for (let i = 0; i < directories.length; i++)
      if (checkDiffers(listing.checks, checks, i)) changed.add(directories[i]!)
    if (changed.size === 0) return { _tag: "Unchanged" } as const
    return yield* scan({
      ...(failed.size === 0 ? { reading: { directories, names, storePaths, seal: listing } } : {}),
      changes: {
        directories,
        names,
        sealed: sealedDirectories(),
        listing,
        changed,
        failed,
        base: { hash: sealHash, depth: record.value.depth, checks, tracked: record.value.tracked },
      },
      beyond: record.value.beyond,
    })
  })

/**
 * `sealListings`, where a defect (an adapter's bug) is "cannot tell": a seal only saves a scan, so
 * nothing that goes wrong with one may cost the capture itself.
 */
const sealed = (workspace: WorkspaceService, directories: ReadonlyArray<string>, statFree: StatFree) =>
  (workspace.sealListings?.(directories, statFree) ?? Effect.succeed(Option.none())).pipe(
    Effect.catchAllDefect(() => Effect.succeed(Option.none<ListingSeal>())),
  )

/**
 * Whether the listings vouch for `path` holding no file or link: the nearest directory above it
 * that the scan listed shows, on the way to it, nothing, or a file or link (nothing is below one),
 * or at `path` itself a directory it listed; nothing else can be there without that listing
 * changing (a name, or a kind). An excluded entry on the way vouches for nothing (what is below an
 * ignored directory is not listed).
 */
const absenceListed = (scan: ScanResult, path: string): boolean => {
  const { scopes, excluded } = scan.tree
  for (let end = path.lastIndexOf("/"); ; end = path.lastIndexOf("/", end - 1)) {
    const dir = end <= 0 ? "" : path.slice(0, end)
    if (scopes.has(dir)) {
      const next = path.indexOf("/", dir.length === 0 ? 0 : dir.length + 1)
      const child = next === -1 ? path : path.slice(0, next)
      if (excluded.has(child)) return false
      return child !== path || !scan.entries.has(child as WorkspacePath)
    }
    if (end <= 0) return false
  }
}

/** What a capture hands to its seal (see `sealCapture` and `sealChanges`). */
interface SealInput {
  readonly check: SealCheck
  /** The scan: of the whole tree, or (`sealChanges`) of the directories that changed. */
  readonly scan: ScanResult
  /** The paths tracked beyond the scan, and whether the capture found each absent. */
  readonly tracked: ReadonlySet<string>
  readonly absent: (path: string) => boolean
  readonly skipped: ReadonlyArray<SkippedPath>
  /** The capture's start, before any listing it made or reuses. */
  readonly startedAtMs: number
  readonly racyWindowMs: number
}

/** Why the capture cannot vouch for a seal whatever its listings say; undefined when it can. */
const unsealable = (input: SealInput): SealOutcome | undefined => {
  const { check, scan } = input
  if (check._tag === "Off") return unsealed(check.why)
  if (check._tag !== "Scan") return unsealed("seals are off")
  for (const path of input.tracked)
    if (!input.absent(path) || !absenceListed(scan, path))
      return unsealed(`${path} was tracked beyond what the scan listed`)
  const notFixed = input.skipped.find((s) => !FIXED_REASONS.has(s.reason))
  if (notFixed !== undefined) return unsealed(`${notFixed.path} was left out (${notFixed.reason})`)
  return undefined
}

/** The listings' racy bound: an entry changed at or after it may change again unseen (see the header). */
const racyFrom = (input: SealInput) =>
  BigInt(input.startedAtMs - Math.max(input.racyWindowMs, MIN_WINDOW_MS)) * 1_000_000n

/** Stores a seal record; `checks` and `newest` per directory, in the order of `directories`. */
const storeSeal = (
  {
    context,
    scope,
    session,
  }: { readonly context: string; readonly scope: SealScope; readonly session: Uint8Array },
  directories: ReadonlyArray<string>,
  checks: Uint8Array,
  volatile: ReadonlyArray<number>,
  storePaths: ReadonlyArray<string>,
  beyond: BeyondTable,
  /** `directories` as a read record stored them, when they are its directories in its order. */
  names?: Uint8Array,
  /** The seal read at the capture's start, when `directories` are its own in its order. */
  over?: SealBase,
) =>
  Effect.gen(function* () {
    const tracked = scope.tracked.bytes ?? encodeTable(trackedTable(scope.tracked.files).table)
    const record: SealRecord = {
      ...(names === undefined ? {} : { names }),
      beyond,
      context,
      scope: scope.scope,
      rules: scope.rules,
      directories,
      checks,
      tracked,
      session,
      volatile,
      storePaths,
    }
    const bytes = (over === undefined ? undefined : encodeDelta(record, over)) ?? encodeRecord(record)
    const stored = yield* Effect.either((yield* ArtifactStore).put(bytes))
    return Either.isRight(stored)
      ? ({ scanSeal: stored.right } as const)
      : unsealed(`the seal could not be stored: ${stored.left.message}`)
  })

/** The indices of `newest` at or after the racy bound. */
const racyIndices = (newest: BigInt64Array, from: bigint, count: number) => {
  const out: Array<number> = []
  for (let i = 0; i < count; i++) if (newest[i]! >= from) out.push(i)
  return out
}

/** After a full capture: the seal of its point, or why it cannot vouch for one (see the header). */
export const sealCapture = (input: SealInput): Effect.Effect<SealOutcome, never, Workspace | ArtifactStore> =>
  Effect.gen(function* () {
    const refused = unsealable(input)
    if (refused !== undefined) return refused
    const beyond = beyondTable(input.scan, racyFrom(input))
    if (typeof beyond === "string") return unsealed(beyond)
    const check = input.check as Extract<SealCheck, { _tag: "Scan" }>
    const workspace = yield* Workspace
    const listedNow = [...input.scan.tree.scopes.keys()].sort()
    const statFree = yield* sealStatFree
    const storePaths = statFree.paths
    const earlier = check.reading
    let seal: ListingSeal
    let directories: ReadonlyArray<string>
    let names: Uint8Array | undefined
    if (
      earlier !== undefined &&
      sameList([...earlier.directories].sort(), listedNow) &&
      sameList(earlier.storePaths, storePaths)
    ) {
      // The same directories, listed before the scan: that listing is this point's seal too.
      seal = earlier.seal
      directories = earlier.directories
      names = earlier.names
    } else {
      directories = listedNow
      // The scan's own listings, sealed as it took them; any it could not seal are listed again.
      const fromScan = sealsOfScan(input.scan, directories, statFree)
      seal = fromScan
      const again = fromScan.missing
      if (again.length > 0) {
        const listed = yield* sealed(
          workspace,
          again.map((i) => directories[i]!),
          statFree,
        )
        // A directory the scan listed that cannot be listed now changed under the capture.
        if (Option.isNone(listed) || (listed.value.failed?.length ?? 0) > 0)
          return unsealed("a directory could not be listed again")
        again.forEach((i, k) => {
          seal.checks.set(
            listed.value.checks.subarray(k * CHECK_BYTES, (k + 1) * CHECK_BYTES),
            i * CHECK_BYTES,
          )
          seal.newestByDirectory[i] = listed.value.newestByDirectory[k]!
        })
      }
    }
    const volatile = racyIndices(seal.newestByDirectory, racyFrom(input), directories.length)
    return yield* storeSeal(check, directories, seal.checks, volatile, storePaths, beyond, names)
  })

/**
 * After a capture of the changes (`sealedCapture.ts`): the seal of its point. The base seal's
 * directories the capture kept (listed at its start: unchanged, or listed again since) keep their
 * checks from that listing, volatile where something in them changed within the racy window; the
 * directories the capture found new follow, volatile (no listing of theirs was taken with the
 * others), so the next capture lists them again. Where it kept all of them and found none new, the
 * seal is stored as a delta over the base's (`encodeDelta`).
 */
export const sealChanges = (
  input: SealInput & {
    readonly changes: SealedChanges
    /** Whether a directory of the base seal is still a sealed directory of this point. */
    readonly keeps: (directory: string) => boolean
  },
): Effect.Effect<SealOutcome, never, ArtifactStore | Workspace> =>
  Effect.gen(function* () {
    const refused = unsealable(input)
    if (refused !== undefined) return refused
    const check = input.check as Extract<SealCheck, { _tag: "Scan" }>
    const { directories, listing, sealed: inSeal } = input.changes
    const from = racyFrom(input)
    const kept: Array<string> = []
    const volatile: Array<number> = []
    const keptAt: Array<number> = []
    for (let i = 0; i < directories.length; i++) {
      if (!input.keeps(directories[i]!)) continue
      if (listing.newestByDirectory[i]! >= from) volatile.push(kept.length)
      kept.push(directories[i]!)
      keptAt.push(i)
    }
    // Every directory the scan listed is kept when the seal has it (`keeps`): the others are new.
    const added = [...input.scan.tree.scopes.keys()].filter((d) => !inSeal.has(d)).sort()
    const checks = new Uint8Array((kept.length + added.length) * CHECK_BYTES)
    keptAt.forEach((i, k) => {
      checks.set(listing.checks.subarray(i * CHECK_BYTES, (i + 1) * CHECK_BYTES), k * CHECK_BYTES)
    })
    for (let k = 0; k < added.length; k++) volatile.push(kept.length + k)
    const storePaths = (yield* sealStatFree).paths
    const same = added.length === 0 && kept.length === directories.length
    return yield* storeSeal(
      check,
      same ? directories : [...kept, ...added],
      checks,
      volatile,
      storePaths,
      // The base's, found unchanged at this capture's start (checkSeal). Where the scan of the
      // changes took one again, it took it as found then; one that changed in between has a stat
      // unlike its check, so the next capture scans in full.
      check.beyond ?? [],
      same ? input.changes.names : undefined,
      same ? input.changes.base : undefined,
    )
  })

/**
 * The seal of `directories` from the scan's own listings (`ScanResult.listingSeals`, when it took
 * them under this `statFree`): the checks and newest ctimes in the order of `directories`, and the
 * indices of those it did not seal (`missing`, every one when it sealed none), for the caller to
 * list. A listing the scan decided by vouches for the point as well as one taken after it: a change
 * after it differs from it.
 */
const sealsOfScan = (scan: ScanResult, directories: ReadonlyArray<string>, statFree: StatFree) => {
  const seals = scan.listingSeals
  const usable =
    seals !== undefined &&
    sameList(seals.statFree.names, statFree.names) &&
    sameList(seals.statFree.paths, statFree.paths)
  const checks = new Uint8Array(directories.length * CHECK_BYTES)
  const newestByDirectory = new BigInt64Array(directories.length)
  const missing: Array<number> = []
  directories.forEach((directory, i) => {
    const sealed = usable ? seals.of(directory) : undefined
    if (sealed === undefined) missing.push(i)
    else {
      checks.set(sealed.check, i * CHECK_BYTES)
      newestByDirectory[i] = sealed.newest
    }
  })
  return { checks, newestByDirectory, missing }
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x, i) => x === b[i])
