/**
 * The store health check behind `Rewind.doctor` and `rewind doctor`.
 *
 * It verifies, in order: the database's own integrity and the schema version, through the
 * StoreIntegrity port of whichever SQL adapter provides the session store (SQLite's
 * `integrity_check`, PostgreSQL's streams against their events; a store without the port, the
 * in-memory one, has no database section), and that this process can write it (SQLite opens a
 * read-only file without a word, and every capture then fails);
 * every blob, re-hashed against its address; every reference the session streams and the
 * operation journal hold (checkpoints' before/after/patch content, points' manifests, stat caches
 * and the files the manifests list, write-intent pre-images, journaled rescue and planned
 * versions, each child session's parent); that every stream still decodes; operations begun and
 * never completed; and, for the embedded default, leftover files in the artifact directory. It
 * also says whether the fs adapter's native module loaded (fast scans, kernel-confined file
 * operations), and warns with the reason when it did not: that fallback is never silent.
 *
 * What is live follows the collector (core's pointGc.ts): every checkpoint, write intent and journal
 * entry a redo or recover may use, each session's newest stat cache (older ones are garbage by
 * design), and each session's newest point of each kind (retention never releases it). The content
 * of an older point may be gone because a `cleanup` with retention released it — the collector
 * keeps its manifest and drops what only it held, and records nothing else — so a missing blob that
 * only such a point needs is counted in `references.releasedPoints`, not reported as a problem
 * (restoring such a point is refused as unreadable). Its manifest missing is still a problem. The
 * price: content lost by other means from an older point is counted there too, never hidden as
 * healthy content; see docs/reliability.md.
 *
 * It reports problems and changes nothing, except with `repair`: then it removes what is safe to
 * remove and nothing else, namely temp files of blob writes that were interrupted (older than a
 * grace window, so a put in flight in another process keeps its file). Everything else it finds
 * (a corrupt blob, a missing reference, an incomplete operation) needs a decision a program
 * should not make alone: `recover()` for operations, a backup for lost content.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeWorkspace } from "@rewind/adapter-fs"
import type { ContentHash, FileVersion, SessionId } from "@rewind/contracts"
import {
  ArtifactStore,
  loadManifest,
  manifestBlobs,
  OperationJournal,
  SessionStore,
  StoreIntegrity,
} from "@rewind/core"
import { Clock, Effect, Either, Option, Stream } from "effect"

/** What kind of problem a finding is; `repairable` ones are what `repair` removes. */
export type DoctorProblemKind =
  | "database_integrity"
  | "store_read_only"
  | "blob_corrupt"
  | "blob_unreadable"
  | "missing_blob"
  | "manifest_unreadable"
  | "stream_unreadable"
  | "missing_parent"
  | "journal_unreadable"
  | "incomplete_operation"
  | "orphan_temp_file"
  | "stray_file"

export interface DoctorProblem {
  readonly kind: DoctorProblemKind
  /** What the problem is about: a hash, a session id, an operation id, a file path. */
  readonly subject: string
  readonly message: string
  /** True when `repair` may fix it (and, in a repairing run, did unless `repaired` says otherwise). */
  readonly repairable: boolean
}

export interface DoctorOptions {
  /** Remove what is safe to remove (orphan temp files). Default false: report only. */
  readonly repair?: boolean
  /**
   * Temp files younger than this are a write in flight, not an orphan (another process may be
   * about to rename one into place). Default 10 minutes.
   */
  readonly tempGraceMs?: number
  /** The embedded default's artifact directory, for the leftover-file checks; absent for injected layers. */
  readonly artifactsDirectory?: string
  readonly onProgress?: (checked: number) => void
}

export const DEFAULT_TEMP_GRACE_MS = 10 * 60 * 1000

