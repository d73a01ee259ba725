/**
 * The StoreDoctor port: the host's health check of its store (database integrity, every blob's
 * hash, every reference, the journal, leftover temp files). What it can check depends on where the
 * store lives, so the host that opened the store supplies it (the `rewind` package does, for the
 * embedded default and injected layers); a host without one gets `doctor` refused `unavailable`.
 * Its report is `DoctorReport`, declared here as a Schema. It changes nothing unless `repair` is asked,
 * and then only what is safe to remove.
 */
import { type ArtifactStoreError, ContentHash, type StoreError } from "@rewind/contracts"
import { Context, type Effect, Schema } from "effect"

const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

export const DoctorProblemKind = Schema.Literal(
  "database_integrity",
  "store_read_only",
  "blob_corrupt",
  "blob_unreadable",
  "missing_blob",
  "manifest_unreadable",
  "stream_unreadable",
  "missing_parent",
  "journal_unreadable",
  "incomplete_operation",
  "orphan_temp_file",
  "stray_file",
)

export type DoctorProblemKind = typeof DoctorProblemKind.Type

export const DoctorReport = Schema.Struct({
  ok: Schema.Boolean,
  // The database's own check (StoreIntegrity) and which database it is; absent without that port.
  database: Schema.UndefinedOr(
    Schema.Struct({ kind: Schema.String, ok: Schema.Boolean, problems: Schema.Array(Schema.String) }),
  ),
  schemaVersion: Schema.UndefinedOr(Count),
  artifacts: Schema.Struct({
    checked: Count,
    bytes: Count,
    bad: Schema.Array(Schema.Struct({ hash: ContentHash, problem: Schema.String })),
  }),
  references: Schema.Struct({ sessions: Count, checked: Count, releasedPoints: Count }),
  journal: Schema.Struct({ operations: Count, incomplete: Count }),
  tempFiles: Schema.Struct({ orphans: Count, removed: Count, inFlight: Count }),
  problems: Schema.Array(
    Schema.Struct({
      kind: DoctorProblemKind,
      subject: Schema.String,
      message: Schema.String,
      repairable: Schema.Boolean,
    }),
  ),
  repaired: Schema.Array(Schema.String),
  native: Schema.Struct({
    loaded: Schema.Boolean,
    path: Schema.NullOr(Schema.String),
    scanner: Schema.Literal("native", "javascript"),
    fileOperations: Schema.Literal("kernel-confined", "checked"),
    /** Where a capture's bulk reads and their hashing run. */
    reads: Schema.Literal("native-thread", "main-thread"),
    warning: Schema.NullOr(Schema.String),
  }),
})
export type DoctorReport = typeof DoctorReport.Type

export interface StoreDoctorOptions {
  /** Remove what is safe to remove (orphan temp files). Default false: report only. */
  readonly repair?: boolean
  /** Temp files younger than this are a write in flight, not an orphan. */
  readonly tempGraceMs?: number
  /** Called with the number of items checked so far. */
  readonly onProgress?: (checked: number) => void
}

export interface StoreDoctorService {
  readonly check: (
    options: StoreDoctorOptions,
  ) => Effect.Effect<DoctorReport, StoreError | ArtifactStoreError>
}

export class StoreDoctor extends Context.Tag("@rewind/core/StoreDoctor")<StoreDoctor, StoreDoctorService>() {}
