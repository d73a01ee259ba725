/**
 * The versions a durable restore journals for each target, stored by content before the journal's
 * intent: what the target holds now (its rescue version, read once unless the caller already has
 * it) and what it will hold (its planned version, not stored again when the plan carries its
 * hash). Writes are first reduced to one per path (`finalWrites`), so a crash never leaves a file
 * holding a version that is neither the rescue nor the planned one. Each write then checks that the
 * file still holds its rescue version, so the journal never promises a rescue copy of content that
 * was not what got overwritten.
 */
import type { FileVersion, JournaledFile, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import type { WorkspaceFile } from "../ports/Workspace.js"
import type { PlannedWrite } from "./journaledWrites.js"
import { readTarget } from "./targetRead.js"

/** File versions for several contents in hand, their blobs stored in one batch. */
export const storeVersions = (
  versions: ReadonlyArray<{ readonly content: Uint8Array | null; readonly mode: number | undefined }>,
) =>
  Effect.gen(function* () {
    const present = versions.flatMap((v) => (v.content === null ? [] : [v.content]))
    const hashes = [...(yield* (yield* ArtifactStore).putMany(present))]
    return versions.map(({ content, mode }): FileVersion => {
      if (content === null) return { _tag: "absent" }
      const hash = hashes.shift()!
      return mode === undefined ? { _tag: "present", hash } : { _tag: "present", hash, mode }
    })
  })

/**
 * One write per path, at the position of its first write, with its final content (and the mode
 * that content ends up with, and the expectation of its first write). Writing intermediate
 * versions (a cascade peeling several edits of one file) would leave a file, after a crash
 * between them, holding a version that is neither the rescue nor the planned one, which recovery
 * could then neither continue nor roll back.
 */
export const finalWrites = (writes: ReadonlyArray<PlannedWrite>): ReadonlyArray<PlannedWrite> => {
  const byPath = new Map<
    WorkspacePath,
    { first: PlannedWrite; last: PlannedWrite; mode: number | undefined }
  >()
  for (const w of writes) {
    const seen = byPath.get(w.path)
    // A delete resets the mode; a write without one keeps what the file had.
    const mode = w.content === null ? undefined : (w.mode ?? seen?.mode)
    byPath.set(w.path, { first: seen?.first ?? w, last: w, mode })
  }
  return [...byPath.values()].map(({ first, last, mode }) => ({
    path: last.path,
    content: last.content,
    ...(mode === undefined || last.content === null ? {} : { mode }),
    ...(first.expectedCurrentHash === undefined ? {} : { expectedCurrentHash: first.expectedCurrentHash }),
    ...(last.storedHash === undefined || last.content === null ? {} : { storedHash: last.storedHash }),
  }))
}

/**
 * The journaled versions of `writes` (`files`) and the writes that check each target still holds
 * its rescue version (`checkedWrites`); `Unreadable` when a target cannot be read, before anything
 * is stored. `unlinking`: paths where a link stands that the restore removes, which hold no file.
 */
export const journaledVersions = (
  given: ReadonlyMap<WorkspacePath, FileVersion> | undefined,
  writes: ReadonlyArray<PlannedWrite>,
  paths: ReadonlyArray<WorkspacePath>,
  unlinking: ReadonlySet<WorkspacePath>,
) =>
  Effect.gen(function* () {
    // The rescue point: every target's current content, read once (unless the caller already has)
    // and stored by content.
    const rescued = given ?? new Map<WorkspacePath, FileVersion>()
    const current = new Map<WorkspacePath, Option.Option<WorkspaceFile>>()
    for (const path of paths) {
      if (rescued.has(path)) continue
      if (unlinking.has(path)) {
        current.set(path, Option.none())
        continue
      }
      const read = yield* Effect.either(readTarget(path))
      if (Either.isLeft(read)) {
        return {
          _tag: "Unreadable",
          step: paths.indexOf(path),
          path,
          message: `cannot restore ${path}: ${read.left.message}`,
        } as const
      }
      current.set(path, read.right)
    }
    // Each version is either known (given, or planned content from the store) or still to be
    // stored: those go in one batch (one transaction where the store has them).
    const toStore: Array<{ readonly content: Uint8Array | null; readonly mode: number | undefined }> = []
    const pending = (content: Uint8Array | null, mode: number | undefined): number =>
      toStore.push({ content, mode }) - 1
    const sources = writes.map((w) => {
      const given = rescued.get(w.path)
      const now = current.get(w.path) ?? Option.none()
      const currentMode =
        given === undefined
          ? Option.getOrUndefined(Option.map(now, (f) => f.mode))
          : given._tag === "present"
            ? given.mode
            : undefined
      // A write without a mode keeps the file's own, so that is its planned mode.
      const plannedMode = w.content === null ? undefined : (w.mode ?? currentMode)
      const rescue: FileVersion | number =
        given ?? pending(Option.match(now, { onNone: () => null, onSome: (f) => f.content }), currentMode)
      const planned: FileVersion | number =
        w.content === null || w.storedHash === undefined
          ? pending(w.content, plannedMode)
          : plannedMode === undefined
            ? { _tag: "present", hash: w.storedHash }
            : { _tag: "present", hash: w.storedHash, mode: plannedMode }
      return { rescue, planned }
    })
    const stored = toStore.length === 0 ? [] : yield* storeVersions(toStore)
    const resolve = (v: FileVersion | number): FileVersion => (typeof v === "number" ? stored[v]! : v)
    const files: Array<JournaledFile> = writes.map((w, i) => ({
      path: w.path,
      rescue: resolve(sources[i]!.rescue),
      planned: resolve(sources[i]!.planned),
    }))
    // Each write first checks the file still holds its rescue version: what the journal can put back.
    const checkedWrites = writes.map((w, i): PlannedWrite => {
      if (w.expectedCurrentHash !== undefined) return w
      const rescue = files[i]!.rescue
      return { ...w, expectedCurrentHash: rescue._tag === "present" ? rescue.hash : null }
    })
    return { _tag: "Versions", files, checkedWrites } as const
  })