export interface DoctorReport {
  /** True when no problem is left (repaired ones do not count). */
  readonly ok: boolean
  /**
   * The database's own check through the StoreIntegrity port (SQLite: `integrity_check` and
   * `foreign_key_check`; PostgreSQL: streams against their events), with which database it is;
   * absent when the store provides no such port (the in-memory one).
   */
  readonly database:
    | { readonly kind: string; readonly ok: boolean; readonly problems: ReadonlyArray<string> }
    | undefined
  /** The store's schema version (a newer store than this build is refused on open); absent without the port. */
  readonly schemaVersion: number | undefined
  readonly artifacts: {
    readonly checked: number
    readonly bytes: number
    /** Blobs whose bytes no longer hash to their address, or that could not be read. */
    readonly bad: ReadonlyArray<{ readonly hash: ContentHash; readonly problem: string }>
  }
  readonly references: {
    readonly sessions: number
    /** References from streams and journal entries to blobs and parent sessions that were followed. */
    readonly checked: number
    /**
     * Points (not a session's newest of their kind) some of whose content is gone, as a cleanup
     * with retention leaves the points it released: their manifests remain, restoring them is refused.
     */
    readonly releasedPoints: number
  }
  readonly journal: { readonly operations: number; readonly incomplete: number }
  /** Temp files in the artifact directory: orphans found, removed by `repair`, and young ones left alone. */
  readonly tempFiles: { readonly orphans: number; readonly removed: number; readonly inFlight: number }
  /** Every problem left after the run (repaired ones excluded). */
  readonly problems: ReadonlyArray<DoctorProblem>
  /** What `repair` did: one line per removed file. */
  readonly repaired: ReadonlyArray<string>
  /** The fs adapter's native module on this machine (not a problem when missing: a warning). */
  readonly native: DoctorNative
}

export interface DoctorNative {
  readonly loaded: boolean
  /** Where it was loaded from. */
  readonly path: string | null
  readonly scanner: "native" | "javascript"
  /** `kernel-confined`: through directory descriptors opened beneath the root; `checked`: re-checked paths. */
  readonly fileOperations: "kernel-confined" | "checked"
  /** Why it did not load and what that costs; null when it did. */
  readonly warning: string | null
}

/** Whether the fs adapter's native module loaded here, and what its absence costs (doctor and status). */
export const nativeStatus = (): DoctorNative => {
  const { nativeModule, scanner, fileOperations } = NodeWorkspace.implementation
  return nativeModule.loaded
    ? { loaded: true, path: nativeModule.path, scanner, fileOperations, warning: null }
    : {
        loaded: false,
        path: null,
        scanner,
        fileOperations,
        warning: `the native module (@rewind/adapter-fs dirscan.node) did not load: ${nativeModule.reason}. Scans use the slower JavaScript scanner, and file operations are re-checked before each system call rather than confined by the kernel (reinstall with a C compiler, python3 and make to build it)`,
      }
}

const TEMP_NAME = /^\..*\.tmp$/
const SHARD = /^[0-9a-f]{2}$/
const REST = /^[0-9a-f]{62}$/

interface TempScan {
  readonly orphans: ReadonlyArray<string>
  readonly inFlight: number
  readonly stray: ReadonlyArray<string>
}

/**
 * Leftover files in an FsArtifactStore directory: temp files under `tmp/` (and temp-named files in
 * a shard, from older layouts) split by age, and files in `objects/` that are not blobs.
 */
const scanArtifactDirectory = (directory: string, now: number, graceMs: number): TempScan => {
  const orphans: Array<string> = []
  const stray: Array<string> = []
  let inFlight = 0
  const consider = (file: string) => {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile()) return
    if (now - stat.mtimeMs >= graceMs) orphans.push(file)
    else inFlight++
  }
  const list = (dir: string) => {
    try {
      return fs.readdirSync(dir)
    } catch {
      return []
    }
  }
  const temp = path.join(directory, "tmp")
  for (const name of list(temp)) consider(path.join(temp, name))
  const objects = path.join(directory, "objects")
  for (const shard of list(objects)) {
    const shardDir = path.join(objects, shard)
    if (!SHARD.test(shard)) {
      stray.push(shardDir)
      continue
    }
    for (const name of list(shardDir)) {
      if (REST.test(name)) continue
      if (TEMP_NAME.test(name)) consider(path.join(shardDir, name))
      else stray.push(path.join(shardDir, name))
    }
  }
  return { orphans, inFlight, stray }
}

const versionHash = (v: FileVersion | undefined): ContentHash | undefined =>
  v?._tag === "present" ? v.hash : undefined

