/**
 * The WorkspaceChanges port: "what changed in the workspace since my last sync", from a watcher a
 * long-running host keeps (the live engine). Optional: a capture without it scans the whole tree,
 * exactly as before; with it, a repeat capture re-examines only the paths the watcher names.
 *
 * Correctness before speed: an adapter answers `Unknown` whenever it cannot vouch for a complete
 * change set — overflow, an error, a restart, a path it cannot see, a flush that did not come
 * back — and the capture then scans in full. It never answers a partial set as `Changed`.
 *
 * A cursor is an opaque position in the adapter's change log. `changesSince(c)` first flushes the
 * watcher (a barrier: every change made before the call began has been delivered), then answers
 * every path changed after `c` and the cursor of now. A path is relative to the workspace root,
 * `/`-separated: a file, link or directory that was created, modified, removed or renamed (a
 * rename names both sides). A named directory means "everything below it may have changed".
 */
import { Context, type Effect } from "effect"

export type ChangeCursor = number

export type WorkspaceChangeSet =
  | {
      readonly _tag: "Changed"
      /** The cursor of this answer: pass it to the next call. */
      readonly cursor: ChangeCursor
      /** Paths changed after the cursor given (repeats possible). */
      readonly paths: ReadonlyArray<string>
    }
  | {
      readonly _tag: "Unknown"
      /** A cursor to sync from after a full scan that begins now; undefined when none can be given. */
      readonly cursor: ChangeCursor | undefined
      /** Why the change set is not known (a person reads it in `status`/`doctor`). */
      readonly reason: string
    }

/** How the last capture went: from the change set ("watched"), or a full scan and why. */
export interface LastCapture {
  readonly mode: "watched" | "full"
  readonly reason?: string
}

/** Whether the watcher is running, and why not when it is not. */
export type WatcherStatus =
  | {
      readonly active: true
      readonly backend: string
      readonly watchedDirectories: number
      readonly lastCapture?: LastCapture
    }
  | { readonly active: false; readonly reason: string; readonly lastCapture?: LastCapture }

export interface WorkspaceChangesService {
  /** Flushes the watcher, then answers what changed after `since` (never fails: doubt is `Unknown`). */
  readonly changesSince: (since: ChangeCursor | undefined) => Effect.Effect<WorkspaceChangeSet>
  readonly status: Effect.Effect<WatcherStatus>
  /**
   * Directory names the watcher does not watch (at any depth). A capture never trusts the change
   * set for a tree where such a directory is in scope (a `!` rule re-included it).
   */
  readonly unwatchedNames: ReadonlySet<string>
  /** Told how each capture went ("watched": from the change set), for status and doctor to report. */
  readonly noteCapture: (mode: "watched" | "full", reason?: string) => Effect.Effect<void>
}

export class WorkspaceChanges extends Context.Tag("@rewind/core/WorkspaceChanges")<
  WorkspaceChanges,
  WorkspaceChangesService
>() {}
