/**
 * The journal of a file rewind: before each write, what the file held. It is what compensation
 * replays, in reverse, when a later write fails. This module is the in-memory journal; the
 * interface is kept narrow so a durable journal (written and synced before each file write, read
 * back by `recover()` after a crash) can replace it without touching the programs that use it.
 */
import type { OperationId, WorkspacePath } from "@rewind/contracts"
import { Effect, type Option } from "effect"
import type { WorkspaceFile } from "../ports/Workspace.js"

export interface JournalEntry {
  /** Position of the write in the operation's plan (0-based). */
  readonly step: number
  readonly path: WorkspacePath
  /** What was at the path just before this write; `None` when nothing was. */
  readonly previous: Option.Option<WorkspaceFile>
  /**
   * Directories this write creates (missing just before it), shallowest first: compensation takes
   * away the ones still empty, so a failed restore leaves no trace of itself.
   */
  readonly createdDirectories?: ReadonlyArray<WorkspacePath>
}

export interface FileRewindJournal {
  readonly operationId: OperationId
  /** Called before the write of `entry.step`; the write must not start until this succeeds. */
  readonly record: (entry: JournalEntry) => Effect.Effect<void>
  /** Entries in the order they were recorded. */
  readonly entries: () => Effect.Effect<ReadonlyArray<JournalEntry>>
}

export const makeMemoryJournal = (operationId: OperationId): Effect.Effect<FileRewindJournal> =>
  Effect.sync(() => {
    const entries: Array<JournalEntry> = []
    return {
      operationId,
      record: (entry) => Effect.sync(() => void entries.push(entry)),
      entries: () => Effect.sync(() => [...entries]),
    }
  })
