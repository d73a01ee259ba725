/**
 * What `doctor` reports: the kinds of problem it finds, the options it runs with and the report's
 * shape (part of the public API through `openRewind`), and the fs adapter's native-module status
 * that `doctor` and `status` both show. No checking happens here; see `../doctor.ts` for the steps.
 */
import { NodeWorkspace } from "@rewind/adapter-fs"
import type { ContentHash } from "@rewind/contracts"

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
