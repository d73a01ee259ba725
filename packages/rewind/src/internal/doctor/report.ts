/**
 * What `doctor` reports: the kinds of problem it finds, the options it runs with and the report's
 * shape (part of the public API through `openRewind`), and the fs adapter's native-module status
 * that `doctor` and `status` both show. No checking happens here; see `../doctor.ts` for the steps.
 */
import { NodeWorkspace, WorkspaceWatcher } from "@rewind/adapter-fs"
import type {
  DoctorProblemKind as CoreDoctorProblemKind,
  DoctorReport as CoreDoctorReport,
} from "@rewind/core"

/** The report's kinds of problem, a finding, and the report: one definition, core's StoreDoctor Schema. */
export type DoctorProblemKind = CoreDoctorProblemKind
export type DoctorProblem = CoreDoctorReport["problems"][number]

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

export type DoctorReport = CoreDoctorReport

export interface DoctorNative {
  readonly loaded: boolean
  /** Where it was loaded from. */
  readonly path: string | null
  readonly scanner: "native" | "javascript"
  /** `kernel-confined`: through directory descriptors opened beneath the root; `checked`: re-checked paths. */
  readonly fileOperations: "kernel-confined" | "checked"
  /** Where a capture's bulk reads (and their hashing) run: a native pool thread, or the main thread. */
  readonly reads: "native-thread" | "main-thread"
  /** Why it did not load (or its reads run on the main thread) and what that costs; null when all is well. */
  readonly warning: string | null
}

/** Whether the fs adapter's native module loaded here, and what its absence costs (doctor and status). */
export const nativeStatus = (): DoctorNative => {
  const { nativeModule, scanner, fileOperations, reads, readsReason } = NodeWorkspace.implementation
  return nativeModule.loaded
    ? {
        loaded: true,
        path: nativeModule.path,
        scanner,
        fileOperations,
        reads,
        warning:
          reads === "native-thread"
            ? null
            : `a capture's reads and hashing run on the main thread (${readsReason ?? "unknown reason"}), so a large first capture is slower`,
      }
    : {
        loaded: false,
        path: null,
        scanner,
        fileOperations,
        reads,
        warning: `the native module (@rewind/adapter-fs dirscan.node) did not load: ${nativeModule.reason}. Scans use the slower JavaScript scanner, and file operations are re-checked before each system call rather than confined by the kernel (reinstall with a C compiler, python3 and make to build it)`,
      }
}

/**
 * Whether the live engine's watcher can run on this machine (doctor shows it; a one-shot command
 * never runs it, `rewind serve` and `openRewind({ live: true })` do).
 */
export const liveEngineStatus = (): { readonly available: boolean; readonly detail: string } => {
  const backend = WorkspaceWatcher.inotifyBackend
  return "unavailable" in backend
    ? {
        available: false,
        detail: `no workspace watcher here: ${backend.unavailable}; rewind serve and live hosts scan the whole tree on every capture`,
      }
    : {
        available: true,
        detail: `${backend.name} watcher available (rewind serve and openRewind({ live: true }) run it; not this one-shot command)`,
      }
}
