/**
 * "This turn's changes": the table a UI shows beside its undo button, one row per file with the
 * lines added and removed. It is derived from the session's events (checkpoints, minus those whose
 * undo was applied), so it is the same after a reopen and rebuilt by any rewind.
 */
import type { CheckpointId, SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import { Effect } from "effect"
import { branchView } from "../session/branchView.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { FileRewindSettings, type FileRewindSettingsValue, isShellLikeTool } from "./fileRewindSettings.js"

export interface TurnFileChange {
  readonly path: WorkspacePath
  /** Summed over the turn's live edits of the file (an edit of an edited line counts twice). */
  readonly linesAdded: number
  readonly linesRemoved: number
  /** The turn's live checkpoints of this file, oldest first. */
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  readonly toolNames: ReadonlyArray<string>
  /** The file did not exist before the turn's first change to it. */
  readonly created: boolean
  /** The turn's last change deleted it. */
  readonly deleted: boolean
  /** Every change came from a shell-like tool, which an undo leaves alone. */
  readonly shellOnly: boolean
}

export interface TurnFileChanges {
  readonly turnId: TurnId
  /** Files in the order the turn first changed them. */
  readonly files: ReadonlyArray<TurnFileChange>
  readonly linesAdded: number
  readonly linesRemoved: number
}

export const turnFileChanges = (
  state: SessionState,
  turnId: TurnId,
  settings: FileRewindSettingsValue,
): TurnFileChanges => {
  const rows = new Map<
    WorkspacePath,
    {
      linesAdded: number
      linesRemoved: number
      checkpointIds: Array<CheckpointId>
      toolNames: Set<string>
      created: boolean
      deleted: boolean
      shellOnly: boolean
    }
  >()
  for (const c of state.checkpoints) {
    if (c.turnId !== turnId || state.spentCheckpointIds.has(c.checkpointId)) continue
    let row = rows.get(c.path)
    if (row === undefined) {
      row = {
        linesAdded: 0,
        linesRemoved: 0,
        checkpointIds: [],
        toolNames: new Set(),
        created: c.before._tag === "absent",
        deleted: false,
        shellOnly: true,
      }
      rows.set(c.path, row)
    }
    row.linesAdded += c.linesAdded
    row.linesRemoved += c.linesRemoved
    row.checkpointIds.push(c.checkpointId)
    row.toolNames.add(c.toolName)
    row.deleted = c.after?._tag === "absent"
    row.shellOnly = row.shellOnly && isShellLikeTool(settings, c.toolName)
  }
  const files = [...rows].map(([path, r]) => ({ path, ...r, toolNames: [...r.toolNames] }))
  return {
    turnId,
    files,
    linesAdded: files.reduce((n, f) => n + f.linesAdded, 0),
    linesRemoved: files.reduce((n, f) => n + f.linesRemoved, 0),
  }
}

/** The change table of a turn; by default the last turn on the active branch. */
export const getTurnFileChanges = (sessionId: SessionId, turnId?: TurnId) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const settings = yield* FileRewindSettings
    const id = turnId ?? branchView(state).turnIds.at(-1)
    if (id === undefined) return undefined
    return turnFileChanges(state, id, settings)
  })