export const runDoctor = (options: DoctorOptions = {}) =>
  Effect.gen(function* () {
    const problems: Array<DoctorProblem> = []
    const problem = (kind: DoctorProblemKind, subject: string, message: string, repairable = false) =>
      problems.push({ kind, subject, message, repairable })

    // --- the database ------------------------------------------------------------------
    const integrity = yield* Effect.serviceOption(StoreIntegrity)
    // A damaged file can make the check itself fail (SQLITE_CORRUPT): that is a finding, not a crash.
    const database = Option.isSome(integrity)
      ? yield* integrity.value.check.pipe(
          Effect.catchAll((error) => Effect.succeed({ ok: false, problems: [error.message] })),
        )
      : undefined
    for (const p of database?.problems ?? []) problem("database_integrity", "database", p)
    const readOnly = Option.isSome(integrity) ? yield* integrity.value.readOnly : undefined
    if (Option.isSome(integrity) && readOnly !== undefined) {
      problem("store_read_only", integrity.value.location, readOnly)
    }

    // --- every blob ----------------------------------------------------------------------
    const artifacts = yield* ArtifactStore
    const bad: Array<{ hash: ContentHash; problem: string }> = []
    const verified = new Set<ContentHash>()
    const damaged = new Set<ContentHash>()
    let checked = 0
    let bytes = 0
    const listed = yield* artifacts.list().pipe(
      Stream.runForEach((info) =>
        artifacts.get(info.hash).pipe(
          Effect.match({
            onFailure: (error) => {
              const message = `${error._tag}: ${error.message}`
              bad.push({ hash: info.hash, problem: message })
              damaged.add(info.hash)
              problem(
                error._tag === "ArtifactCorrupt" ? "blob_corrupt" : "blob_unreadable",
                info.hash,
                message,
              )
            },
            onSuccess: (content) => {
              bytes += content.byteLength
              verified.add(info.hash)
            },
          }),
          Effect.tap(() => {
            checked++
            options.onProgress?.(checked)
          }),
        ),
      ),
      Effect.either,
    )
    if (Either.isLeft(listed)) {
      problem("blob_unreadable", "artifacts", `the artifact store cannot be listed: ${listed.left.message}`)
    }

    // --- references ----------------------------------------------------------------------
    let references = 0
    const reported = new Set<string>()
    const isMissing = (hash: ContentHash) => !verified.has(hash) && !damaged.has(hash)
    const needBlob = (hash: ContentHash | undefined, from: string) => {
      if (hash === undefined) return
      references++
      // A corrupt blob is already reported as such; only a blob that is not there at all is missing.
      if (verified.has(hash) || damaged.has(hash)) return
      const key = `${hash}\u0000${from}`
      if (reported.has(key)) return
      reported.add(key)
      problem("missing_blob", hash, `${from} refers to blob ${hash}, which is not in the artifact store`)
    }
    const store = yield* SessionStore
    const listedSessions = yield* Effect.either(store.listSessions())
    if (Either.isLeft(listedSessions)) {
      problem(
        "stream_unreadable",
        "sessions",
        `the sessions cannot be listed: ${listedSessions.left.message}`,
      )
    }
    const sessions = Either.getOrElse(listedSessions, () => [])
    const known = new Set<SessionId>(sessions.map((s) => s.sessionId))
    const manifestsSeen = new Set<ContentHash>()
    const manifestContent = new Map<ContentHash, ReadonlyArray<ContentHash> | "unreadable">()
    let releasedPoints = 0
    for (const session of sessions) {
      if (session.parentId !== undefined) {
        references++
        if (!known.has(session.parentId)) {
          problem(
            "missing_parent",
            session.sessionId,
            `session ${session.sessionId} names ${session.parentId} as its parent, which is not in the store`,
          )
        }
      }
      const events = yield* Effect.either(store.read(session.sessionId))
      if (Either.isLeft(events)) {
        problem(
          "stream_unreadable",
          session.sessionId,
          `the events of session ${session.sessionId} cannot be read: ${events.left.message}`,
        )
        continue
      }
      // The newest point of each kind and the newest turn point's stat cache are live whatever
      // retention a cleanup used; older points may have been released.
      const newestOfKind = new Map<string, string>()
      let latestStatCache: ContentHash | undefined
      for (const { event } of events.right) {
        if (event._tag !== "PointCaptured") continue
        newestOfKind.set(event.kind, event.pointId)
        if (event.kind === "turn") latestStatCache = event.statCacheHash
      }
      for (const { event } of events.right) {
        if (event._tag === "CheckpointCreated") {
          const c = event.checkpoint
          const from = `checkpoint ${c.checkpointId} of session ${session.sessionId}`
          needBlob(versionHash(c.before), from)
          needBlob(versionHash(c.after), from)
          needBlob(c.patchHash, from)
        } else if (event._tag === "PointCaptured") {
          const from = `point ${event.pointId} of session ${session.sessionId}`
          const live = newestOfKind.get(event.kind) === event.pointId
          needBlob(event.manifestHash, from)
          if (event.statCacheHash === latestStatCache) needBlob(event.statCacheHash, from)
          if (!verified.has(event.manifestHash)) continue
          // An unchanged workspace reuses the previous manifest: read each one once.
          let content = manifestContent.get(event.manifestHash)
          if (content === undefined) {
            const manifest = yield* Effect.either(loadManifest(event.manifestHash))
            if (Either.isLeft(manifest)) {
              problem("manifest_unreadable", event.manifestHash, `${from}: ${manifest.left.message}`)
              content = "unreadable"
            } else {
              content = [...manifestBlobs(manifest.right)]
            }
            manifestContent.set(event.manifestHash, content)
          }
          if (content === "unreadable") continue
          if (!live && content.some(isMissing)) {
            // Released by retention (or lost): its content is not required; see the module comment.
            releasedPoints++
            references += content.length
            continue
          }
          if (manifestsSeen.has(event.manifestHash)) continue
          manifestsSeen.add(event.manifestHash)
          for (const hash of content) needBlob(hash, `the manifest of ${from}`)
        } else if (event._tag === "WriteIntentDeclared") {
          for (const e of event.entries) {
            if (e.preImage.state === "file")
              needBlob(e.preImage.hash, `a write intent of session ${session.sessionId}`)
          }
        }
      }
    }

    // --- the operation journal -----------------------------------------------------------
    const journal = yield* Effect.serviceOption(OperationJournal)
    let operations = 0
    let incomplete = 0
    if (Option.isSome(journal)) {
      const scanned = yield* Effect.either(journal.value.scan("all"))
      if (Either.isLeft(scanned)) {
        problem(
          "journal_unreadable",
          "journal",
          `the operation journal cannot be read: ${scanned.left.message}`,
        )
      } else {
        // A damaged row is named; the others are still checked.
        for (const row of scanned.right.damaged) {
          if (row.status === "pending") incomplete++
          problem("journal_unreadable", row.operationId, row.problem)
        }
        operations = scanned.right.records.length + scanned.right.damaged.length
        for (const record of scanned.right.records) {
          const { intent } = record
          // Content a pending operation or an available redo entry still needs must be there.
          const live = record.status === "pending" || (intent.redo !== undefined && !record.redoConsumed)
          if (live) {
            for (const f of intent.files) {
              const from = `operation ${intent.operationId} (${f.path})`
              needBlob(versionHash(f.rescue), from)
              needBlob(versionHash(f.planned), from)
            }
          }
          if (!known.has(intent.sessionId)) {
            problem(
              "missing_parent",
              intent.operationId,
              `operation ${intent.operationId} belongs to session ${intent.sessionId}, which is not in the store`,
            )
          }
          if (record.status === "pending") {
            incomplete++
            problem(
              "incomplete_operation",
              intent.operationId,
              `operation ${intent.operationId} (${intent.kind}, ${intent.files.length} file(s)) was begun and never completed: each of its files may hold its rescue or its planned version; run recover() to continue or roll it back`,
            )
          }
        }
      }
    }

    // --- leftover files in the artifact directory --------------------------------------
    const repaired: Array<string> = []
    let tempFiles = { orphans: 0, removed: 0, inFlight: 0 }
    if (options.artifactsDirectory !== undefined) {
      const now = yield* Clock.currentTimeMillis
      const scan = scanArtifactDirectory(
        options.artifactsDirectory,
        now,
        options.tempGraceMs ?? DEFAULT_TEMP_GRACE_MS,
      )
      let removed = 0
      for (const file of scan.orphans) {
        if (options.repair === true) {
          const outcome = yield* Effect.either(Effect.try(() => fs.unlinkSync(file)))
          if (Either.isRight(outcome)) {
            removed++
            repaired.push(`removed orphan temp file ${file}`)
            continue
          }
        }
        problem("orphan_temp_file", file, `${file} is a temp file of a blob write that never finished`, true)
      }
      for (const file of scan.stray) {
        problem("stray_file", file, `${file} is in the blob directory but is not a blob; it was left alone`)
      }
      tempFiles = { orphans: scan.orphans.length, removed, inFlight: scan.inFlight }
    }

    const report: DoctorReport = {
      ok: problems.length === 0,
      database:
        Option.isNone(integrity) || database === undefined
          ? undefined
          : { kind: integrity.value.kind, ok: database.ok, problems: database.problems },
      schemaVersion: Option.isSome(integrity) ? integrity.value.schemaVersion : undefined,
      artifacts: { checked, bytes, bad },
      references: { sessions: sessions.length, checked: references, releasedPoints },
      journal: { operations, incomplete },
      tempFiles,
      problems,
      repaired,
      native: nativeStatus(),
    }
    return report
  })

/** Why the store in context cannot be written now (stores with a StoreIntegrity port), for the CLI's warning. */
export const storeReadOnly: Effect.Effect<string | undefined> = Effect.flatMap(
  Effect.serviceOption(StoreIntegrity),
  Option.match({ onNone: () => Effect.succeed(undefined), onSome: (store) => store.readOnly }),
)
