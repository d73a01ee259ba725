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
 * The run is a sequence of named steps, each in its own module under `doctor/` and adding to one
 * `Findings`: `checkDatabase`, `checkBlobs`, `checkSessionReferences`, `checkJournal`,
 * `checkArtifactDirectory`. The order matters: the blob step's verified and damaged sets decide
 * what the reference steps call missing.
 *
 * It reports problems and changes nothing, except with `repair`: then it removes what is safe to
 * remove and nothing else, namely temp files of blob writes that were interrupted (older than a
 * grace window, so a put in flight in another process keeps its file). Everything else it finds
 * (a corrupt blob, a missing reference, an incomplete operation) needs a decision a program
 * should not make alone: `recover()` for operations, a backup for lost content.
 */
import { Effect } from "effect"
import { checkArtifactDirectory } from "./doctor/artifactDirectory.js"
import { checkBlobs } from "./doctor/blobs.js"
import { checkDatabase } from "./doctor/database.js"
import { Findings } from "./doctor/findings.js"
import { checkJournal } from "./doctor/journal.js"
import type { DoctorOptions, DoctorReport } from "./doctor/report.js"
import { nativeStatus } from "./doctor/report.js"
import { checkSessionReferences } from "./doctor/sessionReferences.js"

export { storeReadOnly } from "./doctor/database.js"
export {
  DEFAULT_TEMP_GRACE_MS,
  type DoctorNative,
  type DoctorOptions,
  type DoctorProblem,
  type DoctorProblemKind,
  type DoctorReport,
  liveEngineStatus,
  nativeStatus,
} from "./doctor/report.js"

export const runDoctor = (options: DoctorOptions = {}) =>
  Effect.gen(function* () {
    const findings = new Findings()
    const { database, schemaVersion } = yield* checkDatabase(findings)
    const artifacts = yield* checkBlobs(findings, options.onProgress)
    const sessions = yield* checkSessionReferences(findings)
    const journal = yield* checkJournal(findings, sessions.known)
    const { tempFiles, repaired } = yield* checkArtifactDirectory(findings, options)
    const report: DoctorReport = {
      ok: findings.problems.length === 0,
      database,
      schemaVersion,
      artifacts,
      references: {
        sessions: sessions.sessions,
        checked: findings.references,
        releasedPoints: sessions.releasedPoints,
      },
      journal,
      tempFiles,
      problems: findings.problems,
      repaired,
      native: nativeStatus(),
    }
    return report
  })
